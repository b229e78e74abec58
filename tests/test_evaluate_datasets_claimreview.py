"""ClaimReview2024+ read from its released layout (test.json and images): labels as Table III's three
classes, blinding, one-line errors, and an end-to-end ``rwpost evaluate --data claimreview:FOLDER``."""

from __future__ import annotations

import datetime
import json

import pytest

from rwpost.errors import RecordError
from rwpost.evaluate.datasets.claimreview import read_claimreview
from rwpost.evaluate.task import blind
from rwpost.labels import Label
from tests.benchmark_folders import CLAIMREVIEW, claimreview_folder
from tests.evaluate_helpers import evaluate_vlm_scripted


def test_records_become_samples_with_three_classes_and_misleading_outside_them(tmp_path):
    root = claimreview_folder(tmp_path, CLAIMREVIEW)
    samples = read_claimreview(root)
    assert [s.label for s in samples] == [Label.TRUE, Label.FALSE, Label.UNPROVEN, Label.MIXTURE]
    assert [s.label_original for s in samples] == [r["label"] for r in CLAIMREVIEW]
    assert [s.image.path if s.image else None for s in samples] == [
        "images/1.jpg", "images/2.jpg", None, "images/4.jpg"
    ]  # fmt: skip
    assert samples[0].claim_time == datetime.date(2024, 4, 9) and samples[3].claim_time is None
    assert samples[0].extra == {"label": "supported", "author": "Facebook user"}
    assert samples[1].provenance.source == "test.json:11"
    # ids hash the claim, not its position
    again = read_claimreview(claimreview_folder(tmp_path / "b", CLAIMREVIEW[::-1]))
    assert sorted(s.id for s in again) == sorted(s.id for s in samples)
    seen = blind(samples[0], "T+I")
    assert seen.label is None and seen.label_original is None and seen.extra == {}
    assert seen.claim_time == samples[0].claim_time


@pytest.mark.parametrize(
    ("records", "raw", "problem"),
    [
        ([{**CLAIMREVIEW[0], "label": "pants on fire"}], None, "test.json:2, field 'label': expected one of"),
        ([CLAIMREVIEW[0], {**CLAIMREVIEW[1], "text": ""}], None, "test.json:11, field 'text'"),
        ([{**CLAIMREVIEW[0], "date": "9 April 2024"}], None, "field 'date': expected a date like"),
        ([{**CLAIMREVIEW[0], "image": [3]}], None, "field 'image': expected an image path"),
        ([CLAIMREVIEW[0], CLAIMREVIEW[0]], None, "test.json:11: repeats the claim of line 2"),
        ([], '[\n{"text": "a",\n  "label": supported}\n]', "test.json:3: not valid JSON"),
    ],
)
def test_a_broken_record_is_one_line_naming_file_line_and_field(tmp_path, records, raw, problem):
    root = claimreview_folder(tmp_path, records, raw=raw)
    with pytest.raises(RecordError) as caught:
        read_claimreview(root)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_evaluate_scores_the_three_class_view_and_sends_the_images(tmp_path, monkeypatch):
    root = claimreview_folder(tmp_path, CLAIMREVIEW)
    out = tmp_path / "run"
    answer = {"label": "False", "confidence": 0.7, "explanation": "no", "evidence_urls": []}
    requests = evaluate_vlm_scripted(monkeypatch, f"claimreview:{root}", out, answer, "T+I")
    images = sum("image_url" in json.dumps(r) for r in requests)
    assert images == 3  # the text-only claim has none
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["views"]["main"]["n"] == 3  # misleading is outside Table III's classes
