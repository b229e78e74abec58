"""DVC stage `stats`: ``python -m pipelines.stats`` runs :mod:`rwpost.stages.stats`."""

from rwpost.stages import stats as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
