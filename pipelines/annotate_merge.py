"""DVC stage `annotate_merge`: `python -m pipelines.annotate_merge` -> :mod:`rwpost.stages.annotate_merge`."""

from rwpost.stages import annotate_merge as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
