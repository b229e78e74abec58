"""Mocheg read from its released layout (<split>/Corpus2.csv): one sample per claim with its gold text
evidence, text only as the paper ran it, one-line errors, and ``rwpost evaluate --data mocheg:FOLDER``."""

from __future__ import annotations

import csv
import json

import pytest

from rwpost.errors import RecordError
from rwpost.evaluate.datasets.mocheg import read_mocheg
from rwpost.evaluate.task import blind
from rwpost.labels import Label
from tests.benchmark_folders import MOCHEG, MOCHEG_HEADER, mocheg_folder
from tests.evaluate_helpers import evaluate_vlm_scripted


def test_rows_of_a_claim_become_one_sample_with_its_evidence_paragraphs(tmp_path):
    root = mocheg_folder(tmp_path, MOCHEG)
    limit = csv.field_size_limit()
    samples = read_mocheg(root)
    assert (
        csv.field_size_limit() == limit
    )  # the process-wide csv limit is given back (other readers rely on it)
    assert [s.id for s in samples] == ["mocheg-test-1", "mocheg-test-2", "mocheg-test-3"]
    assert [s.label for s in samples] == [Label.UNPROVEN, Label.TRUE, Label.FALSE]
    first = samples[0]
    assert first.label_original == "NEI" and first.image is None
    assert [e.content for e in first.evidence] == [
        "A photo shared to Reddit.", "Rainbow grasshoppers live in\nthe south-west."
    ]  # fmt: skip
    assert first.reasoning_logic == "It is unclear where it was taken."
    assert first.news_url == "https://www.snopes.com/fact-check/a/"
    assert samples[1].evidence == [] and samples[1].extra["ruling_outline_missing"] is True
    # the third claim starts on line 5: the second row's evidence spans two lines
    assert samples[2].provenance.source == "Corpus2.csv:6"
    assert read_mocheg(root / "test")[0].id == first.id  # a split folder itself
    assert (
        blind(first, "T").evidence == []
        and blind(first, "T+E").evidence[0].content == "A photo shared to Reddit."
    )
    assert blind(first, "T+E").label is None and blind(first, "T+E").reasoning_logic is None


@pytest.mark.parametrize(
    ("rows", "header", "raw", "problem"),
    [
        (
            [[*MOCHEG[0][:3], "mostly false", *MOCHEG[0][4:]]],
            MOCHEG_HEADER,
            None,
            "Corpus2.csv:2, field 'cleaned_truthfulness': expected supported, refuted or NEI",
        ),
        (
            [MOCHEG[0], [*MOCHEG[1][:3], "refuted", *MOCHEG[1][4:]]],
            MOCHEG_HEADER,
            None,
            "Corpus2.csv:3, field 'cleaned_truthfulness': claim 1 is 'NEI' on line 2",
        ),
        ([MOCHEG[0], ["", *MOCHEG[2][1:]]], MOCHEG_HEADER, None, "Corpus2.csv:3, field 'claim_id'"),
        ([], MOCHEG_HEADER, "claim_id,Claim\n1,x\n", "Corpus2.csv:1: no column 'cleaned_truthfulness'"),
        (
            [],
            MOCHEG_HEADER,
            "claim_id,Claim,cleaned_truthfulness,Evidence\n1,x,NEI,e\n2,y\n",
            "Corpus2.csv:3: expected 4",
        ),
        # without the gold paragraphs the evidence cells would silently have none
        ([], MOCHEG_HEADER, "claim_id,Claim,cleaned_truthfulness\n1,x,NEI\n", "no column 'Evidence'"),
    ],
)
def test_a_broken_row_is_one_line_naming_file_line_and_column(tmp_path, rows, header, raw, problem):
    root = mocheg_folder(tmp_path, rows, header=header, raw=raw)
    with pytest.raises(RecordError) as caught:
        read_mocheg(root)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_evaluate_shows_the_gold_paragraphs_only_in_the_evidence_cell(tmp_path, monkeypatch):
    root = mocheg_folder(tmp_path, MOCHEG)
    out = tmp_path / "runs"
    answer = {"label": "Unproven", "confidence": 0.7, "explanation": "unclear", "evidence_urls": []}
    shown = [
        json.dumps(r) for r in evaluate_vlm_scripted(monkeypatch, f"mocheg:{root}", out, answer, "T", "T+E")
    ]
    assert len(shown) == 6 and sum("Rainbow grasshoppers" in r for r in shown) == 1
    metrics = json.loads(next(out.rglob("metrics.json")).read_text())
    assert metrics["views"]["main"]["n"] == 3
