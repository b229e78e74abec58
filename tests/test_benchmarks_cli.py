"""Every benchmark explains itself: ``python -m benchmarks.NAME --help`` prints its usage and exits 0
without measuring anything (no results file written), and an unknown option is refused with exit 2.
Every benchmark runs: its ``--smoke`` path, run here, takes seconds and must exit 0."""

from __future__ import annotations

import os
import pkgutil
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(m.name for m in pkgutil.iter_modules([str(ROOT / "benchmarks")]) if not m.name.startswith("_"))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def _run_as_main(name: str, option: str, capsys) -> tuple[object, str, str]:
    """``python -m benchmarks.NAME OPTION`` in this process (its ``__main__`` block, as ``-m`` runs it,
    without a Python start and imports per call): the exit code, stdout and stderr."""
    capsys.readouterr()
    module = f"benchmarks.{name}"
    saved, imported = sys.argv, sys.modules.pop(module, None)  # as a fresh `-m` run: not imported yet
    sys.argv = [module, option]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = None
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.argv = saved
        if imported is not None:
            sys.modules[module] = imported
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", NAMES)
def test_benchmark_help_and_bad_option(name, capsys):
    results = ROOT / "benchmarks" / "results"
    before = {p: p.stat().st_mtime_ns for p in results.glob("*")} if results.exists() else {}
    code, out, err = _run_as_main(name, "--help", capsys)
    assert code in (0, None), err
    assert out.startswith("usage:")
    code, _, err = _run_as_main(name, "--no-such-option", capsys)
    assert code == 2 and "unrecognized arguments: --no-such-option" in err
    after = {p: p.stat().st_mtime_ns for p in results.glob("*")} if results.exists() else {}
    assert after == before  # nothing measured, nothing written


def test_every_benchmark_runs_its_smoke_path():
    """``python -m benchmarks --smoke`` runs every benchmark at tiny sizes in one process: all exit 0, each
    prints its ``goal:`` line, and none writes its results file (a smoke run's sizes say nothing)."""
    results = ROOT / "benchmarks" / "results"
    before = {p: p.stat().st_mtime_ns for p in results.glob("*")}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    sections = done.stdout.split("== benchmarks.")[1:]
    assert [section.split()[0] for section in sections] == NAMES
    for section in sections:
        assert "\ngoal: " in section, section[:200]
    assert {p: p.stat().st_mtime_ns for p in results.glob("*")} == before


def test_options_after_the_names_reach_the_benchmark_and_a_failure_sets_the_exit_status():
    shown = _run("benchmarks", "necessity_rules", "--help")
    assert shown.returncode == 0 and "--smoke" in shown.stdout
    refused = _run("benchmarks", "necessity_rules", "reformat", "--no-such-option")
    assert refused.returncode == 1
    assert "failed: necessity_rules, reformat" in refused.stderr
    assert _run("benchmarks", "no_such_benchmark").returncode == 2
