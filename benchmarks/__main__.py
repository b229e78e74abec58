"""Run every benchmark module here (python -m benchmarks), or those named on the command line.

Options after the names go to each benchmark run: ``python -m benchmarks --smoke`` runs them all at
tiny sizes, ``python -m benchmarks evaluate --no-embedding`` runs one with an option of its own. A
benchmark that fails (an exception, a non-zero return) is reported and the rest still run; the exit
status is 1 when any failed.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    available = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))
    split = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, options = argv[:split], argv[split:]
    chosen = names or available
    unknown = sorted(set(chosen) - set(available))
    if unknown:
        print(f"unknown benchmarks: {', '.join(unknown)} (have: {', '.join(available)})", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        print(f"== benchmarks.{name} {' '.join(options)}".rstrip(), flush=True)
        started = time.perf_counter()
        sys.argv = [f"benchmarks.{name}", *options]  # argparse names the program after argv[0]
        try:
            status = importlib.import_module(f"benchmarks.{name}").main(list(options))
        except SystemExit as exc:  # argparse refusing an option, or the benchmark's own exit
            status = exc.code
        except Exception:
            traceback.print_exc()
            status = 1
        if isinstance(status, str) or (isinstance(status, int) and status != 0):  # or returns its report
            print(f"benchmarks.{name} failed ({status})", file=sys.stderr, flush=True)
            failed.append(name)
        print(f"-- benchmarks.{name}: {time.perf_counter() - started:.1f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
