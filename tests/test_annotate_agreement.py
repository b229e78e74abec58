"""Inter-annotator agreement against hand-computed values (annotate/agreement.py)."""

from __future__ import annotations

import math

import pytest
from annotate_data import ALPHA_POST, ALPHA_ROLE, KAPPA_POST, KAPPA_ROLE, USERS
from annotate_data import ten_tasks as _ten_tasks

from rwpost.annotate.agreement import cohen_kappa, krippendorff_alpha, validation_agreement
from rwpost.annotate.verdicts import validation_verdicts


def test_agreement_matches_hand_computed_kappa_and_alpha():
    report = validation_agreement(validation_verdicts(_ten_tasks(), USERS, project="validation"))
    assert report["post_extraction"]["paired_units"] == 10
    assert report["post_extraction"]["percent_agreement"] == pytest.approx(80.0)
    assert report["post_extraction"]["cohen_kappa"] == pytest.approx(KAPPA_POST, abs=1e-6)
    assert report["post_extraction"]["krippendorff_alpha"] == pytest.approx(ALPHA_POST, abs=1e-6)
    assert report["image_role"]["cohen_kappa"] == pytest.approx(KAPPA_ROLE, abs=1e-6)
    assert report["image_role"]["krippendorff_alpha"] == pytest.approx(ALPHA_ROLE, abs=1e-6)


def test_krippendorff_alpha_reproduces_the_published_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units, missing
    # values; published alphas: nominal 0.743, ordinal 0.815, interval 0.849.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    units = list(zip(a, b, c, d, strict=True))
    assert krippendorff_alpha(units, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(units, "interval") == pytest.approx(0.849, abs=5e-4)


def test_agreement_is_undefined_not_perfect_when_nobody_varies():
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))
    assert math.isnan(krippendorff_alpha([["a", "a"], ["a", "a"]]))
