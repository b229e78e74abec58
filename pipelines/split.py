"""DVC stage `split`: ``python -m pipelines.split`` runs :mod:`rwpost.stages.split`."""

from rwpost.stages import split as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
