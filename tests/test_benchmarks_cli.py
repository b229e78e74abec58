"""Every benchmark explains itself: ``python -m benchmarks.NAME --help`` prints its usage and exits 0
without measuring anything (no results file written), and an unknown option is refused with exit 2."""

from __future__ import annotations

import pkgutil
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


@pytest.mark.parametrize("name", NAMES)
def test_benchmark_help_and_bad_option(name):
    results = ROOT / "benchmarks" / "results"
    before = {p: p.stat().st_mtime_ns for p in results.glob("*")} if results.exists() else {}
    shown = _run(f"benchmarks.{name}", "--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage:")
    refused = _run(f"benchmarks.{name}", "--no-such-option")
    assert refused.returncode == 2 and "unrecognized arguments: --no-such-option" in refused.stderr
    after = {p: p.stat().st_mtime_ns for p in results.glob("*")} if results.exists() else {}
    assert after == before  # nothing measured, nothing written
