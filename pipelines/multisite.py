"""DVC stage `multisite`: ``python -m pipelines.multisite`` runs :mod:`rwpost.stages.multisite` (without the
interpreter's teardown once it has ended: :func:`rwpost.stages.base.stage_main`'s ``fast_exit``)."""

from rwpost.stages import multisite as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage, fast_exit=True)
