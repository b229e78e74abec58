"""DVC stage `extract`: ``python -m pipelines.extract`` runs :mod:`rwpost.stages.extract`."""

from rwpost.stages import extract as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
