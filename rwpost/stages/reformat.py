"""Stage ``reformat``: crawl store (``crawl.out``) -> tagged articles (text with tagged URLs + link table).

Writes ``articles.jsonl`` (TaggedArticle), ``rejects.jsonl``, ``report.json`` (:func:`rwpost.reformat.
reformat_store`) and ``funnel.json`` (the first line of the dataset card's funnel) under ``out``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import NonNegativeInt

from rwpost.records import FunnelStep
from rwpost.reformat import reformat_store
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams):
    """The ``reformat:`` section of params.yaml, with the crawl store it reads (``crawl.out``)."""

    section = "reformat"
    upstream = {"crawl": "crawl.out"}
    reads = ("crawl",)
    writes = ("out",)

    crawl: Path = Path("data/work/crawl")
    """The crawl stage's store: ``articles.jsonl`` + ``html/<sha>.html.gz``."""
    out: Path = Path("data/work/tagged")
    min_words: NonNegativeInt = 50
    """Bodies shorter than this are rejected with their word count."""


OUTPUT_FILES = ("articles.jsonl", "rejects.jsonl", "report.json", "funnel.json")
"""What the stage writes under ``out``."""


def reformat_step(report: dict[str, Any]) -> FunnelStep:
    """The funnel line of a reformat report: the crawl store's records in, the tagged articles out."""
    return FunnelStep.of("reformat (crawl store -> tagged articles)", report["kept"], report["rejected"])


def run(params: Params) -> StageReport:
    counts = reformat_store(params.crawl, params.out, min_words=params.min_words)
    rejected = sum(counts["rejected"].values())
    report = StageReport(
        stage="reformat",
        counts=counts,
        funnel=[reformat_step(counts)],
        message=f"reformat: {counts['kept']} tagged, {rejected} rejected -> {params.out}",
    )
    # the card's funnel starts here: every record of the crawl store, and why reformat set some aside
    write_funnel(params.out / "funnel.json", funnel_so_far(None, report))
    return report
