"""DVC stage `crawl`: ``python -m pipelines.crawl`` runs :mod:`rwpost.stages.crawl`."""

from rwpost.stages import crawl as stage
from rwpost.stages.base import stage_main

if __name__ == "__main__":
    stage_main(stage)
