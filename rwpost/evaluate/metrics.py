"""Classification metrics for the paper's views (section V, Table III, Fig. S1), with bootstrap intervals.

Every headline score (weighted F1, accuracy, weighted recall, weighted precision and macro F1, paper
Table III order plus Table V's macro F1) is computed from one confusion count per bootstrap resample, all
resamples at once (``np.bincount`` on gold/predicted code pairs); the scores equal scikit-learn's
(``tests/test_evaluate_metrics.py (class TestTrust)`` checks each failure policy against a direct scikit-learn
computation). Only the expected calibration error, which neither library provides for multi-class
outputs, is written here too.

A sample's answer is one of the view's classes, a label outside the view (``Other``: always a wrong
answer) or no answer at all (a failure: no label, an unreadable or invalid label). How failures are
scored is the run's *failure policy* (:data:`FAILURE_POLICIES`), named in every table:

- ``wrong`` (default): scored over all samples; a failure is the worst wrong answer, a miss of its gold
  class and a false alarm of every other class (scikit-learn: a multilabel indicator row with every wrong
  class set). Failing can never score higher than answering wrongly, on any metric.
- ``exclude``: scored on the answered samples only (as the AgentFact repository's analysis script does).
- ``class``: a failure predicts the class ``No answer``, which joins the macro average when it occurs
  (as DEFAME's ``REFUSED_TO_ANSWER``).

An out-of-view answer (``Other``) is scored like a ``wrong`` failure in every policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

from rwpost.errors import ConfigError
from rwpost.labels import CHALLENGING_LABELS, MAIN_LABELS, Label
from rwpost.resampling import percentile_interval, resample_indices

OTHER = "Other"
"""The view class of a prediction outside the view's classes (or of a missing prediction)."""

NO_ANSWER = "No answer"
"""The column of failed answers (no label); a class of its own under the ``class`` policy."""

HEADLINE = ("weighted_f1", "accuracy", "weighted_recall", "weighted_precision", "macro_f1")
"""The metrics every view reports with bootstrap intervals: paper Table III order, then Table V's macro F1."""

FAILURE_POLICIES: dict[str, str] = {
    "wrong": "over all samples, a failure is a wrong answer (a miss of its gold class and a false alarm "
    "of every other class)",
    "exclude": "on answered samples only (as AgentFact's analysis script)",
    "class": f"a failure is a '{NO_ANSWER}' class inside the macro average (as DEFAME)",
}
"""How a failed answer is scored (``--failures``); the policy is named in every table and the manifest."""

PROBABILITY_TOLERANCE = 1e-3
"""How far from 1 a sample's probabilities may sum and still be scored (rounding in a file)."""


