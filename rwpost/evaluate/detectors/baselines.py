"""Baseline detectors that only look at training labels: the floor every real detector must beat."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, NonNegativeFloat

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Capabilities, Detector, Prediction, RunContext
from rwpost.evaluate.task import EvalTask
from rwpost.ids import stable_seed
from rwpost.labels import Label
from rwpost.records import Sample


def label_prior(samples: Sequence[Sample]) -> dict[Label, float]:
    """Label frequencies of labelled samples, in :class:`Label` order (the order breaks ties)."""
    counts = Counter(s.label for s in samples if s.label is not None)
    total = sum(counts.values())
    if not total:
        raise ConfigError("a baseline needs labelled training samples; none of the given ones has a label")
    return {label: counts[label] / total for label in Label if counts[label]}


def _argmax(distribution: dict[Label, float]) -> Label:
    return max(distribution, key=lambda label: (distribution[label], -list(Label).index(label)))


class _PriorDetector(Detector):
    """Shared parts: the fitted prior and the 'not fitted' error."""

    name = "baseline"
    capabilities = Capabilities(needs_training=True)
    _prior: dict[Label, float] | None = None

    def fit(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> None:
        self._prior = label_prior(samples)

    def _fitted_prior(self) -> dict[Label, float]:
        if self._prior is None:
            raise ConfigError(f"detector {self.name!r} was asked to predict before fit()")
        return self._prior


class MajorityClass(_PriorDetector):
    """Always the most frequent training label; probabilities are the training label frequencies."""

    name = "majority"
    capabilities = Capabilities(needs_training=True, deterministic=True)

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        prior = self._fitted_prior()
        label = _argmax(prior)
        return [Prediction(id=s.id, label=label, probabilities=prior) for s in samples]


class StratifiedRandom(_PriorDetector):
    """A label drawn at random from the training label frequencies.

    Each sample's draw is seeded by ``(run seed, sample id)``, so a resumed or re-ordered run draws the same.
    """

    name = "stratified"

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        prior = self._fitted_prior()
        labels = list(prior)
        weights = np.array([prior[x] for x in labels])
        out = []
        for s in samples:
            draw = np.random.default_rng([ctx.seed, stable_seed(s.id)]).choice(len(labels), p=weights)
            out.append(Prediction(id=s.id, label=labels[draw], probabilities=prior))
        return out


class CategoryPrior(_PriorDetector):
    """The most frequent training label of the sample's Snopes category, smoothed toward the global prior.

    ``alpha`` pseudo-counts of the global prior are added to each category, so a rare or unseen category
    falls back to the majority label.
    """

    name = "category-prior"
    capabilities = Capabilities(needs_training=True, deterministic=True)

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")

        alpha: NonNegativeFloat = 1.0
        """Pseudo-counts of the global prior added to each category."""

    def __init__(self, config: Config | None = None) -> None:
        super().__init__(config)
        self.alpha = self.options.alpha
        self._by_category: dict[str, Counter[Label]] = {}

    def fit(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> None:
        self._prior = label_prior(samples)
        self._by_category = {}
        for s in samples:
            if s.label is not None:
                self._by_category.setdefault(s.category or "", Counter())[s.label] += 1

    def distribution(self, category: str | None) -> dict[Label, float]:
        """Smoothed label distribution of one category."""
        prior = self._fitted_prior()
        counts = self._by_category.get(category or "", Counter())
        total = sum(counts.values()) + self.alpha
        if total == 0:
            return prior
        return {label: (counts[label] + self.alpha * p) / total for label, p in prior.items()}

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        out = []
        for s in samples:
            dist = self.distribution(s.category)
            out.append(Prediction(id=s.id, label=_argmax(dist), probabilities=dist))
        return out
