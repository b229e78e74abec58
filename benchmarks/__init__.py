"""Performance measurements (not tests): each module has main() and writes benchmarks/results/NAME.json."""

from __future__ import annotations

import argparse


def no_options(doc: str | None, argv: list[str] | None = None) -> None:
    """The command line of a benchmark that takes no options: ``--help`` prints its docstring and exits,
    anything else is refused (exit 2) before the measurement starts."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
