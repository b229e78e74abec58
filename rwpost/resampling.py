"""The percentile bootstrap: resampling indices drawn once, statistics computed on all of them at once.

The evaluation resamples samples for every headline metric and paired difference
(:mod:`rwpost.evaluate.metrics`); the annotation report resamples paired explanation-score differences
(:mod:`rwpost.annotate.explanations`). Both draw here, so one seed gives one set of resamples.
"""

from __future__ import annotations

import numpy as np


def resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray | None:
    """Bootstrap indices, shape ``(n_resamples, n)``, drawn with replacement from ``default_rng(seed)``;
    None when there is nothing to resample (``n < 2`` or no resamples)."""
    if n < 2 or n_resamples <= 0:
        return None
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def percentile_interval(values: np.ndarray, confidence_level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates."""
    alpha = (1 - confidence_level) / 2
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def mean_interval(
    values: np.ndarray, *, n_resamples: int, seed: int = 0, confidence_level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values``; None when there is nothing to resample."""
    idx = resample_indices(values.size, n_resamples, seed)
    return None if idx is None else percentile_interval(values[idx].mean(axis=1), confidence_level)
