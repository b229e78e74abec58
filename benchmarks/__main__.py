"""Run every benchmark module here (python -m benchmarks), or those named on the command line."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(names: list[str]) -> int:
    here = Path(__file__).parent
    available = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))
    chosen = names or available
    unknown = sorted(set(chosen) - set(available))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)} (have: {', '.join(available)})", file=sys.stderr)
        return 2
    for name in chosen:
        print(f"== benchmarks.{name}")
        sys.argv = [f"benchmarks.{name}"]  # each benchmark parses its own options: run with defaults
        importlib.import_module(f"benchmarks.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
