"""DVC stage `reformat`: ``python -m pipelines.reformat`` runs :mod:`rwpost.stages.reformat`."""

from rwpost.stages import reformat as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
