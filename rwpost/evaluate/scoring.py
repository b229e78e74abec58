"""Score one run's predictions: every view, breakdowns, calibration, ledger, leakage audit, explanations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rwpost.evaluate.breakdowns import breakdowns
from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.explanations import evidence_url_scores, key_point_coverage
from rwpost.evaluate.leakage import BlockList, audit
from rwpost.evaluate.ledger import PriceTable, run_ledger, sample_ledger
from rwpost.evaluate.metrics import HEADLINE, VIEWS, spread, valid_probabilities, view_metrics
from rwpost.records import Sample

PRIMARY_ORDER = ("main", "challenging", "binary", "true_vs_not_true")
"""The view whose scores are the run's headline: the main set when the data has it (paper Table III)."""


def all_views(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    n_resamples: int,
    seed: int,
    failures: str = "wrong",
) -> dict[str, dict[str, Any]]:
    """Metrics of every view over the given samples, under the failure policy."""
    gold = [s.label for s in samples]
    predicted = [p.label for p in predictions]
    probabilities = [
        {str(k): v for k, v in p.probabilities.items()} if p.probabilities else None for p in predictions
    ]
    return {
        name: view_metrics(
            gold,
            predicted,
            view,
            probabilities=probabilities,
            n_resamples=n_resamples,
            seed=seed,
            failures=failures,
        )
        for name, view in VIEWS.items()
    }


def _reason(error: str | None) -> str:
    """The kind of an error message, without its details (for counting)."""
    return (error or "no label and no reason given").split(" (")[0].split(":")[0]


def primary_view(views: dict[str, dict[str, Any]]) -> str | None:
    """The first view of :data:`PRIMARY_ORDER` that has samples."""
    return next((name for name in PRIMARY_ORDER if views.get(name, {}).get("n")), None)


def score_run(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    blocklist: BlockList,
    prices: PriceTable | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    failures: str = "wrong",
) -> dict[str, Any]:
    """Everything measured about one set of predictions (aligned with ``samples``)."""
    views = all_views(samples, predictions, n_resamples=n_resamples, seed=seed, failures=failures)
    primary = primary_view(views)
    flags = audit(predictions, blocklist)
    errors = Counter(_reason(p.error) for p in predictions if p.label is None)
    answered = sum(p.label is not None for p in predictions)
    invalid_probabilities = [
        p.id for p in predictions if p.probabilities and not valid_probabilities(p.probabilities)
    ]
    result: dict[str, Any] = {
        "primary_view": primary,
        **({k: views[primary].get(k) for k in (*HEADLINE, "roc_auc_ovr", "ece")} if primary else {}),
        "failures": failures,
        "n_samples": len(samples),
        "coverage": {
            "answered": answered,
            "total": len(samples),
            "fraction": answered / len(samples) if samples else None,
            "predicted": answered,
            "no_label": len(predictions) - answered,
            "no_label_reasons": dict(errors),
            "invalid_probabilities": len(invalid_probabilities),
            "invalid_probability_ids": invalid_probabilities,
        },
        "views": views,
        "breakdowns": breakdowns(samples, [p.label for p in predictions]),
        "ledger": run_ledger(predictions, prices),
        "explanations": {"evidence_urls": evidence_url_scores(samples, predictions)},
        "audit": {
            "flagged": len(flags),
            "flagged_ids": sorted(flags),
            "domains": dict(Counter(d for f in flags.values() for d in f.domains)),
        },
    }
    if encode is not None:
        result["explanations"]["key_points"] = key_point_coverage(samples, predictions, encode)
    if flags:
        keep = [i for i, p in enumerate(predictions) if p.id not in flags]
        clean = all_views(
            [samples[i] for i in keep],
            [predictions[i] for i in keep],
            n_resamples=n_resamples,
            seed=seed,
            failures=failures,
        )
        result["audit"]["views_excluding_flagged"] = clean
        clean_primary = primary_view(clean)
        result["audit"]["excluding_flagged"] = (
            {k: clean[clean_primary].get(k) for k in HEADLINE} if clean_primary else {}
        )
    return result


def scored_rows(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    flagged: set[str],
    prices: PriceTable | None,
    repeats: Sequence[Sequence[Prediction]] = (),
) -> list[dict[str, Any]]:
    """One row per sample: gold, prediction, correctness, audit flag and the sample's ledger; with more
    than one repeat, ``predicted_repeats`` holds every repeat's label (repeat 0 first)."""
    rows = [
        {
            "id": s.id,
            "gold": str(s.label) if s.label else None,
            "predicted": str(p.label) if p.label else None,
            "correct": s.label is not None and p.label == s.label,
            "flagged": p.id in flagged,
            "error": p.error,
            "ledger": sample_ledger(p, prices),
        }
        for s, p in zip(samples, predictions, strict=True)
    ]
    if len(repeats) > 1:
        for i, row in enumerate(rows):
            row["predicted_repeats"] = [str(r[i].label) if r[i].label else None for r in repeats]
    return rows


def repeat_spread(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean, sd and every value of the headline metrics over repeated runs of a stochastic detector."""
    return {k: spread([r[k] for r in runs]) for k in HEADLINE if all(r.get(k) is not None for r in runs)}


def combine_repeats(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One run's metrics from its repeats: the headline keys are the mean over the repeats (the number a
    leaderboard ranks by), ``repeats`` holds mean, sd and every repeat's value; the views, breakdowns and
    the rest are repeat 0's (said in ``repeats.details_of``)."""
    metrics = dict(runs[0])
    if len(runs) > 1:
        spreads = repeat_spread(runs)
        metrics.update({k: s["mean"] for k, s in spreads.items()})
        metrics["coverage"] = {
            **runs[0]["coverage"],
            "answered_per_repeat": [r["coverage"]["answered"] for r in runs],
            "fraction": float(np.mean([r["coverage"]["fraction"] for r in runs])),
        }
        metrics["repeats"] = {
            "n": len(runs),
            "headline": spreads,
            "headline_is": "mean over repeats",
            "details_of": "repeat 0 (views, per class, breakdowns)",
        }
    return metrics
