"""Stage ``extract``: tagged articles -> post, rationale, key points, evidence (LLM when a key is set,
else the offline rules); per-record, resumable, set-aside answers kept with their raw responses.

Credentials come from the environment here, at the edge (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_*``); everything else from the ``extract:`` section of params.yaml. Writes
``extractions.jsonl``, ``rejects.jsonl``, ``summary.json`` (totals of those files) and ``cost.json`` (this
run's bill: requests, tokens, cache hits, cost; run-specific, outside DVC's hash) and ``funnel.json`` (the
funnel so far plus extraction's line) under ``out``. The library loop is :mod:`rwpost.extract.run`; the
settings and their (sharded) run are :mod:`rwpost.extract.shards`.

The ``executor:`` section (optional; default one ``local`` shard: the plain run above) can split the
articles by id into shards under ``<out>.shards`` (:mod:`rwpost.executors`), run them locally, on Ray or
as Slurm job arrays (whose tasks call this module's :func:`run_shard` and :func:`merge`), and merge
them: the same bytes in ``out`` whatever ran them (:class:`rwpost.executors.Executor`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rwpost.executors import Submitted
from rwpost.extract import shards
from rwpost.extract.shards import ExtractSettings
from rwpost.records import FunnelStep
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams, ExtractSettings):
    """The ``extract:`` section of params.yaml: :class:`rwpost.extract.shards.ExtractSettings` and the
    funnel so far."""

    section = "extract"
    shared = ("executor",)
    upstream = {"input": "reformat.out/articles.jsonl"}
    reads = ("input", "funnel", "local_model")
    writes = ("out", "cache")
    file_kinds = {"cache": "sqlite"}

    funnel: Path | None = None
    """The funnel so far; None: the ``funnel.json`` beside ``input`` (reformat's). ``out/funnel.json`` is it
    plus this stage's line."""


def extract_step(summary: dict[str, Any]) -> FunnelStep:
    """The funnel line of extraction: tagged articles in, extractions out, the rest set aside by reason."""
    reasons = {f"set aside by {stage}": n for stage, n in summary["set_aside_by_stage"].items()}
    return FunnelStep.of("extract (post, rationale, evidence)", summary["extracted"], reasons)


def _report(params: Params, cost: dict[str, Any] | Submitted) -> StageReport:
    """The stage's report and ``funnel.json``, from the outputs' totals (summary.json), never from this
    run's counters: a resumed run skips what earlier runs did."""
    if isinstance(cost, Submitted):
        return StageReport.of_job("extract", cost)
    report = StageReport(
        stage="extract",
        counts=cost,
        funnel=[extract_step(cost["summary"])],
        message=f"extract ({cost['backend']}): {cost['summary']} (this run: {cost.get('counts')})"
        f" -> {params.out}",
    )
    earlier = params.funnel or params.input.with_name("funnel.json")
    write_funnel(params.out / "funnel.json", funnel_so_far(earlier, report))
    return report


def run(params: Params, *, progress: Callable[[int], None] | None = None) -> StageReport:
    """The stage; ``progress`` is told of each article done (local runs)."""
    return _report(params, shards.extract_all(params, module=__name__, progress=progress))


# --- what a Slurm array's tasks and its merge job call (``python -m rwpost.executors``) ----------------


def run_shard(params: dict[str, Any], shard: str) -> None:
    """Run one shard of the job's params (:func:`rwpost.extract.shards.run_shard`)."""
    shards.run_shard(Params.model_validate(params), shard)


def merge(params: Params | dict[str, Any]) -> StageReport:
    """Join the finished shards into ``out`` and write the funnel (refused while one is missing)."""
    params = params if isinstance(params, Params) else Params.model_validate(params)
    return _report(params, shards.merge(params))
