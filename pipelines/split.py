"""DVC stage `split`: ``python -m pipelines.split`` runs :mod:`rwpost.stages.split` (without the
interpreter's teardown once it has ended: :func:`rwpost.stages.base.stage_main`'s ``fast_exit``)."""

from rwpost.stages import split as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage, fast_exit=True)