@dataclass(frozen=True)
class View:
    """One way of scoring: which gold labels count, and how labels map to the view's classes."""

    name: str
    description: str
    gold: tuple[Label, ...]
    classes: tuple[str, ...]
    mapping: Mapping[Label, str] = field(default_factory=dict)
    derived: bool = False
    """Scored from answers in another label space (2 classes from 3-class answers): every table says so."""

    @property
    def title(self) -> str:
        """The view's name as tables print it (``binary (derived)`` for a derived view)."""
        return f"{self.name} (derived)" if self.derived else self.name

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
        derived=True,
    ),
    "true_vs_not_true": View(
        "true_vs_not_true",
        "main set, True vs not True (False and Unproven merged, paper Fig. S1a)",
        MAIN_LABELS,
        ("True", "Not True"),
        {Label.TRUE: "True", Label.FALSE: "Not True", Label.UNPROVEN: "Not True"},
        derived=True,
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


def check_policy(failures: str) -> str:
    """``failures`` if it is a known failure policy; else a ConfigError naming the known ones."""
    if failures not in FAILURE_POLICIES:
        raise ConfigError(f"--failures must be one of {', '.join(FAILURE_POLICIES)}, got {failures!r}")
    return failures


@dataclass(frozen=True)
class Coded:
    """A view's samples as integer codes. Gold: ``0..k-1``. Predicted: a class ``0..k-1``, ``k`` (a wrong
    answer that is a false alarm of every class but the gold one: ``Other``, and failures under
    ``wrong``) or ``k + 1`` (``No answer``: failures under ``class``). ``answered`` marks samples with an
    answer; under ``exclude`` the failures are already left out of ``true``/``pred``."""

    classes: tuple[str, ...]
    true: np.ndarray
    pred: np.ndarray
    failures: str
    n_total: int
    n_failed: int
    n_other: int

    @property
    def k(self) -> int:
        return len(self.classes)

    @property
    def macro_classes(self) -> list[str]:
        """The classes the macro average runs over."""
        extra = [NO_ANSWER] if self.failures == "class" and self.n_failed else []
        return [*self.classes, *extra]


def encode(
    y_true: Sequence[str], y_pred: Sequence[str | None], classes: Sequence[str], failures: str = "wrong"
) -> Coded:
    """Code a view's gold and predicted classes (None: a failure) under a failure policy."""
    check_policy(failures)
    k = len(classes)
    index = {c: i for i, c in enumerate(classes)}
    true = np.fromiter((index[y] for y in y_true), dtype=np.int64, count=len(y_true))
    failed = np.fromiter((p is None for p in y_pred), dtype=bool, count=len(y_pred))
    pred = np.fromiter(
        (k + 1 if p is None else index.get(p, k) for p in y_pred), dtype=np.int64, count=len(y_pred)
    )
    n_other = int((pred == k).sum())
    if failures == "wrong":
        pred = np.where(failed, k, pred)
    elif failures == "exclude":
        true, pred = true[~failed], pred[~failed]
    return Coded(tuple(classes), true, pred, failures, len(y_true), int(failed.sum()), n_other)


def counts(coded: Coded, idx: np.ndarray | None = None) -> np.ndarray:
    """Gold-by-answer counts, shape ``(resamples, k, k + 2)``: one confusion count per row of ``idx``
    (bootstrap indices, shape ``(resamples, n)``), or a single one over all samples."""
    k, width = coded.k, coded.k + 2
    pair = coded.true * width + coded.pred
    if idx is None:
        return np.bincount(pair, minlength=k * width).reshape(1, k, width)
    b = idx.shape[0]
    flat = pair[idx] + (np.arange(b, dtype=np.int64) * (k * width))[:, None]
    return np.bincount(flat.ravel(), minlength=b * k * width).reshape(b, k, width)


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0 (scikit-learn's ``zero_division=0``)."""
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def per_class_counts(m: np.ndarray) -> dict[str, np.ndarray]:
    """True positives, false positives, false negatives and support per class from :func:`counts`."""
    k = m.shape[1]
    tp = m[:, np.arange(k), np.arange(k)]
    support = m.sum(axis=2)
    every_wrong = m[:, :, k]  # a false alarm of every class but its gold one
    fp = m[:, :, :k].sum(axis=1) - tp + every_wrong.sum(axis=1, keepdims=True) - every_wrong
    return {"tp": tp, "fp": fp, "fn": support - tp, "support": support}


def scores_from_counts(m: np.ndarray, n_macro: int) -> dict[str, np.ndarray]:
    """Every headline metric per row of :func:`counts` (the macro average over ``n_macro`` classes: the
    view's classes, plus ``No answer`` whose F1 is 0 since it is never gold)."""
    c = per_class_counts(m)
    tp, fp, fn, support = c["tp"], c["fp"], c["fn"], c["support"]
    n = support.sum(axis=1)
    precision, recall, f1 = _div(tp, tp + fp), _div(tp, support), _div(2 * tp, 2 * tp + fp + fn)
    return {
        "weighted_f1": _div((f1 * support).sum(axis=1), n),
        "accuracy": _div(tp.sum(axis=1), n),
        "weighted_recall": _div((recall * support).sum(axis=1), n),
        "weighted_precision": _div((precision * support).sum(axis=1), n),
        "macro_f1": f1.sum(axis=1) / n_macro,
    }


def headline_scores(coded: Coded) -> dict[str, float]:
    """Weighted F1, accuracy, weighted recall, weighted precision and macro F1 of all samples."""
    if not coded.true.size:
        return {k: None for k in HEADLINE}  # type: ignore[misc]
    scores = scores_from_counts(counts(coded), len(coded.macro_classes))
    return {k: float(scores[k][0]) for k in HEADLINE}


def per_class_scores(coded: Coded) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support of each class (equal to scikit-learn's ``average=None``)."""
    c = {k: v[0] for k, v in per_class_counts(counts(coded)).items()}
    precision = _div(c["tp"], c["tp"] + c["fp"])
    recall = _div(c["tp"], c["support"])
    f1 = _div(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"])
    return {
        cls: {
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1": float(f1[i]),
            "support": int(c["support"][i]),
        }
        for i, cls in enumerate(coded.classes)
    }


def confusion(y_true: Sequence[str], y_pred: Sequence[str | None], classes: Sequence[str]) -> dict[str, Any]:
    """Confusion matrix, rows gold and columns predicted; an ``Other`` column when some answer is outside
    the view, a ``No answer`` column when some sample has none (whatever the failure policy)."""
    named = [OTHER if p is not None and p not in classes else p for p in y_pred]
    columns = list(classes) + [c for c in (OTHER, None) if c in set(named)]
    col = {c: j for j, c in enumerate(columns)}
    matrix = np.zeros((len(classes), len(columns)), dtype=int)
    row = {c: i for i, c in enumerate(classes)}
    for t, p in zip(y_true, named, strict=True):
        matrix[row[t], col[p]] += 1
    labels = [NO_ANSWER if c is None else c for c in columns]
    return {"labels": labels, "rows": "gold", "columns": "predicted", "matrix": matrix.tolist()}


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


def headline_intervals(
    coded: Coded, *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, list[float]] | None:
    """95% percentile bootstrap intervals of every headline metric (samples resampled with replacement;
    one set of indices for all metrics)."""
    idx = resample_indices(coded.true.size, n_resamples, seed)
    if idx is None:
        return None
    scores = scores_from_counts(counts(coded, idx), len(coded.macro_classes))
    return {k: list(percentile_interval(scores[k])) for k in HEADLINE}


def valid_probabilities(probabilities: Mapping[str, float] | None) -> bool:
    """Every probability in [0, 1] and the sum 1 (within :data:`PROBABILITY_TOLERANCE`)."""
    if not probabilities:
        return False
    values = np.array([float(p) for p in probabilities.values()])
    return bool(
        np.isfinite(values).all()
        and (values >= 0).all()
        and (values <= 1).all()
        and abs(values.sum() - 1) <= PROBABILITY_TOLERANCE
    )


def class_metrics(
    y_true: Sequence[str],
    y_pred: Sequence[str | None],
    classes: Sequence[str],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    failures: str = "wrong",
) -> dict[str, Any]:
    """Coverage, headline scores, per class, confusion and intervals of gold and predicted classes (each
    gold one of ``classes``; a prediction outside them is ``Other``, None a failure). The macro average
    runs over ``classes`` (plus ``No answer`` under ``class``), whether or not each occurs in the gold."""
    coded = encode(y_true, y_pred, classes, failures)
    answered = len(y_true) - coded.n_failed
    return {
        "coverage": {"answered": answered, "total": len(y_true), "fraction": answered / len(y_true)},
        "n_scored": int(coded.true.size),
        "macro_classes": coded.macro_classes,
        **headline_scores(coded),
        "n_other": coded.n_other,
        "n_failed": coded.n_failed,
        "per_class": per_class_scores(coded),
        "confusion_matrix": confusion(y_true, y_pred, classes),
        "ci95": headline_intervals(coded, n_resamples=n_resamples, seed=seed),
    }


def view_metrics(
    gold: Sequence[Label | None],
    predicted: Sequence[Label | None],
    view: View,
    *,
    probabilities: Sequence[Mapping[str, float] | None] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    n_bins: int = 10,
    failures: str = "wrong",
) -> dict[str, Any]:
    """All metrics of one view over the samples whose gold label belongs to it, under a failure policy.

    Probability scores (ROC-AUC, reliability, ECE) use the samples with valid probabilities (each in
    [0, 1], summing to 1); invalid ones are counted, never scored. Calibration is of the argmax of the
    probabilities, whatever label the detector gave.
    """
    keep = [i for i, g in enumerate(gold) if g is not None and Label(g) in view.gold]
    out: dict[str, Any] = {
        "view": view.name,
        "title": view.title,
        "derived": view.derived,
        "description": view.description,
        "n": len(keep),
        "failures": check_policy(failures),
    }
    if not keep:
        return out
    y_true = [view.view_class(gold[i]) for i in keep]
    y_pred = [None if predicted[i] is None else view.view_class(predicted[i]) for i in keep]
    out.update(
        class_metrics(y_true, y_pred, view.classes, n_resamples=n_resamples, seed=seed, failures=failures)
    )
    rows = [probabilities[i] for i in keep] if probabilities is not None else []
    given = [j for j, p in enumerate(rows) if p]
    valid = [j for j in given if valid_probabilities(rows[j])]
    out["n_invalid_probabilities"] = len(given) - len(valid)
    view_rows = {j: class_probabilities(rows[j], view) for j in valid}
    scored = [j for j in valid if view_rows[j] is not None]
    if scored:
        proba = np.vstack([view_rows[j] for j in scored])
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
    n_resamples: int = 1000,
    seed: int = 0,
    failures: str = "wrong",
) -> dict[str, Any]:
    """Run A minus run B on the same samples: a paired bootstrap of the difference of every headline
    metric (one set of resample indices for both runs), and McNemar's exact test beside accuracy.

    McNemar's exact test is the two-sided binomial test (scipy) on the discordant pairs: samples one
    run gets right and the other wrong; it tests accuracy only. Under ``exclude`` the samples both runs
    answered are compared.
    """
    return paired_repeats(
        gold, [predicted_a], [predicted_b], view, n_resamples=n_resamples, seed=seed, failures=failures
    )


MCNEMAR_OVER_REPEATS = (
    "not computed: McNemar's test takes one answer per sample; repeated runs are tested with the paired "
    "bootstrap over every repeat"
)


def paired_repeats(
    gold: Sequence[Label | None],
    repeats_a: Sequence[Sequence[Label | None]],
    repeats_b: Sequence[Sequence[Label | None]],
    view: View,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    failures: str = "wrong",
) -> dict[str, Any]:
    """:func:`paired_comparison` of repeated runs, paired over the repeats: repeat i of A with repeat i of B
    (or with B's single run). A, B and the difference are means over the pairs; each bootstrap resample
    draws samples once and averages the difference over every pair, so the interval and p-value are of
    the mean difference. McNemar's test is for one answer per sample: with more than one pair it is
    left out, with the reason. Under ``exclude`` the samples both runs answered in every pair are
    compared. Runs with different repeat counts (both above one) are refused."""
    if len(repeats_a) > 1 and len(repeats_b) > 1 and len(repeats_a) != len(repeats_b):
        raise ConfigError(
            f"run A has {len(repeats_a)} repeats and run B {len(repeats_b)}: repeats are paired one to one; "
            "compare runs with the same number of repeats (or one with a single run)"
        )
    n_pairs = max(len(repeats_a), len(repeats_b))
    pairs = [
        (repeats_a[min(r, len(repeats_a) - 1)], repeats_b[min(r, len(repeats_b) - 1)]) for r in range(n_pairs)
    ]
    keep = [i for i, g in enumerate(gold) if g is not None and Label(g) in view.gold]
    out: dict[str, Any] = {"view": view.name, "n": len(keep), "failures": check_policy(failures)}
    if not keep:
        return out
    gold_cls = [view.view_class(gold[i]) for i in keep]

    def classes_of(predicted: Sequence[Label | None]) -> list[str | None]:
        return [None if predicted[i] is None else view.view_class(predicted[i]) for i in keep]

    coded = [(classes_of(a), classes_of(b)) for a, b in pairs]

    def answered(repeats: Sequence[Sequence[Label | None]]) -> dict[str, Any]:
        per = [sum(predicted[i] is not None for i in keep) for predicted in repeats]
        extra = {"answered_per_repeat": per} if len(repeats) > 1 else {}
        return {"answered": min(per), "total": len(keep), **extra}

    out["coverage"] = {"a": answered(repeats_a), "b": answered(repeats_b)}
    if failures == "exclude":
        both = [j for j in range(len(keep)) if all(a[j] is not None and b[j] is not None for a, b in coded)]
        gold_cls = [gold_cls[j] for j in both]
        coded = [([a[j] for j in both], [b[j] for j in both]) for a, b in coded]
    out["n_scored"] = len(gold_cls)
    if not gold_cls:
        return out
    encoded = [
        (encode(gold_cls, a, view.classes, failures), encode(gold_cls, b, view.classes, failures))
        for a, b in coded
    ]
    idx = resample_indices(len(gold_cls), n_resamples, seed)
    point_a: dict[str, float] = dict.fromkeys(HEADLINE, 0.0)
    point_b: dict[str, float] = dict.fromkeys(HEADLINE, 0.0)
    diff: dict[str, np.ndarray] = {}
    for a, b in encoded:
        # both runs average over the same classes, so that a difference is of one metric
        n_macro = max(len(a.macro_classes), len(b.macro_classes))
        sa, sb = scores_from_counts(counts(a), n_macro), scores_from_counts(counts(b), n_macro)
        for k in HEADLINE:
            point_a[k] += float(sa[k][0]) / n_pairs
            point_b[k] += float(sb[k][0]) / n_pairs
        if idx is not None:
            ra, rb = scores_from_counts(counts(a, idx), n_macro), scores_from_counts(counts(b, idx), n_macro)
            for k in HEADLINE:
                diff[k] = diff.get(k, 0.0) + (ra[k] - rb[k]) / n_pairs
    out["metrics"] = {
        k: {
            "a": point_a[k],
            "b": point_b[k],
            "difference": point_a[k] - point_b[k],
            "difference_ci95": list(percentile_interval(diff[k])) if idx is not None else None,
            "bootstrap_p": float(min(1.0, 2 * min((diff[k] <= 0).mean(), (diff[k] >= 0).mean())))
            if idx is not None
            else None,
        }
        for k in HEADLINE
    }
    if n_pairs > 1:
        out["metrics"]["accuracy"]["mcnemar"] = {"p_value": None, "reason": MCNEMAR_OVER_REPEATS}
        return out
    a, b = encoded[0]
    right_a, right_b = a.pred == a.true, b.pred == b.true
    only_a, only_b = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
    out["metrics"]["accuracy"]["mcnemar"] = {
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
