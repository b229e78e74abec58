"""Records to annotate: rwpost ``Sample`` JSONL, or the authors' released flat JSONL.

The released format is read here with a minimal mapping so the annotation tools work before the full
importer (``rwpost.rwpost_format``) lands; fields with no ``Sample`` column stay in ``extra``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rwpost.errors import RecordError, UnknownRatingError
from rwpost.ids import record_id
from rwpost.labels import map_rating
from rwpost.records import Evidence, Image, Provenance, Reject, Sample

_RELEASED_KNOWN = {
    "claim",
    "post_text",
    "image_address",
    "image_link",
    "label",
    "reasoning_logic",
    "key_points",
    "fact_checking_evidence",
    "claim_time",
    "OCR",
    "category",
    "news_url",
    "post_link",
}


def sample_from_released(row: dict[str, Any], *, source: str) -> Sample:
    """One released RW-Post record as a ``Sample`` (label mapped by paper Table II; excluded -> None)."""
    try:
        label = map_rating(row["label"]).label if row.get("label") else None
    except UnknownRatingError:
        label = None
    evidence = [
        Evidence(
            id=number,
            type=str(item.get("type") or "Text"),
            content=item.get("content"),
            source=item.get("source"),
            url=item.get("url"),
        )
        for number, item in enumerate(row.get("fact_checking_evidence") or [], start=1)
    ]
    image = Image(link=row["image_link"]) if row.get("image_link") else None
    return Sample(
        id=record_id(row["news_url"]),
        claim=row["claim"],
        post_text=row.get("post_text"),
        post_url=row.get("post_link") or None,
        image=image,
        label=label,
        label_original=row.get("label"),
        category=row.get("category"),
        claim_time=row.get("claim_time") or None,
        news_url=row["news_url"],
        reasoning_logic=row.get("reasoning_logic"),
        key_points=row.get("key_points"),
        evidence=evidence,
        ocr=row.get("OCR"),
        provenance=Provenance(backend="released", source=source),
        extra={k: v for k, v in row.items() if k not in _RELEASED_KNOWN},
    )


def read_samples(path: Path, rejects: list[Reject] | None = None) -> Iterator[Sample]:
    """Samples from a JSONL file of ``Sample`` records or of released records; bad lines go to ``rejects``."""
    from rwpost.io import iter_jsonl

    source = str(path)
    for line, row in iter_jsonl(path):
        try:
            if isinstance(row, dict) and "fact_checking_evidence" in row:
                yield sample_from_released(row, source=source)
            else:
                yield Sample.model_validate(row)
        except (KeyError, TypeError, ValidationError, RecordError) as exc:
            reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
            if rejects is None:
                raise RecordError(reason, source=source, line=line) from exc
            rejects.append(Reject(stage="annotate", reason=reason, source=source, line=line, data=row))
