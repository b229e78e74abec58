"""NewsCLIPpings read from its released layout (news_clippings/ beside VisualNews): samples, label views,
blinding, one-line errors, and an end-to-end ``rwpost evaluate --data newsclippings:FOLDER``."""

from __future__ import annotations

import json

import pytest

from rwpost.errors import RecordError
from rwpost.evaluate.datasets.newsclippings import read_newsclippings
from rwpost.evaluate.task import blind
from rwpost.labels import Label
from tests.benchmark_folders import NEWSCLIPPINGS, newsclippings_folder
from tests.evaluate_helpers import evaluate_vlm_scripted


def test_pairs_become_samples_with_binary_labels_and_the_caption_and_image_of_two_records(tmp_path):
    root = newsclippings_folder(tmp_path, NEWSCLIPPINGS)
    pristine, falsified = read_newsclippings(root)
    assert (pristine.label, pristine.label_original) == (Label.TRUE, "pristine")
    assert (falsified.label, falsified.label_original) == (Label.FALSE, "falsified")
    # the falsified pair: record 11's caption over record 12's image, found under visual_news/origin
    assert falsified.claim == "Flood waters cover a street in Dhaka"
    assert falsified.image.path == "usa_today/images/0002/012.jpg"
    assert (root / "visual_news" / "origin" / falsified.image.path).is_file()
    assert falsified.extra == {
        "caption_id": 11, "image_id": 12, "falsified": True, "similarity_score": 0.63, "source_dataset": 0
    }  # fmt: skip
    assert falsified.provenance.source == "test.json:10"
    # ids are the pairing, stable across reads and record order
    again = read_newsclippings(newsclippings_folder(tmp_path / "b", NEWSCLIPPINGS[::-1]))
    assert {s.id for s in again} == {pristine.id, falsified.id} == {"ncp-test-11-11", "ncp-test-11-12"}
    seen = blind(falsified, "T+I")
    assert seen.label is None and seen.label_original is None and seen.extra == {}
    assert seen.image.path == falsified.image.path


@pytest.mark.parametrize(
    ("annotations", "raw", "problem"),
    [
        (
            [{**NEWSCLIPPINGS[0], "falsified": "no"}],
            None,
            "test.json:3, record annotations[0], field 'falsified': expected true or false",
        ),
        ([{**NEWSCLIPPINGS[0], "image_id": 99}], None, "field 'image_id': VisualNews id 99 is not in"),
        (
            [NEWSCLIPPINGS[0], {"id": "11", "image_id": 11, "falsified": False}],
            None,
            "test.json:10, record annotations[1], field 'id'",
        ),
        ([], '{"annotations": [\n{"id": 11,\n', "test.json:3: not valid JSON"),
        # the released files are one line: the annotation's index tells which
        (
            [],
            json.dumps({"annotations": [NEWSCLIPPINGS[0], {**NEWSCLIPPINGS[1], "image_id": True}]}),
            "test.json:1, record annotations[1], field 'image_id'",
        ),
        ([], '[{"id": 11}]', "expected a JSON object with a 'annotations' array"),
    ],
)
def test_a_broken_annotation_is_one_line_naming_file_line_and_field(tmp_path, annotations, raw, problem):
    root = newsclippings_folder(tmp_path, annotations, raw=raw)
    with pytest.raises(RecordError) as caught:
        read_newsclippings(root)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_evaluate_scores_the_binary_view_with_the_visual_news_images_sent(tmp_path, monkeypatch):
    root = newsclippings_folder(tmp_path, NEWSCLIPPINGS)
    out = tmp_path / "run"
    answer = {"label": "False", "confidence": 0.7, "explanation": "another event", "evidence_urls": []}
    requests = evaluate_vlm_scripted(monkeypatch, f"newsclippings:{root}", out, answer, "T+I")
    images = sum("image_url" in json.dumps(r) for r in requests)
    assert images == 2
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["data"]["benchmark"] == "newsclippings"
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["views"]["binary"]["n"] == 2 and metrics["views"]["binary"]["accuracy"] == 0.5
