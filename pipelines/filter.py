"""DVC stage `filter`: ``python -m pipelines.filter`` runs :mod:`rwpost.stages.filter` (without the
interpreter's teardown once it has ended: :func:`rwpost.stages.base.stage_main`'s ``fast_exit``)."""

from rwpost.stages import filter as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage, fast_exit=True)
