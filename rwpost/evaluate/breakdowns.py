"""Scores broken down by sample properties (paper section V and Fig. S1's difficulty buckets)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rwpost.labels import Label
from rwpost.records import Sample

DIFFICULTY_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("0", 0, 0),
    ("1-3", 1, 3),
    ("4-6", 4, 6),
    ("7-8", 7, 8),
    ("9+", 9, 10**9),
)
"""Claim difficulty by number of gold evidence items (paper Fig. S1: 1-3, 4-6, 7-8, 9+)."""

_MODALITIES = (
    ("image", "Image"),
    ("video", "Video"),
    ("link", "Web link"),
    ("web", "Web link"),
    ("text", "Text"),
)


def difficulty(sample: Sample) -> str:
    """The difficulty bucket of a sample by its number of gold evidence items."""
    n = len(sample.evidence)
    return next(name for name, low, high in DIFFICULTY_BUCKETS if low <= n <= high)


def evidence_modalities(sample: Sample) -> list[str]:
    """The modalities of a sample's gold evidence (a sample with Text and Image evidence is in both)."""
    found = set()
    for item in sample.evidence:
        kind = (item.type or "").lower()
        matched = {name for key, name in _MODALITIES if key in kind}
        found |= matched or {item.type or "unknown"}
    return sorted(found) or ["none"]


def _one(value: object) -> Callable[[Sample], list[str]]:
    return lambda s: [str(value(s)) if value(s) is not None else "unknown"]  # type: ignore[operator]


DIMENSIONS: dict[str, Callable[[Sample], list[str]]] = {
    "label": _one(lambda s: s.label),
    "category": _one(lambda s: s.category),
    "claim_year": _one(lambda s: s.claim_time.year if s.claim_time else None),
    "evidence_modality": evidence_modalities,
    "image_required": _one(lambda s: s.image_required),
    "difficulty": lambda s: [difficulty(s)],
}
"""Breakdown dimensions: each maps a sample to the groups it belongs to."""


def group_scores(gold: np.ndarray, predicted: np.ndarray) -> dict[str, Any]:
    """Accuracy and macro/weighted F1 of one group over the gold labels present in it, from integer
    label codes (equal to scikit-learn's ``f1_score(labels=<gold present>)``: a prediction of a class
    absent from the group's gold is wrong but averaged over by no class)."""
    labels = np.unique(gold)
    size = int(max(gold.max(), predicted.max())) + 1
    m = np.bincount(gold * size + predicted, minlength=size * size).reshape(size, size)
    tp, support, called = np.diag(m)[labels], m.sum(axis=1)[labels], m.sum(axis=0)[labels]
    den = support + called
    f1 = np.divide(2 * tp, den, out=np.zeros(len(labels)), where=den > 0)
    return {
        "n": len(gold),
        "accuracy": float(np.trace(m) / len(gold)),
        "macro_f1": float(f1.mean()),
        "weighted_f1": float((f1 * support).sum() / support.sum()),
    }


def breakdowns(samples: Sequence[Sample], predicted: Sequence[Label | None]) -> dict[str, dict[str, Any]]:
    """Scores per group of every dimension, over the labelled samples; groups sorted by name."""
    names = sorted({str(s.label) for s in samples if s.label is not None} | {"Other"})
    names += sorted({str(p) for p in predicted if p is not None} - set(names))
    code = {name: i for i, name in enumerate(names)}
    gold = np.array([code[str(s.label)] if s.label is not None else -1 for s in samples])
    pred = np.array([code[str(p)] if p is not None else code["Other"] for p in predicted])
    out: dict[str, dict[str, Any]] = {}
    for dimension, groups_of in DIMENSIONS.items():
        members: dict[str, list[int]] = {}
        for i, sample in enumerate(samples):
            if sample.label is None:
                continue
            for group in groups_of(sample):
                members.setdefault(group, []).append(i)
        out[dimension] = {group: group_scores(gold[idx], pred[idx]) for group, idx in sorted(members.items())}
    return out
