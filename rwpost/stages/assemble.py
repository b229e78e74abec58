"""Stage ``assemble``: crawl + tagged + extraction + filter decisions -> samples (+ rejects, funnel).

Writes ``samples.jsonl``, ``rejects.jsonl`` and ``funnel.json`` (the filter stage's funnel followed by
what assembling removed) under ``out``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from rwpost.assemble import assemble_samples
from rwpost.io import read_records, sorted_by_id, sorted_rejects, write_jsonl
from rwpost.records import CrawledArticle, Decision, Extraction, FunnelStep, TaggedArticle
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams):
    """The ``assemble:`` section of params.yaml; its inputs are the earlier stages' outputs."""

    section = "assemble"
    upstream = {
        "crawl": "crawl.out",
        "tagged": "reformat.out/articles.jsonl",
        "extractions": "extract.out/extractions.jsonl",
        "decisions": "filter.out/decisions.jsonl",
        "filter_funnel": "filter.out/funnel.json",
        "filter_order": "filter.order",
    }
    reads = ("crawl", "tagged", "extractions", "decisions", "filter_funnel")
    writes = ("out",)

    crawl: Path = Path("data/work/crawl")
    tagged: Path = Path("data/work/tagged/articles.jsonl")
    extractions: Path = Path("data/work/extract/extractions.jsonl")
    decisions: Path = Path("data/work/filter/decisions.jsonl")
    filter_funnel: Path | None = Path("data/work/filter/funnel.json")
    filter_order: list[str] = Field(default_factory=list)
    """A record several filters rejected is counted under the first of these (empty: file order)."""
    out: Path = Path("data/work/assemble")


M = TypeVar("M", bound=BaseModel)


def _read(path: Path, model: type[M]) -> list[M]:
    return list(read_records(path, model, stage="assemble")) if path.exists() else []


def run(params: Params) -> StageReport:
    tagged = _read(params.tagged, TaggedArticle)
    extractions = {e.id: e for e in _read(params.extractions, Extraction)}
    crawled = {c.id: c for c in _read(params.crawl / "articles.jsonl", CrawledArticle)}
    decisions: dict[str, list[Decision]] = defaultdict(list)
    for decision in _read(params.decisions, Decision):
        decisions[decision.id].append(decision)
    result = assemble_samples(
        tagged, extractions, crawled, decisions, params.crawl, filter_order=params.filter_order
    )
    here = result.removed_here
    report = StageReport(
        stage="assemble",
        counts={"samples": len(result.samples), "rejects": len(result.rejects), **result.removed_by},
        funnel=[FunnelStep.of("assemble", len(result.samples), here)] if here else [],
        message=f"assemble: {len(result.samples)} samples, {len(result.rejects)} rejects -> {params.out}",
    )
    write_jsonl(params.out / "samples.jsonl", sorted_by_id(result.samples))
    write_jsonl(params.out / "rejects.jsonl", sorted_rejects(result.rejects))
    write_funnel(params.out / "funnel.json", funnel_so_far(params.filter_funnel, report))
    return report
