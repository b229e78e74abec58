"""The Batch API for an evaluation run (``rwpost evaluate --batch-api``, ``evaluate.batch_api``).

Before a repeat's samples are asked, :func:`batch_prefill` collects the requests of every pending sample
from a detector that makes one independent model call per sample (``batch_requests``: the ``vlm``
detector over an API model) and answers the uncached ones through :class:`rwpost.llm.batch.BatchRunner`:
uploaded as one JSONL batch, its id recorded beside the answer cache (``<cache_path>.batches.json``) so a
killed run resumes the same batch instead of paying twice, the answers put in the same cache. The
ordinary run that follows is served from that cache, and asks the server synchronously only for what the
batch failed (error lines, invalid answers, an expired batch's rest). The ledger prices the calls the
batch answered at the batch rate (:func:`batch_call`).

Multi-step (agentic) detectors over an API model are refused: each step needs the answer of the one
before, which one batch cannot hold. Detectors that ask no API model (baselines, a local model) run as
they always do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Call, Detector, ModelOptions, RunContext
from rwpost.evaluate.task import EvalTask
from rwpost.records import Sample

DEFAULT_POLL_S = 30.0
"""Seconds between polls of a batch."""


def _api_model(detector: Detector) -> bool:
    """Whether the detector asks an API model (its options are :class:`ModelOptions` with no local
    ``backend``)."""
    options = getattr(detector, "options", None)
    return isinstance(options, ModelOptions) and not options.local


def check_batchable(detector: Detector) -> None:
    """Refuse ``--batch-api`` for a detector over an API model whose calls depend on each other, or one
    without an answer cache (where the batch's answers are kept): before anything is written."""
    if _api_model(detector) and not hasattr(detector, "batch_requests"):
        raise ConfigError(
            f"--batch-api: detector {detector.name!r} makes dependent model calls (each step needs the "
            "answer before it), which one batch cannot hold; only single-call detectors (vlm) batch: run "
            "it without --batch-api"
        )
    if _api_model(detector) and not getattr(detector.options, "cache_path", None):
        raise ConfigError(
            f"--batch-api: detector {detector.name!r} keeps the batch's answers in its answer cache: give "
            "it one (--set cache_path=data/cache/llm.sqlite)"
        )


def batch_prefill(
    detector: Detector,
    samples: Sequence[Sample],
    task: EvalTask,
    ctx: RunContext,
    *,
    poll_s: float = DEFAULT_POLL_S,
) -> Any:
    """Answer the uncached requests of ``samples`` (blinded, pending) through one batch; returns the
    :class:`~rwpost.llm.batch.BatchRunner` (also set as ``detector.batch``), or None with nothing to batch."""
    check_batchable(detector)
    requests_of = getattr(detector, "batch_requests", None)
    if requests_of is None or not _api_model(detector) or not samples:
        return None
    requests = requests_of(samples, task, ctx)
    client = detector.chat_model(ctx).client
    if client.cache is None:
        raise ConfigError(
            f"--batch-api: detector {detector.name!r} keeps the batch's answers in its answer cache: give "
            "it one (--set cache_path=data/cache/llm.sqlite)"
        )
    from rwpost.llm.batch import BatchRunner

    runner = BatchRunner(client, Path(f"{client.cache.path}.batches.json"), poll_s=poll_s)
    runner.fill(requests)
    if runner.counts["sent"] or runner.counts["resumed"]:
        import sys

        print(f"{detector.name}: {runner.summary()}", file=sys.stderr)
    detector.batch = runner  # type: ignore[attr-defined]
    return runner


def batch_call(call: Call, cache_key: str, runner: Any, prices: Any) -> Call:
    """``call`` as the ledger should count it: when the batch ``runner`` answered ``cache_key`` this run,
    a paid call (not a cache hit) at the batch rate of the run's price table (unpriced without one)."""
    if runner is None or cache_key not in runner.answered_keys:
        return call
    price = (prices or {}).get(call.name)
    cost = None if price is None else price.cost(call.tokens_in, call.tokens_out) * runner.discount
    return call.model_copy(update={"cached": False, "latency_s": 0.0, "cost_usd": cost})


__all__ = ["DEFAULT_POLL_S", "batch_call", "batch_prefill", "check_batchable"]
