"""DVC stage `multisite`: ``python -m pipelines.multisite`` runs :mod:`rwpost.stages.multisite`."""

from rwpost.stages import multisite as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
