"""Stage ``extract``: tagged articles -> post, rationale, key points, evidence (LLM when a key is set,
else the offline rules); per-record, resumable, set-aside answers kept with their raw responses.

Credentials come from the environment here, at the edge (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_*``); everything else from the ``extract:`` section of params.yaml. Writes
``extractions.jsonl``, ``rejects.jsonl``, ``summary.json`` (totals of those files) and ``cost.json`` (this
run's bill: requests, tokens, cache hits, cost; run-specific, outside DVC's hash) and ``funnel.json`` (the
funnel so far plus extraction's line) under ``out``. The library loop is :mod:`rwpost.extract.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, PositiveInt

from rwpost.extract.run import extract_tagged, make_extractor
from rwpost.llm import Price, PriceTable, settings_from_env
from rwpost.records import FunnelStep
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams):
    """The ``extract:`` section of params.yaml."""

    section = "extract"
    upstream = {"input": "reformat.out/articles.jsonl"}
    reads = ("input", "funnel", "local_model")
    writes = ("out", "cache")

    input: Path = Path("data/work/tagged/articles.jsonl")
    out: Path = Path("data/work/extract")
    funnel: Path | None = None
    """The funnel so far; None: the ``funnel.json`` beside ``input`` (reformat's). ``out/funnel.json`` is it
    plus this stage's line."""
    backend: Literal["offline", "llm", "auto", "local"] = "auto"
    """``auto``: the LLM when ``OPENAI_API_KEY`` is set, else offline; ``local``: ``local_model``."""
    local_model: Path | None = None
    """A Hugging Face model folder for backend ``local`` (transformers; bf16 on CUDA, float32 on CPU)."""
    model: str | None = None
    """None: ``RWPOST_LLM_MODEL`` or the client's default."""
    concurrency: PositiveInt | None = None
    """LLM requests in flight; None: ``RWPOST_LLM_CONCURRENCY`` or the client's default."""
    cache: Path = Path("data/cache/llm.sqlite")
    max_article_chars: PositiveInt = 60_000
    prices: dict[str, Price] = Field(default_factory=dict)
    limit: NonNegativeInt | None = None
    """Extract at most this many new articles (None: all)."""
    retry_rejects: bool = False
    """Try the articles an earlier run set aside again."""


def price_table(prices: dict[str, Price]) -> PriceTable:
    """The LLM client's price table of the params' prices."""
    return dict(prices)


def extract_step(summary: dict[str, Any]) -> FunnelStep:
    """The funnel line of extraction: tagged articles in, extractions out, the rest set aside by reason."""
    reasons = {f"set aside by {stage}": n for stage, n in summary["set_aside_by_stage"].items()}
    return FunnelStep.of("extract (post, rationale, evidence)", summary["extracted"], reasons)


def run(params: Params, *, progress: Callable[[int], None] | None = None) -> StageReport:
    """The stage; ``progress`` is told of each article done."""
    settings = settings_from_env(model=params.model, concurrency=params.concurrency)
    extractor = make_extractor(
        params.backend,
        settings,
        cache_path=params.cache,
        prices=price_table(params.prices),
        max_article_chars=params.max_article_chars,
        local_model=params.local_model,
    )
    cost = extract_tagged(
        params.input,
        params.out,
        extractor,
        limit=params.limit,
        retry_rejects=params.retry_rejects,
        progress=progress,
    )
    # the funnel line comes from the outputs' totals (summary.json), never from this run's counters: a
    # resumed run skips what earlier runs did
    report = StageReport(
        stage="extract",
        counts=cost,
        funnel=[extract_step(cost["summary"])],
        message=f"extract ({cost['backend']}): {cost['summary']} (this run: {cost['counts']})"
        f" -> {params.out}",
    )
    earlier = params.funnel or params.input.with_name("funnel.json")
    write_funnel(params.out / "funnel.json", funnel_so_far(earlier, report))
    return report
