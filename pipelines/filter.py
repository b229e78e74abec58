"""DVC stage `filter`: ``python -m pipelines.filter`` runs :mod:`rwpost.stages.filter`."""

from rwpost.stages import filter as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
