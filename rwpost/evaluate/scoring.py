"""Score one run's predictions: every view, breakdowns, calibration, ledger, leakage audit, explanations.

The scorer writes with the run log's models (:mod:`rwpost.evaluate.log`): :func:`score_run` gives a
:class:`~rwpost.evaluate.log.RunScores`, :func:`scored_rows` the lines of ``scored.jsonl``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from rwpost.evaluate.breakdowns import breakdowns
from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.explanations import evidence_url_scores, key_point_coverage
from rwpost.evaluate.leakage import BlockList, audit
from rwpost.evaluate.ledger import run_ledger, sample_ledger
from rwpost.evaluate.log import (
    Audit,
    ExplanationScores,
    Headline,
    Repeats,
    RunCoverage,
    RunScores,
    ScoredSample,
    Spread,
    ViewScores,
)
from rwpost.evaluate.metrics import (
    HEADLINE,
    VIEWS,
    check_policy,
    class_metrics,
    spread,
    valid_probabilities,
    view_metrics,
)
from rwpost.llm.types import PriceTable
from rwpost.records import Sample

if TYPE_CHECKING:
    from rwpost.evaluate.datasets.spaces import LabelSpace

TABLE_II = "RW-Post Table II mapping"
"""How a benchmark run's RW-Post views are titled: the benchmark's labels folded into RW-Post's."""

PRIMARY_ORDER = ("main", "challenging", "binary", "true_vs_not_true")
"""The view whose scores are the run's headline: the main set when the data has it (paper Table III)."""


def all_views(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    n_resamples: int,
    seed: int,
    failures: str = "wrong",
) -> dict[str, ViewScores]:
    """Metrics of every view over the given samples, under the failure policy."""
    gold = [s.label for s in samples]
    predicted = [p.label for p in predictions]
    probabilities = [
        {str(k): v for k, v in p.probabilities.items()} if p.probabilities else None for p in predictions
    ]
    return {
        name: ViewScores.model_validate(
            view_metrics(
                gold,
                predicted,
                view,
                probabilities=probabilities,
                n_resamples=n_resamples,
                seed=seed,
                failures=failures,
            )
        )
        for name, view in VIEWS.items()
    }


def native_view(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    space: LabelSpace,
    *,
    n_resamples: int,
    seed: int,
    failures: str = "wrong",
) -> ViewScores:
    """The run scored in the benchmark's own label space, over every sample with a gold class in it."""
    classes = space.classes_of(samples)
    gold = [space.gold_class(s, classes) for s in samples]
    keep = [i for i, g in enumerate(gold) if g is not None]
    out = {
        "view": space.name,
        "title": space.name,
        "description": space.description,
        "n": len(keep),
        "failures": check_policy(failures),
    }
    if keep:
        y_true = [gold[i] for i in keep]
        y_pred = [space.answer(predictions[i], classes) for i in keep]
        out |= class_metrics(y_true, y_pred, classes, n_resamples=n_resamples, seed=seed, failures=failures)
    return ViewScores.model_validate(out)


def scored_views(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    space: LabelSpace | None,
    *,
    n_resamples: int,
    seed: int,
    failures: str = "wrong",
) -> dict[str, ViewScores]:
    """Every view of a run: RW-Post's (:func:`all_views`); with a benchmark's ``space``, its own view
    first and RW-Post's titled as :data:`TABLE_II`."""
    views = all_views(samples, predictions, n_resamples=n_resamples, seed=seed, failures=failures)
    if space is None:
        return views
    own = native_view(samples, predictions, space, n_resamples=n_resamples, seed=seed, failures=failures)
    folded = {
        name: view.model_copy(
            update={"title": f"{view.title} ({TABLE_II})", "description": f"{view.description}; {TABLE_II}"}
        )
        for name, view in views.items()
    }
    return {space.name: own, **folded}


def _reason(error: str | None) -> str:
    """The kind of an error message, without its details (for counting)."""
    return (error or "no label and no reason given").split(" (")[0].split(":")[0]


def primary_view(views: dict[str, ViewScores], space: LabelSpace | None = None) -> str | None:
    """The benchmark's own view when the run has a ``space`` (and it has samples); else the first view of
    :data:`PRIMARY_ORDER` that has samples."""
    order = (space.name, *PRIMARY_ORDER) if space is not None else PRIMARY_ORDER
    return next((name for name in order if name in views and views[name].n), None)


