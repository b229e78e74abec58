"""Classification metrics for the paper's views (section V, Table III, Fig. S1), from scikit-learn and scipy.

Every score is a scikit-learn or scipy function; only the expected calibration error, which neither
provides for multi-class outputs, is written here. A prediction outside a view's classes (or no
prediction at all) becomes the class ``Other``: it counts as wrong and appears as its own column of the
confusion matrix, but is not averaged over as a class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
    roc_auc_score,
)

from rwpost.labels import CHALLENGING_LABELS, MAIN_LABELS, Label

OTHER = "Other"
"""The view class of a prediction outside the view's classes, or of a missing prediction."""

HEADLINE = ("accuracy", "macro_f1", "weighted_f1", "weighted_precision", "weighted_recall")
"""The metrics every view reports, with bootstrap intervals (paper Table III reports F1, Acc, Rec, P)."""


@dataclass(frozen=True)
class View:
    """One way of scoring: which gold labels count, and how labels map to the view's classes."""

    name: str
    description: str
    gold: tuple[Label, ...]
    classes: tuple[str, ...]
    mapping: Mapping[Label, str] = field(default_factory=dict)

    def view_class(self, label: Label | str | None) -> str:
        """The view's class for a (gold or predicted) label; ``Other`` when it has none."""
        if label is None:
            return OTHER
        try:
            key = Label(label)
        except ValueError:
            return OTHER
        return self.mapping.get(key, OTHER)


def _identity(labels: Sequence[Label]) -> dict[Label, str]:
    return {label: str(label) for label in labels}


VIEWS: dict[str, View] = {
    "main": View(
        "main",
        "main set, 3 classes True/False/Unproven (paper Table III)",
        MAIN_LABELS,
        tuple(str(x) for x in MAIN_LABELS),
        _identity(MAIN_LABELS),
    ),
    "binary": View(
        "binary",
        "True vs False: gold True or False only; any other prediction is wrong",
        (Label.TRUE, Label.FALSE),
        ("True", "False"),
        _identity((Label.TRUE, Label.FALSE)),
    ),
    "true_vs_not_true": View(
        "true_vs_not_true",
        "main set, True vs not True (False and Unproven merged, paper Fig. S1a)",
        MAIN_LABELS,
        ("True", "Not True"),
        {Label.TRUE: "True", Label.FALSE: "Not True", Label.UNPROVEN: "Not True"},
    ),
    "challenging": View(
        "challenging",
        "challenging set, Mixture vs Outdated (paper section III-E)",
        CHALLENGING_LABELS,
        tuple(str(x) for x in CHALLENGING_LABELS),
        _identity(CHALLENGING_LABELS),
    ),
}
"""The views reported for every run; a view with no gold samples in the data is reported as empty."""


def headline_scores(y_true: Sequence[str], y_pred: Sequence[str], classes: Sequence[str]) -> dict[str, float]:
    """Accuracy, macro F1 and weighted precision/recall/F1 over ``classes`` (scikit-learn)."""
    labels = list(classes)
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average="weighted", zero_division=0
    )
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)),
        "weighted_f1": float(f1),
        "weighted_precision": float(precision),
        "weighted_recall": float(recall),
    }


def per_class_scores(
    y_true: Sequence[str], y_pred: Sequence[str], classes: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support of each class (scikit-learn)."""
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=list(classes), average=None, zero_division=0
    )
    return {
        c: {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
        for c, p, r, f, s in zip(classes, precision, recall, f1, support, strict=True)
    }


def confusion(y_true: Sequence[str], y_pred: Sequence[str], classes: Sequence[str]) -> dict[str, Any]:
    """Confusion matrix, rows gold and columns predicted; an ``Other`` column when some prediction is."""
    columns = list(classes) + ([OTHER] if OTHER in set(y_pred) else [])
    matrix = confusion_matrix(y_true, y_pred, labels=columns)[: len(classes)]  # no gold is ever Other
    return {"labels": columns, "rows": "gold", "columns": "predicted", "matrix": matrix.tolist()}


def class_probabilities(probabilities: Mapping[str, float] | None, view: View) -> np.ndarray | None:
    """One sample's probabilities of the view's classes (labels summed into their class, renormalised);
    None when it has none, or no mass on the view's classes."""
    if not probabilities:
        return None
    row = np.zeros(len(view.classes))
    for label, p in probabilities.items():
        cls = view.view_class(label)
        if cls != OTHER:
            row[view.classes.index(cls)] += float(p)
    return row / row.sum() if row.sum() > 0 else None


def roc_auc_ovr(y_true: Sequence[str], proba: np.ndarray, classes: Sequence[str]) -> float | None:
    """ROC-AUC one-vs-rest (binary: of the first class); None unless every class occurs in the gold."""
    present = set(y_true)
    if any(c not in present for c in classes):
        return None
    if len(classes) == 2:
        positives = np.array([y == classes[0] for y in y_true])
        return float(roc_auc_score(positives, proba[:, 0]))
    order = sorted(range(len(classes)), key=lambda i: classes[i])  # scikit-learn wants sorted labels
    return float(
        roc_auc_score(list(y_true), proba[:, order], multi_class="ovr", labels=[classes[i] for i in order])
    )


def reliability_bins(
    y_true: Sequence[str], proba: np.ndarray, classes: Sequence[str], n_bins: int = 10
) -> list[dict[str, float]]:
    """Top-label confidence vs accuracy in equal-width bins (the reliability diagram's points)."""
    confidence = proba.max(axis=1)
    predicted = np.array(classes)[proba.argmax(axis=1)]
    correct = predicted == np.array(y_true)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, n_bins - 1)
    bins = []
    for b in range(n_bins):
        mask = which == b
        if mask.any():
            bins.append(
                {
                    "low": float(edges[b]),
                    "high": float(edges[b + 1]),
                    "count": int(mask.sum()),
                    "confidence": float(confidence[mask].mean()),
                    "accuracy": float(correct[mask].mean()),
                }
            )
    return bins


