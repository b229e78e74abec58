"""ClaimReview2024+ (Braun et al., "DEFAME", ICML 2025) from its released layout: image-text claims.

The benchmark is distributed as the Hugging Face dataset ``MAI-Lab/ClaimReview2024plus`` (gated); its
layout is known only from DEFAME's loader (``multimodal-ai-lab/DEFAME``,
``defame/eval/claimreview2024/benchmark.py``): the folder holds ``test.json``, a JSON array of::

    {"text": "...", "image": ["images/12.jpg"], "label": "refuted",
     "date": "2024-03-05T00:00:00Z", "author": "..."}

``image`` is a list of paths (DEFAME takes the first; one version of the loader has a single path, also
read here; null or empty: a text-only claim), relative to the folder. ``label`` is ``supported``,
``refuted``, ``not enough information`` or ``misleading``; ``date`` the claim's date. No further field is
documented there, so none is read; a dataset card with more fields was not available to check.

Record fields read: ``text`` (the claim), ``image`` (the first path: the image), ``label``, ``date`` (the
claim's date, as ``2024-03-05T00:00:00Z``) and ``author`` (``extra``).

Labels as Table III's 3-class "Fact-Check" task: supported -> True, refuted -> False, not enough
information -> Unproven. ``misleading`` (DEFAME's cherry-picking class) has no Table III class; it maps to
``Mixture`` (RW-Post's label for partly true claims), which the ``main`` view (Table III's) leaves out.
The original label is ``label_original`` and ``extra["label"]``, the author ``extra["author"]`` (both
blinded); the date is the sample's ``claim_time``. Ids hash the claim's text, image and date, so they do
not depend on the record order. A bad record is one :class:`~rwpost.errors.RecordError` naming the file,
line and field.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import json_records, record_object
from rwpost.evaluate.datasets.spaces import space_of_labels
from rwpost.io import sha256_hex
from rwpost.labels import Label
from rwpost.records import Image, Provenance, Sample

LABELS: dict[str, Label] = {
    "supported": Label.TRUE,
    "refuted": Label.FALSE,
    "not enough information": Label.UNPROVEN,
    "misleading": Label.MIXTURE,
}
"""ClaimReview2024+'s label -> the runner's (``misleading`` is outside Table III's three classes)."""

SPACE = space_of_labels(
    "claimreview",
    "ClaimReview2024+'s label (supported, refuted, not enough information, misleading), every claim",
    LABELS,
)
"""ClaimReview2024+'s label space: its four classes, ``misleading`` included (an RW-Post Mixture answer)."""


def split_file(root: str | Path, split: str = "test") -> Path:
    """``<root>/test.json`` (the benchmark has one split)."""
    path = Path(root) / f"{split}.json"
    if not path.is_file():
        raise ConfigError(f"{path}: not found; give the ClaimReview2024plus folder (it holds test.json)")
    return path


def _sample(row: Any, path: Path, line: int, split: str) -> Sample:
    row, bad = record_object(row, path, line)
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        raise bad(f"expected text, found {text!r}", "text")
    label = row.get("label")
    if label not in LABELS:
        raise bad(f"expected one of {', '.join(LABELS)}, found {label!r}", "label")
    images = row.get("image")
    image = images[0] if isinstance(images, list) and images else images or None
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise bad(f"expected an image path, found {images!r}", "image")
    claim_time = None
    if row.get("date"):
        try:
            claim_time = datetime.strptime(row["date"], "%Y-%m-%dT%H:%M:%SZ").date()
        except (TypeError, ValueError):
            raise bad(f"expected a date like 2024-03-05T00:00:00Z, found {row['date']!r}", "date") from None
    key = sha256_hex(f"{split}\n{text}\n{image or ''}\n{row.get('date') or ''}")[:16]
    return Sample(
        id=f"crp-{key}",
        claim=text,
        image=Image(path=image) if image else None,
        label=LABELS[label],
        label_original=label,
        claim_time=claim_time,
        news_url=f"urn:claimreview2024plus:{split}:{key}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={"label": label, **({"author": row["author"]} if row.get("author") else {})},
    )


def read_claimreview(root: str | Path, split: str = "test") -> list[Sample]:
    """The benchmark's claims as samples (image paths relative to ``root``, the runner's ``image_root``);
    two records with the same text, image and date are an error naming both lines."""
    path = split_file(root, split)
    samples: list[Sample] = []
    lines: dict[str, int] = {}
    for line, row in json_records(path):
        sample = _sample(row, path, line, split)
        if sample.id in lines:
            raise RecordError(f"repeats the claim of line {lines[sample.id]}", source=str(path), line=line)
        lines[sample.id] = line
        samples.append(sample)
    return samples


__all__ = ["LABELS", "read_claimreview", "split_file"]
