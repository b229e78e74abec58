"""DVC stage `evaluate`: ``python -m pipelines.evaluate`` runs :mod:`rwpost.stages.evaluate`."""

from rwpost.stages import evaluate as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
