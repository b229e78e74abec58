"""AVeriTeC (Schlichtkrull et al., NeurIPS 2023) and AVerImaTeC (its image-text successor) from your copy.

AVeriTeC is a folder of ``train.json``, ``dev.json`` (and ``test.json``, unlabelled), each a JSON array
(the dataset's README; DEFAME's ``defame/eval/averitec/benchmark.py``)::

    {"claim": "...", "label": "Refuted", "justification": "...", "claim_date": "31-10-2020",
     "speaker": null, "original_claim_url": null, "fact_checking_article": "https://...",
     "reporting_source": "Facebook", "location_ISO_code": null, "claim_types": [...],
     "questions": [{"question": "...", "answers": [{"answer": "...", "answer_type": "Abstractive",
                    "source_url": "https://...", "source_medium": "Web text"}]}]}

AVerImaTeC (``Rui4416/AVerImaTeC``) is a folder of ``train.json``, ``val.json`` and ``images/``, the records
(as its baseline reads them) holding ``claim_text``, ``claim_images`` (paths whose file name is under
``images/``), ``date``, ``location`` (ISO alpha-2), ``article`` and ``questions`` (each with
``input_images`` and ``answers`` of ``answer_type`` Text / Image / Boolean, ``answer_text``,
``image_answers``, ``boolean_explanation``); its label field is read as ``label``, as AVeriTeC's (the
baseline code read here does not show it).

Record fields read: the claim, ``label`` (Supported, Refuted, Not Enough Evidence, Conflicting
Evidence/Cherrypicking: the label space, :data:`SPACE`), the date (``DD-MM-YYYY`` or ``YYYY-MM-DD``), the
first claim image, the justification (the sample's rationale, never shown) and each question with its
answers as one gold evidence item (shown only in gold-evidence cells, as the QA evidence is the benchmark's
evidence). Other fields go to ``extra``. RW-Post's labels (an extra view): Supported -> True, Refuted ->
False, Not Enough Evidence -> Unproven, Conflicting Evidence/Cherrypicking -> Mixture. A record with no
label (the test split) has no gold and is not scored. The benchmark's own scorer conditions label accuracy
on the evidence's match to the gold questions (Hungarian METEOR); rwpost does not compute it: its view is
label accuracy and F1 alone. A bad record (no claim, an unknown label, a date that does not read, an image
path outside the folder) is one :class:`~rwpost.errors.RecordError` naming the file, line and field.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.datasets import json_records, record_object
from rwpost.evaluate.datasets.spaces import space_of_labels
from rwpost.io import sha256_hex
from rwpost.labels import Label
from rwpost.records import Evidence, Image, Provenance, Sample

LABELS: dict[str, Label] = {
    "Supported": Label.TRUE,
    "Refuted": Label.FALSE,
    "Not Enough Evidence": Label.UNPROVEN,
    "Conflicting Evidence/Cherrypicking": Label.MIXTURE,
}
"""AVeriTeC's four labels (AVerImaTeC's too) -> RW-Post's."""

SPACE = space_of_labels(
    "averitec",
    "AVeriTeC's label (Supported, Refuted, Not Enough Evidence, Conflicting Evidence/Cherrypicking), "
    "every labelled claim",
    LABELS,
)
"""The label space of both benchmarks."""

SPLITS = {"averitec": ("dev", "train", "test"), "averimatec": ("val", "train", "test")}
"""Each benchmark's split files, the default first."""


def split_file(name: str, root: str | Path, split: str) -> Path:
    """``<root>/<split>.json``."""
    path = Path(root) / f"{split}.json"
    if not path.is_file():
        raise ConfigError(f"{path}: not found; give the {name} folder holding {split}.json")
    return path


def _date(value: Any) -> date | None:
    if value in (None, ""):
        return None
    for form in ("%d-%m-%Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(str(value).strip()[:10], form).date()
        except ValueError:
            continue
    raise ValueError(value)


def _evidence(questions: Any) -> list[Evidence]:
    """Each question with its answers as one text evidence item (an image answer named by its file)."""
    out = []
    for question in questions if isinstance(questions, list) else []:
        if not isinstance(question, dict) or not str(question.get("question") or "").strip():
            continue
        answers = []
        for answer in question.get("answers") or []:
            if not isinstance(answer, dict):
                continue
            text = answer.get("answer") or answer.get("answer_text") or ""
            if answer.get("boolean_explanation"):
                text = f"{text} {answer['boolean_explanation']}".strip()
            images = [PurePosixPath(str(p)).name for p in answer.get("image_answers") or []]
            answers.append(" ".join(x for x in (str(text).strip(), *(f"[image {i}]" for i in images)) if x))
        content = f"Q: {question['question'].strip()} A: {' | '.join(a for a in answers if a) or '-'}"
        source = next(
            (a.get("source_url") for a in question.get("answers") or [] if isinstance(a, dict)), None
        )
        out.append(Evidence(id=len(out) + 1, type="Text", content=content, source=source or "AVeriTeC"))
    return out


def _sample(name: str, row: Any, path: Path, line: int, split: str) -> Sample | None:
    row, bad = record_object(row, path, line)
    field = "claim_text" if "claim_text" in row else "claim"
    claim = row.get(field)
    if not isinstance(claim, str) or not claim.strip():
        raise bad(f"expected text, found {claim!r}", field)
    label = row.get("label")
    if label is not None and label not in LABELS:
        raise bad(f"expected one of {', '.join(LABELS)}, found {label!r}", "label")
    when = "date" if "date" in row else "claim_date"
    try:
        claim_time = _date(row.get(when))
    except ValueError:
        raise bad(f"expected a date DD-MM-YYYY or YYYY-MM-DD, found {row.get(when)!r}", when) from None
    images = row.get("claim_images") or []
    image = None
    if images:
        first = PurePosixPath(str(images[0])).name  # the baseline reads the file name under images/
        if first in ("", ".", ".."):
            raise bad(f"expected an image file name, found {images[0]!r}", "claim_images")
        image = f"images/{first}"
    key = sha256_hex(f"{name}\n{split}\n{line}\n{claim}")[:12]
    read = {field, "label", when, "claim_images", "questions", "justification"}
    return Sample(
        id=f"{name}-{split}-{key}",
        claim=claim.strip(),
        image=Image(path=image) if image else None,
        label=LABELS.get(label) if label else None,
        label_original=label,
        claim_time=claim_time,
        news_url=str(row.get("fact_checking_article") or row.get("article") or f"urn:{name}:{split}:{key}"),
        reasoning_logic=row.get("justification") or None,
        evidence=_evidence(row.get("questions")),
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={k: v for k, v in row.items() if k not in read and v not in (None, "", [])},
    )


def read_split(name: str, root: str | Path, split: str) -> list[Sample]:
    """The split's records as samples (claim images under ``root``/images)."""
    path = split_file(name, root, split)
    return [s for line, row in json_records(path) if (s := _sample(name, row, path, line, split)) is not None]


__all__ = ["LABELS", "SPACE", "SPLITS", "read_split", "split_file"]
