"""MMFakeBench (Liu et al., ICLR 2025) from its released layout, and its own metrics.

The release (``liuxuannan/MMFakeBench``, README) is one folder per split: ``source/MMFakeBench_<split>.json``
(a JSON array) beside the image folders ``real/...`` and ``fake/...``. Each record::

    {"image_path": "/fake/fever_AI_val_100/fever_dalle_val_1.jpg",
     "text": "Wi-Fi is a trademark of Microsoft.",
     "fake_cls": "textual_veracity_distortion", "gt_answers": ["Fake"]}

``image_path`` is relative to the split folder, ``gt_answers`` the binary label (``True`` / ``Fake``),
``fake_cls`` the 4-class one (``original``, ``textual_veracity_distortion``, ``visual_veracity_distortion``,
``mismatch``: the cross-modal consistency distortion). Record fields read: these four, ``text`` the claim.
:func:`read_mmfakebench` gives runner samples: the
binary view as labels (True -> True, Fake -> False; the runner's image root is the split folder), the
4-class label in ``extra["fake_cls"]`` (never shown to a detector: blinding empties ``extra``). A bad record
is one :class:`~rwpost.errors.RecordError` naming the file, line and field.

:func:`mmfakebench_scores` computes the benchmark's binary and multi-class accuracy, precision, recall and
F1 as its ``eval/main_eval_only.py`` does (``calculate_multiclass_metrics``): per-class scores over the
classes seen in gold or predictions, summed and divided by the benchmark's class count (2 or 4); an
unparsable answer is a class of its own (``X``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.datasets import json_records, record_object
from rwpost.evaluate.datasets.spaces import LabelSpace, head_answer
from rwpost.io import sha256_hex
from rwpost.labels import Label
from rwpost.records import Image, Provenance, Sample

BINARY = {"True": Label.TRUE, "Fake": Label.FALSE}
"""``gt_answers`` -> the runner's label."""

CLASSES: tuple[str, ...] = (
    "original",
    "textual_veracity_distortion",
    "visual_veracity_distortion",
    "mismatch",
)
"""The 4-class view, in the benchmark's order (``multiclass_label_map``)."""

UNPARSED = "X"

SPACE = LabelSpace(
    name="mmfakebench_binary",
    description="MMFakeBench's binary label (gt_answers: True, Fake), every sample; the 4-class scores are "
    "benchmark_scores.multiclass",
    classes=("True", "Fake"),
    gold=lambda s: "True" if s.extra.get("fake_cls") == "original" else "Fake",
    from_label={Label.TRUE: "True", Label.FALSE: "Fake"},
)
"""MMFakeBench's label space: ``gt_answers``; an RW-Post answer True is ``True``, False is ``Fake``."""


def split_file(root: str | Path, split: str) -> Path:
    """``<root>/source/MMFakeBench_<split>.json`` (``split``: ``val`` or ``test``)."""
    path = Path(root) / "source" / f"MMFakeBench_{split}.json"
    if not path.is_file():
        raise ConfigError(
            f"{path}: not found; give the MMFakeBench_{split} folder (it holds source/ and the images)"
        )
    return path


def _sample(row: Any, path: Path, line: int, split: str) -> Sample:
    row, bad = record_object(row, path, line)
    for key in ("image_path", "text"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise bad(f"expected text, found {row.get(key)!r}", key)
    answers = row.get("gt_answers")
    answer = answers[0] if isinstance(answers, list) and answers else answers
    if answer not in BINARY:
        raise bad(f"expected ['True'] or ['Fake'], found {answers!r}", "gt_answers")
    fake_cls = row.get("fake_cls")
    if fake_cls not in CLASSES:
        raise bad(f"expected one of {', '.join(CLASSES)}, found {fake_cls!r}", "fake_cls")
    if (fake_cls == "original") != (answer == "True"):
        raise bad(f"gt_answers {answer!r} contradicts fake_cls {fake_cls!r}", "gt_answers")
    image_path = row["image_path"].lstrip("/")
    key = sha256_hex(f"{split}\n{image_path}\n{row['text']}")[:16]
    return Sample(
        id=f"mmfb-{key}",
        claim=row["text"],
        image=Image(path=image_path),
        label=BINARY[answer],
        label_original=fake_cls,
        category=image_path.split("/")[1] if image_path.count("/") >= 2 else None,
        news_url=f"urn:mmfakebench:{split}:{key}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={"fake_cls": fake_cls},
    )


def read_mmfakebench(root: str | Path, split: str = "test") -> list[Sample]:
    """The split's records as samples (images under ``root``, the runner's ``image_root``)."""
    path = split_file(root, split)
    return [_sample(row, path, line, split) for line, row in json_records(path)]


def native_class(prediction: Any) -> str:
    """A detector's 4-class answer from its explanation's first line (``T2Agent answer: mismatch``,
    ``AgentM3D answer: ...``, ``MMD-Agent answer: ...``, or the class alone; ``X`` when it names none)."""
    first = (prediction.explanation or "").split("\n", 1)[0]
    value = (head_answer(first) or first.split(" (")[0]).strip()
    return value if value in CLASSES else UNPARSED


def _scores(gold: Sequence[str], predicted: Sequence[str], n_classes: int) -> dict[str, float]:
    labels = sorted(set(gold) | set(predicted))
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, predicted, strict=True):
        matrix[index[g]][index[p]] += 1
    size = range(len(labels))
    tp = [matrix[i][i] for i in size]
    column = [sum(matrix[r][i] for r in size) for i in size]
    row = [sum(matrix[i]) for i in size]
    precision = [tp[i] / column[i] if column[i] else 0.0 for i in size]
    recall = [tp[i] / row[i] if row[i] else 0.0 for i in size]
    f1 = [2 * p * r / (p + r) if p + r else 0.0 for p, r in zip(precision, recall, strict=True)]
    return {
        "accuracy": sum(tp) / max(len(gold), 1),
        "precision": sum(precision) / n_classes,
        "recall": sum(recall) / n_classes,
        "f1": sum(f1) / n_classes,
    }


def mmfakebench_scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, dict[str, float]]:
    """MMFakeBench's binary and multi-class scores of 4-class ``gold`` and ``predicted`` classes."""
    binary = {c: "True" if c == "original" else "Fake" for c in CLASSES} | {UNPARSED: UNPARSED}
    return {
        "binary": _scores([binary[g] for g in gold], [binary[p] for p in predicted], 2),
        "multiclass": _scores(list(gold), list(predicted), 4),
    }


def own_scores(
    samples: Sequence[Sample], predictions: Sequence[Any], metrics: Any = None
) -> dict[str, dict[str, float]]:
    """The registry's ``own_scores``: ``main_eval_only.py``'s binary scores of the predicted labels (True ->
    ``True``, False -> ``Fake``, anything else unparsed), and its 4-class scores when the detector answered in
    the native classes (any detector whose explanation names one: :func:`native_class`)."""
    gold = [s.extra.get("fake_cls") or UNPARSED for s in samples]
    binary = {c: "True" if c == "original" else "Fake" for c in CLASSES} | {UNPARSED: UNPARSED}
    said = {Label.TRUE: "True", Label.FALSE: "Fake"}
    out = {
        "binary": _scores([binary[g] for g in gold], [said.get(p.label, UNPARSED) for p in predictions], 2)
    }
    native = [native_class(p) for p in predictions]
    if any(n != UNPARSED for n in native):
        out["multiclass"] = _scores(gold, native, 4)
    return out


__all__ = [
    "CLASSES",
    "mmfakebench_scores",
    "own_scores",
    "native_class",
    "read_mmfakebench",
    "split_file",
]
