"""DVC stage `assemble`: ``python -m pipelines.assemble`` runs :mod:`rwpost.stages.assemble`."""

from rwpost.stages import assemble as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
