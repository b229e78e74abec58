"""Inter-annotator agreement per question: Cohen's kappa and Krippendorff's alpha.

Cohen's kappa needs two fixed raters; Label Studio hands each task to any two annotators, so, as usual
for crowd-style overlap, rater A is a task's first submitted annotation and rater B its second.
Krippendorff's alpha needs no such convention and tolerates missing answers; it is computed here from
the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's alpha-reliability") and tested
against that paper's worked example.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import Literal

from rwpost.records import ExplanationScore, ValidationVerdict

Level = Literal["nominal", "ordinal", "interval"]

VALIDATION_QUESTIONS: dict[str, Level] = {"post_extraction": "nominal", "image_role": "nominal"}
"""Questions of the validation project and their measurement level."""
EXPLANATION_QUESTIONS: dict[str, Level] = {
    "reasoning_hallucination": "ordinal",
    "evidence_hallucination": "ordinal",
    "label_justification": "ordinal",
}
"""Criteria of the explanation project (0-2 ordinal scales, paper Tables S3-S5)."""


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters over the same items (NaN when chance agreement is total)."""
    from sklearn.metrics import cohen_kappa_score

    if len(a) != len(b):
        raise ValueError(f"raters rated different numbers of items: {len(a)} and {len(b)}")
    if not a:
        return math.nan
    labels = sorted({*a, *b}, key=str)
    if len(labels) == 1:
        return math.nan  # both raters used one category only: kappa is 0/0
    return float(cohen_kappa_score([str(x) for x in a], [str(x) for x in b], labels=[str(x) for x in labels]))


def _delta2(level: Level, c: Hashable, k: Hashable, counts: dict[Hashable, float], order: list) -> float:
    if c == k:
        return 0.0
    if level == "nominal":
        return 1.0
    if level == "interval":
        return (float(c) - float(k)) ** 2  # type: ignore[arg-type]
    lo, hi = sorted((order.index(c), order.index(k)))
    between = sum(counts[order[g]] for g in range(lo, hi + 1))
    return (between - (counts[c] + counts[k]) / 2.0) ** 2


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]], level: Level = "nominal") -> float:
    """Krippendorff's alpha over units, each a list of the values coders gave it (None = not coded).

    Units with fewer than two values are not pairable and are ignored. NaN when there is no variation.
    Ordinal and interval levels need values that sort (ordinal) or are numbers (interval).
    """
    coincidence: dict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[(c, k)] += 1.0 / (m - 1)
    counts: dict[Hashable, float] = defaultdict(float)
    for (c, _k), weight in coincidence.items():
        counts[c] += weight
    n = sum(counts.values())
    if n <= 1:
        return math.nan
    order = sorted(counts)
    observed = sum(w * _delta2(level, c, k, counts, order) for (c, k), w in coincidence.items())
    expected = sum(counts[c] * counts[k] * _delta2(level, c, k, counts, order) for c in order for k in order)
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * observed / expected


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def question_agreement(ratings: dict[Hashable, list[tuple[int, Hashable | None]]], level: Level) -> dict:
    """Agreement of one question; ``ratings`` maps unit -> [(annotation order key, value), ...]."""
    units, a, b = [], [], []
    for unit_ratings in ratings.values():
        ordered = [v for _key, v in sorted(unit_ratings, key=lambda kv: kv[0])]
        units.append(ordered)
        present = [v for v in ordered if v is not None]
        if len(present) >= 2:
            a.append(present[0])
            b.append(present[1])
    agree = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    return {
        "level": level,
        "units": len(units),
        "paired_units": len(a),
        "percent_agreement": round(100.0 * agree / len(a), 4) if a else None,
        "cohen_kappa": _nan_to_none(cohen_kappa(a, b)) if a else None,
        "krippendorff_alpha": _nan_to_none(krippendorff_alpha(units, level)),
        "distribution": dict(sorted(Counter(str(v) for u in units for v in u if v is not None).items())),
    }


def validation_agreement(verdicts: Sequence[ValidationVerdict]) -> dict[str, dict]:
    """Per-question agreement of the two annotators of the validation project (adjudications excluded)."""
    out = {}
    for question, level in VALIDATION_QUESTIONS.items():
        ratings: dict[Hashable, list] = defaultdict(list)
        for v in verdicts:
            if not v.adjudicated:
                ratings[v.id].append((v.annotation_id, getattr(v, question)))
        out[question] = question_agreement(ratings, level)
    return out


def explanation_agreement(scores: Sequence[ExplanationScore]) -> dict[str, dict]:
    """Per-criterion agreement over (record, output) units of the explanation project."""
    out = {}
    for question, level in EXPLANATION_QUESTIONS.items():
        ratings: dict[Hashable, list] = defaultdict(list)
        for s in scores:
            ratings[(s.id, s.slot)].append((s.annotation_id, getattr(s, question)))
        out[question] = question_agreement(ratings, level)
    return out
