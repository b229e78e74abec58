"""DVC stage `evaluate`: ``python -m pipelines.evaluate`` runs :mod:`rwpost.stages.evaluate`.

Once the stage has ended (its outputs written, or its one-line error printed), the process exits without
the interpreter's teardown: freeing torch, scikit-learn and every module one by one takes 0.7 s of a
6 s cold stage. The exit handlers still run and the streams are flushed first; the exit status is the
stage's. An unexpected exception leaves the ordinary way, with its traceback.
"""

import atexit
import os
import sys

from rwpost.stages import evaluate as stage
from rwpost.stages.base import stage_main


def main() -> None:
    try:
        stage_main(stage)
        status = 0
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        status = exc.code or 0
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
