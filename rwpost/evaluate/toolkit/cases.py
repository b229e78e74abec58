"""A blinded sample as a detector's prompts show it: the gold evidence block, the news text of the cell,
an agent's case, and the failed prediction of a sample whose image cannot be read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rwpost.evaluate.contract import Call, Prediction, RunContext
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.evaluate.toolkit.tools import Case
from rwpost.records import Sample


def evidence_block(sample: Sample, max_chars: int = 6000) -> str:
    """The gold evidence items as ``[id] content`` lines, content only (empty when there are none)."""
    lines = [f"[{e.id}] {e.content}" for e in sample.evidence if e.content]
    if not lines:
        return ""
    return "\n".join(["Evidence items:", *lines])[:max_chars] + "\n"


def missing_image_prediction(sample: Sample, image: Any, call: Call | None = None) -> Prediction | None:
    """A failed prediction when the sample has an image that could not be loaded (never sent without)."""
    if sample.image is None or image is not None:
        return None
    return Prediction(
        id=sample.id,
        calls=[call] if call else [],
        error="image missing: the sample has an image but neither its bytes nor its file could be read",
    )


def news_text(sample: Sample, cell: Cell) -> str:
    """The news as every prompt shows it: claim, post text, the image's OCR text (image cells), the date,
    and the gold evidence items as content only (gold-evidence cells)."""
    lines = [f"News text: {sample.claim}"]
    if sample.post_text:
        lines.append(f"Post text: {sample.post_text}")
    if cell.image and sample.ocr:
        lines.append(f"Text in the image (OCR): {sample.ocr}")
    if sample.claim_time:
        lines.append(f"Date of the news: {sample.claim_time.isoformat()}")
    if cell.evidence is EvidenceSource.GOLD:
        lines.append(evidence_block(sample).rstrip())
    return "\n".join(x for x in lines if x)


def cases_of(
    samples: Sequence[Sample], task: EvalTask, ctx: RunContext
) -> tuple[list[Case], dict[str, Prediction]]:
    """The samples as an agent's cases (the news text of the cell, the image where it has one), and the
    failed predictions of those whose image the cell needs but cannot be read."""
    failed: dict[str, Prediction] = {}
    cases: list[Case] = []
    for sample in samples:
        image = ctx.image(sample) if task.cell.image else None
        missing = missing_image_prediction(sample, image) if task.cell.image else None
        if missing is not None:
            failed[sample.id] = missing
            continue
        cases.append(Case(sample.id, news_text(sample, task.cell), image, sample.claim_time))
    return cases, failed


__all__ = ["cases_of", "evidence_block", "missing_image_prediction", "news_text"]
