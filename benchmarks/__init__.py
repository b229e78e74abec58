"""Performance measurements (not tests): each module has main() and writes benchmarks/results/NAME.json.

Every benchmark takes ``--smoke`` (tiny sizes, seconds, nothing written under ``results/``: the test suite
runs it so that a broken benchmark fails CI) and prints one ``goal:`` line: its headline figure against a
baseline measured in the same run, or against the stated target, with the machine's load beside it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rwpost.io import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def arguments(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's command line: ``--help`` prints its docstring and exits, an unknown option is refused
    (exit 2) before anything is measured, and ``--smoke`` is there."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, seconds; checks that it runs, writes no results"
    )
    return parser


def no_options(doc: str | None, argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of a benchmark whose only option is ``--smoke``."""
    return arguments(doc).parse_args(argv or [])


def load() -> float:
    """The 1-minute load average: the machine may be shared, so each figure is reported beside it."""
    return round(os.getloadavg()[0], 2)


def goal(text: str, load_before: float) -> str:
    """Print (and return) the benchmark's one ``goal:`` line, with the load before and after the run."""
    line = f"goal: {text} [load {load_before} -> {load()}]"
    print(line)
    return line


def save(path: Path, result: dict[str, Any], smoke: bool) -> None:
    """Write a benchmark's results file, except on a smoke run (whose sizes say nothing)."""
    if smoke:
        print(f"smoke run: {path.name} not written")
        return
    write_json(path, result)
    print(f"wrote {path}")
