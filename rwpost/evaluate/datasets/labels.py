"""Any labelled file (``--data labels:FILE``): its rows as samples, scored in the file's own labels.

The file is JSON lines or CSV (by its suffix, ``.csv``; any other is JSON lines), one row per sample::

    {"id": "c1", "label": "Supported", "claim": "The bridge opened in 1932.", "image": "img/c1.jpg"}

Record fields read: ``id`` and ``label`` (required; any text), and the optional ``claim`` (or ``text``),
``post_text``, ``image`` (a path relative to the file's folder, which stays inside it), ``date``
(``YYYY-MM-DD``, the claim's date), ``category``, ``news_url`` and ``rationale``; every other field is kept
in ``extra`` (never shown to a detector). The label space is the distinct labels of the file, sorted
(:data:`SPACE`); a label that is also an RW-Post label's name (True, False, Unproven, Mixture, Outdated, any
case) is that RW-Post label too, for the RW-Post views, else the sample has none there. A predictions file
scored against it answers in the same labels (its ``label`` column: a label that is not RW-Post's is read
as the row's answer in the file's space). A row without an id or label, a duplicate id, an image path
outside the folder or a date that does not read is one :class:`~rwpost.errors.RecordError` naming the file,
line and field.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import record_object
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.io import iter_jsonl, read_text
from rwpost.labels import Label
from rwpost.records import Image, Provenance, Sample

SPACE = LabelSpace(
    name="labels",
    description="the labels file's own labels (the distinct values of its label field), every row",
    classes=None,
)
"""A labels file's space: its labels as written; an RW-Post answer counts as the label of the same name."""

FIELDS = ("id", "label", "claim", "text", "post_text", "image", "date", "category", "news_url", "rationale")
"""The fields read into a sample's columns; any other is kept in ``extra``."""

_RWPOST = {label.value.lower(): label for label in Label}


def source(path: str | Path, split: str = "all") -> Path:
    """The labels file itself."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"--data labels:{file}: not a file (give a JSON lines or CSV file of id, label)")
    return file


def _rows(path: Path) -> list[tuple[int, Any]]:
    if path.suffix.lower() != ".csv":
        return list(iter_jsonl(path))
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        return [(line, row) for line, row in enumerate(reader, start=2)]
    except csv.Error as exc:
        raise RecordError(f"not readable as CSV ({exc})", source=str(path), line=reader.line_num) from None


def _text(row: dict, key: str) -> str | None:
    value = row.get(key)
    return str(value).strip() if value not in (None, "") and str(value).strip() else None


def _sample(row: Any, path: Path, line: int) -> Sample:
    row, bad = record_object(row, path, line)
    sid, label = _text(row, "id"), _text(row, "label")
    if sid is None:
        raise bad(f"expected an id, found {row.get('id')!r}", "id")
    if label is None:
        raise bad(f"expected a label, found {row.get('label')!r}", "label")
    image = _text(row, "image")
    if image is not None:
        inside = path.parent.resolve()
        if Path(image).is_absolute() or not (path.parent / image).resolve().is_relative_to(inside):
            raise bad(f"image path {image!r} is outside the file's folder {path.parent}", "image")
    claim_time = None
    if _text(row, "date"):
        try:
            claim_time = date.fromisoformat(_text(row, "date")[:10])
        except ValueError:
            raise bad(f"expected a date YYYY-MM-DD, found {row['date']!r}", "date") from None
    return Sample(
        id=sid,
        claim=_text(row, "claim") or _text(row, "text") or f"(no claim text in {path.name})",
        post_text=_text(row, "post_text"),
        image=Image(path=image) if image else None,
        label=_RWPOST.get(label.lower()),
        label_original=label,
        category=_text(row, "category"),
        claim_time=claim_time,
        news_url=_text(row, "news_url") or f"urn:labels:{path.name}:{sid}",
        reasoning_logic=_text(row, "rationale"),
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={k: v for k, v in row.items() if k is not None and k not in FIELDS and v not in (None, "")},
    )


def read_labels(path: str | Path, split: str = "all") -> list[Sample]:
    """The file's rows as samples (images relative to its folder, the runner's image root)."""
    file = source(path)
    seen: dict[str, int] = {}
    out = []
    for line, row in _rows(file):
        sample = _sample(row, file, line)
        if sample.id in seen:
            raise RecordError(
                f"id {sample.id!r} is also on line {seen[sample.id]}", source=str(file), line=line
            )
        seen[sample.id] = line
        out.append(sample)
    if not out:
        raise RecordError("no rows: expected one row per sample (id, label)", source=str(file), line=1)
    return out


__all__ = ["SPACE", "read_labels", "source"]