def _headline(view: ViewScores, keys: Sequence[str] = HEADLINE) -> dict[str, float | None]:
    return {k: getattr(view, k) for k in keys}


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
    space: LabelSpace | None = None,
) -> RunScores:
    """Everything measured about one set of predictions (aligned with ``samples``); with a benchmark's
    ``space``, scored in its labels as the primary view (and coverage counts answers in that space)."""
    views = scored_views(samples, predictions, space, n_resamples=n_resamples, seed=seed, failures=failures)
    primary = primary_view(views, space)
    flags = audit(predictions, blocklist)
    if space is None:
        unanswered = [p for p in predictions if p.label is None]
    else:
        classes = space.classes_of(samples)
        unanswered = [p for p in predictions if space.answer(p, classes) is None]
    errors = Counter(_reason(p.error) for p in unanswered)
    answered = len(predictions) - len(unanswered)
    invalid_probabilities = [
        p.id for p in predictions if p.probabilities and not valid_probabilities(p.probabilities)
    ]
    explanations = ExplanationScores.model_validate(
        {"evidence_urls": evidence_url_scores(samples, predictions)}
        | ({"key_points": key_point_coverage(samples, predictions, encode)} if encode is not None else {})
    )
    flagged = Audit(
        flagged=len(flags),
        flagged_ids=sorted(flags),
        domains=dict(Counter(d for f in flags.values() for d in f.domains)),
    )
    if flags:
        keep = [i for i, p in enumerate(predictions) if p.id not in flags]
        clean = scored_views(
            [samples[i] for i in keep],
            [predictions[i] for i in keep],
            space,
            n_resamples=n_resamples,
            seed=seed,
            failures=failures,
        )
        clean_primary = primary_view(clean, space)
        flagged.views_excluding_flagged = clean
        flagged.excluding_flagged = Headline(**(_headline(clean[clean_primary]) if clean_primary else {}))
    return RunScores(
        primary_view=primary,
        **(_headline(views[primary], (*HEADLINE, "roc_auc_ovr", "ece")) if primary else {}),
        failures=failures,
        n_samples=len(samples),
        coverage=RunCoverage(
            answered=answered,
            total=len(samples),
            fraction=answered / len(samples) if samples else None,
            predicted=answered,
            no_label=len(predictions) - answered,
            no_label_reasons=dict(errors),
            invalid_probabilities=len(invalid_probabilities),
            invalid_probability_ids=invalid_probabilities,
        ),
        views=views,
        breakdowns=breakdowns(samples, [p.label for p in predictions]),
        ledger=run_ledger(predictions, prices),
        explanations=explanations,
        audit=flagged,
    )


def scored_rows(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    flagged: set[str],
    prices: PriceTable | None,
    repeats: Sequence[Sequence[Prediction]] = (),
    space: LabelSpace | None = None,
) -> list[ScoredSample]:
    """One row per sample: gold, prediction, correctness, audit flag and the sample's ledger; with more
    than one repeat, ``predicted_repeats`` holds every repeat's label (repeat 0 first). With a benchmark's
    ``space``, its gold and answer in that space too, and correctness judged there."""
    classes = space.classes_of(samples) if space is not None else ()

    def native(s: Sample, p: Prediction) -> dict[str, object]:
        if space is None:
            return {"correct": s.label is not None and p.label == s.label}
        gold, said = space.gold_class(s, classes), space.answer(p, classes)
        return {"gold_class": gold, "predicted_class": said, "correct": gold is not None and said == gold}

    return [
        ScoredSample(
            id=s.id,
            gold=s.label or None,
            predicted=p.label or None,
            flagged=p.id in flagged,
            error=p.error,
            ledger=sample_ledger(p, prices),
            **native(s, p),
            **({"predicted_repeats": [r[i].label or None for r in repeats]} if len(repeats) > 1 else {}),
        )
        for i, (s, p) in enumerate(zip(samples, predictions, strict=True))
    ]


def repeat_spread(runs: Sequence[Headline]) -> dict[str, Spread]:
    """Mean, sd and every value of the headline metrics over repeated runs of a stochastic detector."""
    values = [r.headline() for r in runs]
    return {
        k: Spread.model_validate(spread([v[k] for v in values]))
        for k in HEADLINE
        if all(v[k] is not None for v in values)
    }


def combine_repeats(runs: Sequence[RunScores]) -> RunScores:
    """One run's metrics from its repeats: the headline keys are the mean over the repeats (the number a
    leaderboard ranks by), ``repeats`` holds mean, sd and every repeat's value; the views, breakdowns and
    the rest are repeat 0's (said in ``repeats.details_of``)."""
    if len(runs) == 1:
        return runs[0]
    spreads = repeat_spread(runs)
    coverage = runs[0].coverage.model_copy(
        update={
            "answered_per_repeat": [r.coverage.answered for r in runs],
            "fraction": float(np.mean([r.coverage.fraction for r in runs])),
        }
    )
    coverage.model_fields_set.update({"answered_per_repeat", "fraction"})
    combined = runs[0].model_copy(
        update={
            **{k: s.mean for k, s in spreads.items()},
            "coverage": coverage,
            "repeats": Repeats(
                n=len(runs),
                headline=spreads,
                views={
                    name: repeat_spread([r.views[name] for r in runs])
                    for name, view in runs[0].views.items()
                    if view.n
                },
                headline_is="mean over repeats",
                details_of="repeat 0 (views, per class, breakdowns)",
            ),
        }
    )
    combined.model_fields_set.update({*spreads, "coverage", "repeats"})
    return combined
