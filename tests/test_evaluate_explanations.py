"""Explanation scores: cited evidence URLs against the gold, key-point coverage, paired export."""

from __future__ import annotations

import numpy as np
import pytest

from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.explanations import (
    evidence_url_scores,
    key_point_coverage,
    merge_paired_explanations,
    paired_explanations,
)
from rwpost.labels import Label
from tests.evaluate_helpers import evidence, make_sample

VOCAB = ["photo", "2015", "flood", "texas", "satire", "site"]


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A transparent stand-in for a sentence encoder: counts of a few words (an input, not our code)."""
    return np.array([[t.lower().count(w) for w in VOCAB] for t in texts], dtype=float) + 1e-9


def test_evidence_url_precision_and_recall_against_gold_urls():
    samples = [
        make_sample(1, Label.FALSE, evidence=evidence(4)),
        make_sample(2, Label.TRUE, evidence=evidence(2)),
    ]
    predictions = [
        # two of four gold URLs (one written with www. and a trailing slash), one URL not in the gold
        Prediction(
            id=samples[0].id,
            evidence_urls=["https://www.example.org/e1/", "https://example.org/e2", "https://x.org"],
        ),
        Prediction(id=samples[1].id, evidence_urls=[]),
    ]
    got = evidence_url_scores(samples, predictions)
    assert got["macro_precision"] == pytest.approx(2 / 3)
    assert got["macro_recall"] == pytest.approx((2 / 4 + 0 / 2) / 2)
    assert got["micro_recall"] == pytest.approx(2 / 6)
    assert got["samples_citing"] == 1 and got["samples_with_gold_urls"] == 2


def test_key_point_coverage_by_embedding_similarity():
    sample = make_sample(
        1, Label.FALSE, key_points=["The photo is from a 2015 flood.", "The site is satire."]
    )
    covers_one = Prediction(id=sample.id, explanation="This photo shows a 2015 flood in Texas.")
    got = key_point_coverage([sample], [covers_one], bag_of_words, threshold=0.5)
    assert got["samples"] == 1
    assert got["coverage"] == pytest.approx(0.5)  # the flood point is covered, the satire point is not


def test_paired_explanations_carry_gold_and_every_system_once():
    sample = make_sample(
        1, Label.FALSE, reasoning_logic="It is old.", key_points=["Old photo."], evidence=evidence(1)
    )
    a = paired_explanations([sample], [Prediction(id=sample.id, label=Label.TRUE, explanation="A")], "sys-a")
    b = paired_explanations([sample], [Prediction(id=sample.id, label=Label.FALSE, explanation="B")], "sys-b")
    [row] = merge_paired_explanations([a, b])
    assert set(row) >= {"id", "claim", "outputs", "gold_label"}
    assert [o["system"] for o in row["outputs"]] == ["gold", "sys-a", "sys-b"]
    assert row["outputs"][0] == {
        "system": "gold",
        "label": "False",
        "explanation": "It is old.\n- Old photo.",
        "evidence_urls": ["https://example.org/e1"],
    }
