"""Outages are not answers: the predictions a server or search outage spoiled are asked again on resume,
counted in the manifest, and an open-web run whose every search failed is refused after its reports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import RwpostError
from rwpost.evaluate.contract import Call, Prediction
from rwpost.evaluate.log import RunManifest
from rwpost.io import drop_jsonl_rows


def without_retrieval(calls: Sequence[Any]) -> bool:
    """Whether an answer was made without one working tool call: it made some, and every one failed (a
    search outage; calls as :class:`Call` or as the dicts of ``predictions.jsonl``)."""
    failed = [c.failed if isinstance(c, Call) else bool(c.get("failed")) for c in calls if _kind(c) == "tool"]
    return bool(failed) and all(failed)


def _kind(call: Any) -> str | None:
    return call.kind if isinstance(call, Call) else call.get("kind") if isinstance(call, dict) else None


def _outage_failed(row: Any) -> bool:
    """A ``predictions.jsonl`` row an outage spoiled: no answer for a transport reason, or an answer made
    while every search failed."""
    if not isinstance(row, dict):
        return False
    if row.get("label") is None and row.get("error"):
        from rwpost.llm.client import is_transport_failure  # imports openai: only for a failed answer

        if is_transport_failure(row["error"]):
            return True
    return without_retrieval([c for c in row.get("calls") or [] if isinstance(c, dict)])


def retry_transport_failures(path: Path) -> int:
    """Remove from ``path`` the predictions an outage spoiled, so a resumed run asks for them again:
    those that failed for a transport reason (a server error, a rate limit, a timeout, no connection,
    after every retry: :func:`rwpost.llm.client.is_transport_failure`) and those made while every search
    failed; returns how many. Refusals and invalid answers stay."""
    return drop_jsonl_rows(path, _outage_failed)


class RetrievalFailed(RwpostError):
    """An open-web run whose every search failed: its answers are closed-book ones."""


def retrieval_record(predictions: Sequence[Sequence[Prediction]]) -> dict[str, Any]:
    """The manifest's retrieval counts over every answer of an open-web run (resumed ones too)."""
    answers = [p for preds in predictions for p in preds]
    tools = [c for p in answers for c in p.calls if c.kind == "tool"]
    failed = sum(c.failed for c in tools)
    return {
        "tool_calls": len(tools),
        "failed": failed,
        "predictions": len(answers),
        "predictions_without_retrieval": sum(without_retrieval(p.calls) for p in answers),
        "never_worked": failed > 0 and failed == len(tools),
    }


def check_retrieval(manifest: RunManifest) -> None:
    """Refuse an open-web run whose every search failed (after its reports are written, marked so): its
    scores are those of closed-book answers, not of the cell it names."""
    retrieval = manifest.retrieval
    if retrieval is not None and retrieval.never_worked:
        raise RetrievalFailed(
            f"{manifest.system}: every one of its {retrieval.failed} searches failed, so its answers are "
            f"closed-book, not {manifest.setting} (the reports say so); fix the search backend and run the "
            "same command again: those answers are asked again"
        )


def outage_counts(retried: int, predictions: Sequence[Sequence[Prediction]]) -> dict[str, int]:
    """The manifest's outage fields, only where not zero: answers asked again on resume, and answers of
    this run an outage spoiled (a transport failure, or made while every search failed)."""
    failed = sum(_outage_failed(p.model_dump(mode="json")) for preds in predictions for p in preds)
    counts = {"retried_transport_failures": retried, "transport_failures": failed}
    return {k: v for k, v in counts.items() if v}


__all__ = [
    "RetrievalFailed",
    "check_retrieval",
    "outage_counts",
    "retrieval_record",
    "retry_transport_failures",
    "without_retrieval",
]
