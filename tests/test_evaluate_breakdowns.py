"""Scores broken down by sample properties (rwpost.evaluate.breakdowns)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score


@pytest.mark.trust
class TestTrust:
    """Issue 14, speed: the vectorised bootstrap agrees with the previous implementation (scipy's bootstrap
    calling scikit-learn per resample, kept in benchmarks/evaluate.py): point estimates exactly (to float
    rounding), intervals within Monte-Carlo noise; and it is fast."""

    def test_breakdown_group_scores_equal_scikit_learn(self):
        from rwpost.evaluate.breakdowns import group_scores

        rng = np.random.default_rng(0)
        for _ in range(300):
            n = int(rng.integers(1, 30))
            gold, pred = rng.integers(0, 4, n), rng.integers(0, 5, n)
            labels = sorted(set(gold))
            got = group_scores(gold, pred)
            assert got["accuracy"] == pytest.approx(accuracy_score(gold, pred), abs=1e-12)
            for average in ("macro", "weighted"):
                expected = f1_score(gold, pred, labels=labels, average=average, zero_division=0)
                assert got[f"{average}_f1"] == pytest.approx(expected, abs=1e-12)
