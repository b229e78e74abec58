"""VeriTaS (the quarterly multimodal fact-checking benchmark DEFAME evaluates) from your copy of a quarter.

The layout is known from DEFAME's loader (``multimodal-ai-lab/DEFAME``, ``defame/eval/veritas/benchmark.py``):
one folder per quarter (``q1_2024`` .. : the release's ``veritas_benchmark_<quarter>.zip`` unpacked),
holding ``claims.json`` and ``media/image/<id>.jpg``, ``media/video/<id>.mp4``::

    {"metadata": {"total_claims": 2},
     "claims": [{"id": 17, "data": "<image:42> This photo shows the flood in Valencia.",
                 "date": "2024-10-30T00:00:00Z",
                 "verdict": {"veracity": -0.8, "context_coverage": 0.9, "integrity": -0.7,
                             "media": [...]}}]}

Record fields read: ``id``, ``data`` (the claim; its ``<image:N>`` / ``<video:N>`` references name media
files, the first image is the sample's image, every reference ``extra["media"]``), ``date`` and
``verdict``: ``integrity`` (a score in [-1, 1]) is the label, three classes as DEFAME thresholds it
(Intact at >= 0.33, Compromised at <= -0.33, Unknown between; a missing score is Unknown, as DEFAME
does): :data:`SPACE`. ``veracity`` (the text's truth, [-1, 1]) is kept with the same thresholds as
``extra["veracity_class"]`` (true, false, uncertain: rwpost's reading, DEFAME scores integrity only), the
scores themselves in ``extra``. RW-Post's labels (an extra view): Intact -> True, Compromised -> False,
Unknown -> Unproven. ``--data veritas/q1_2024:FOLDER`` names a quarter under ``FOLDER``; a quarter's own
folder is also taken. A bad record (no id or text, a score that is not a number, a date that does not
read, a media reference whose file is missing) is one :class:`~rwpost.errors.RecordError` naming the file,
line and field. The quarterly zip is never unpacked here: give the unpacked folder.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.datasets import json_records, record_object
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.labels import Label
from rwpost.records import Image, Provenance, Sample

INTACT_AT, COMPROMISED_AT = 0.33, -0.33
"""DEFAME's integrity thresholds (``INTACT_THRESHOLD``, ``COMPROMISED_THRESHOLD``)."""

LABELS = {"Intact": Label.TRUE, "Compromised": Label.FALSE, "Unknown": Label.UNPROVEN}
"""The three integrity classes -> RW-Post's labels."""

SPACE = LabelSpace(
    name="veritas_integrity",
    description="VeriTaS's integrity class (Intact >= 0.33, Compromised <= -0.33, Unknown between; as DEFAME "
    "thresholds verdict.integrity), every claim",
    classes=tuple(LABELS),
    from_label={label: name for name, label in LABELS.items()},
)
"""VeriTaS's label space."""

QUARTERS = tuple(f"q{q}_{y}" for y in range(2024, 2027) for q in range(1, 5))
"""The quarters a folder may hold (the release adds one a quarter)."""

_MEDIA = re.compile(r"<(image|video):(\d+)>")


def quarter_folder(root: str | Path, split: str) -> Path:
    """``<root>/<quarter>``, or ``root`` itself when it holds ``claims.json``."""
    for folder in (Path(root) / split, Path(root)):
        if (folder / "claims.json").is_file():
            return folder
    raise ConfigError(f"{Path(root) / split / 'claims.json'}: not found; give the unpacked VeriTaS folder")


def split_file(root: str | Path, split: str) -> Path:
    """The quarter's ``claims.json``."""
    return quarter_folder(root, split) / "claims.json"


def integrity_class(score: float | None) -> str:
    """The integrity score's class, as DEFAME thresholds it."""
    if score is None:
        return "Unknown"
    return "Intact" if score >= INTACT_AT else "Compromised" if score <= COMPROMISED_AT else "Unknown"


def _score(verdict: dict, key: str, bad) -> float | None:
    value = verdict.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise bad(f"expected a score in [-1, 1], found {value!r}", f"verdict.{key}")
    return float(value)


def _sample(row: Any, path: Path, line: int, split: str) -> Sample:
    row, bad = record_object(row, path, line)
    if row.get("id") in (None, ""):
        raise bad("expected an id, found none", "id")
    text = row.get("data")
    if not isinstance(text, str) or not _MEDIA.sub("", text).strip():
        raise bad(f"expected the claim's text, found {text!r}", "data")
    verdict = row.get("verdict") if isinstance(row.get("verdict"), dict) else {}
    integrity, veracity = _score(verdict, "integrity", bad), _score(verdict, "veracity", bad)
    claim_time = None
    if row.get("date"):
        try:
            claim_time = datetime.fromisoformat(str(row["date"]).replace("Z", "+00:00")).date()
        except ValueError:
            raise bad(f"expected an ISO date, found {row['date']!r}", "date") from None
    media = []
    for kind, number in _MEDIA.findall(text):
        relative = f"media/{kind}/{number}.{'jpg' if kind == 'image' else 'mp4'}"
        if not (path.parent / relative).is_file():
            raise bad(f"{kind} {number} is referenced but {relative} is not in {path.parent}", "data")
        media.append(relative)
    image = next((m for m in media if m.startswith("media/image/")), None)
    cls = integrity_class(integrity)
    return Sample(
        id=f"veritas-{split}-{row['id']}",
        claim=_MEDIA.sub(lambda m: f"[{m[1]} {m[2]}]", text).strip(),
        image=Image(path=image) if image else None,
        label=LABELS[cls],
        label_original=cls,
        claim_time=claim_time,
        news_url=f"urn:veritas:{split}:{row['id']}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={
            "integrity": integrity,
            "veracity": veracity,
            "veracity_class": {"Intact": "true", "Compromised": "false", "Unknown": "uncertain"}[
                integrity_class(veracity)
            ],
            "context_coverage": verdict.get("context_coverage"),
            "media": media,
        },
    )


def read_veritas(root: str | Path, split: str) -> list[Sample]:
    """The quarter's claims as samples (media relative to the quarter folder, the runner's media root)."""
    path = split_file(root, split)
    return [_sample(row, path, line, split) for line, row in json_records(path, key="claims")]


__all__ = ["LABELS", "QUARTERS", "SPACE", "integrity_class", "quarter_folder", "read_veritas", "split_file"]
