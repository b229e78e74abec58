"""Explanation scores and their paired statistics (annotate/explanations.py)."""

from __future__ import annotations

import numpy as np
import pytest
from annotate_data import USERS, explanation_result
from annotate_data import export_task as _export_task

from rwpost.annotate.explanations import bootstrap_ci, explanation_report, normalise, wilcoxon_p
from rwpost.annotate.verdicts import explanation_scores


def _scores(a_scores: list[int], b_scores: list[int], gold: list[int]):
    tasks = []
    keys = {}
    for i, (sa, sb, sg) in enumerate(zip(a_scores, b_scores, gold, strict=True)):
        rid = f"rw-{i:016x}"
        keys[rid] = {1: "agentfact", 2: "lemma", 3: "gold"}
        anns = [
            (10 * i + k, uid, explanation_result({1: (sa,) * 3, 2: (sb,) * 3, 3: (sg,) * 3}))
            for k, uid in enumerate((11, 12))
        ]
        tasks.append(_export_task(i + 1, rid, anns))
    return explanation_scores(tasks, USERS, keys)


def test_normalised_scores_and_paired_statistics_follow_paper_table_iv():
    # Six instances; AgentFact scores 0 where LEMMA scores 1 or 2: every paired difference is negative,
    # so the exact two-sided Wilcoxon p-value is 2 / 2**6 = 0.03125.
    scores = _scores([0, 0, 0, 0, 0, 1], [1, 2, 1, 2, 1, 2], [0, 0, 0, 0, 0, 0])
    report = explanation_report(scores, compare=("agentfact", "lemma"), resamples=2000)
    row = report["criteria"]["reasoning_hallucination"]
    assert row["normalised"]["gold"] == pytest.approx(1.0)
    assert row["normalised"]["agentfact"] == pytest.approx(
        np.mean([normalise(x) for x in [0, 0, 0, 0, 0, 1]])
    )
    assert row["normalised"]["lemma"] == pytest.approx(1 - 9 / 12)
    comparison = row["comparison"]
    assert comparison["instances"] == 6
    assert comparison["mean_delta"] == pytest.approx((1 - 9) / 6)
    assert comparison["wilcoxon_p"] == pytest.approx(0.03125)
    low, high = comparison["ci95"]
    assert low <= comparison["mean_delta"] <= high < 0
    assert report["agreement"]["reasoning_hallucination"]["krippendorff_alpha"] == pytest.approx(1.0)


def test_bootstrap_of_identical_differences_is_a_point_and_wilcoxon_of_zeros_is_one():
    assert bootstrap_ci(np.full(5, -1.0), resamples=100) == (-1.0, -1.0)
    assert bootstrap_ci(np.array([0.5])) == (0.5, 0.5), "one difference: every resample is that difference"
    assert wilcoxon_p(np.zeros(4)) == 1.0
