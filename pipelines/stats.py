"""DVC stage `stats`: ``python -m pipelines.stats`` runs :mod:`rwpost.stages.stats`."""

from functools import partial

from rwpost.stages import stats as stage
from rwpost.stages.base import run_stage, stage_main

run = partial(run_stage, stage)
"""The stage on a whole params dict (as read from params.yaml): prints its line, returns its counts."""

if __name__ == "__main__":
    stage_main(stage)