def expected_calibration_error(bins: Sequence[Mapping[str, float]]) -> float:
    """ECE: the count-weighted mean gap between confidence and accuracy over reliability bins."""
    total = sum(b["count"] for b in bins)
    return (
        float(sum(b["count"] / total * abs(b["accuracy"] - b["confidence"]) for b in bins)) if total else 0.0
    )


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Percentile bootstrap interval of ``statistic(indices)`` over ``n`` samples (scipy); None if n < 2."""
    if n < 2 or n_resamples <= 0:
        return None
    result = stats.bootstrap(
        (np.arange(n),),
        statistic,
        n_resamples=n_resamples,
        vectorized=False,
        method="percentile",
        confidence_level=confidence_level,
        rng=np.random.default_rng(seed),
    )
    return np.atleast_1d(result.confidence_interval.low), np.atleast_1d(result.confidence_interval.high)


def headline_intervals(
    y_true: Sequence[str],
    y_pred: Sequence[str],
    classes: Sequence[str],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, list[float]] | None:
    """95% bootstrap intervals of every headline metric, resampling samples with replacement."""
    true, pred = np.asarray(y_true), np.asarray(y_pred)

    def statistic(idx: np.ndarray) -> np.ndarray:
        scores = headline_scores(true[idx], pred[idx], classes)
        return np.array([scores[k] for k in HEADLINE])

    interval = bootstrap_interval(statistic, len(true), n_resamples=n_resamples, seed=seed)
    if interval is None:
        return None
    low, high = interval
    return {k: [float(lo), float(hi)] for k, lo, hi in zip(HEADLINE, low, high, strict=True)}


def view_metrics(
    gold: Sequence[Label | None],
    predicted: Sequence[Label | None],
    view: View,
    *,
    probabilities: Sequence[Mapping[str, float] | None] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    n_bins: int = 10,
) -> dict[str, Any]:
    """All metrics of one view over the samples whose gold label belongs to it."""
    keep = [i for i, g in enumerate(gold) if g is not None and Label(g) in view.gold]
    out: dict[str, Any] = {"view": view.name, "description": view.description, "n": len(keep)}
    if not keep:
        return out
    y_true = [view.view_class(gold[i]) for i in keep]
    y_pred = [view.view_class(predicted[i]) for i in keep]
    out.update(headline_scores(y_true, y_pred, view.classes))
    out["n_other"] = sum(p == OTHER for p in y_pred)
    out["per_class"] = per_class_scores(y_true, y_pred, view.classes)
    out["confusion_matrix"] = confusion(y_true, y_pred, view.classes)
    out["ci95"] = headline_intervals(y_true, y_pred, view.classes, n_resamples=n_resamples, seed=seed)
    # Probability scores over the samples that have probabilities (a failed answer has none).
    rows = [class_probabilities(probabilities[i], view) for i in keep] if probabilities is not None else []
    scored = [j for j, row in enumerate(rows) if row is not None]
    if scored:
        proba = np.vstack([rows[j] for j in scored])
        truth = [y_true[j] for j in scored]
        out["n_with_probabilities"] = len(scored)
        out["roc_auc_ovr"] = roc_auc_ovr(truth, proba, view.classes)
        bins = reliability_bins(truth, proba, view.classes, n_bins=n_bins)
        out["ece"] = expected_calibration_error(bins)
        out["reliability"] = bins
    return out


def paired_comparison(
    gold: Sequence[Label | None],
    predicted_a: Sequence[Label | None],
    predicted_b: Sequence[Label | None],
    view: View,
    *,
    metric: str = "macro_f1",
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Run A minus run B on the same samples: paired bootstrap of the difference and exact McNemar.

    McNemar's exact test is the two-sided binomial test (scipy) on the discordant pairs: samples one
    run gets right and the other wrong.
    """
    keep = [i for i, g in enumerate(gold) if g is not None and Label(g) in view.gold]
    true = np.array([view.view_class(gold[i]) for i in keep])
    a = np.array([view.view_class(predicted_a[i]) for i in keep])
    b = np.array([view.view_class(predicted_b[i]) for i in keep])
    out: dict[str, Any] = {"view": view.name, "metric": metric, "n": len(keep)}
    if not keep:
        return out

    def difference(idx: np.ndarray) -> np.ndarray:
        return np.array(
            [
                headline_scores(true[idx], a[idx], view.classes)[metric]
                - headline_scores(true[idx], b[idx], view.classes)[metric]
            ]
        )

    out["a"] = headline_scores(true, a, view.classes)[metric]
    out["b"] = headline_scores(true, b, view.classes)[metric]
    out["difference"] = out["a"] - out["b"]
    interval = bootstrap_interval(difference, len(keep), n_resamples=n_resamples, seed=seed)
    out["difference_ci95"] = [float(interval[0][0]), float(interval[1][0])] if interval else None
    only_a = int(((a == true) & (b != true)).sum())
    only_b = int(((a != true) & (b == true)).sum())
    out["mcnemar"] = {
        "a_right_b_wrong": only_a,
        "a_wrong_b_right": only_b,
        "p_value": float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue) if only_a + only_b else 1.0,
    }
    return out


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation, min and max of a metric over repeated runs."""
    arr = np.asarray(values, dtype=float)
    return {
        "mean": float(arr.mean()),
        "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        "min": float(arr.min()),
        "max": float(arr.max()),
        "values": [float(v) for v in arr],
    }
