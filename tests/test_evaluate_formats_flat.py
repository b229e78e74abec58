"""A predictions file from an external system: every problem is reported, nothing is silently dropped."""

from __future__ import annotations

import csv
import json

import pytest

from rwpost.cli import main
from rwpost.errors import RwpostError
from rwpost.evaluate.contract import RunContext
from rwpost.evaluate.formats.flat import PredictionsFileDetector
from rwpost.evaluate.task import EvalTask
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import (
    HOSTILE_GOLD,
    TRUST_GOLD,
    evaluate_quietly,
    make_sample,
    read_metrics,
    run_evaluate,
)

GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE]


@pytest.fixture
def samples():
    return [make_sample(i, g) for i, g in enumerate(GOLD)]


@pytest.fixture
def messy_file(tmp_path, samples):
    """Sample 0 by id, sample 1 by news_url, sample 2 twice with different labels, sample 3 with an
    unknown label, sample 4 missing, one unknown id, and one row with no id at all."""
    rows = [
        {"id": samples[0].id, "label": "TRUE", "probabilities": {"True": 0.8, "False": 0.2}},
        {"news_url": samples[1].news_url, "label": "false", "evidence_urls": ["https://example.org/a"]},
        {"id": samples[2].id, "label": "False", "explanation": "first"},
        {"id": samples[2].id, "label": "True", "explanation": "second"},
        {"id": samples[3].id, "label": "Pants on Fire"},
        {"id": "rw-0000000000000000", "label": "True"},
        {"label": "True"},
    ]
    path = tmp_path / "system.jsonl"
    write_jsonl(path, rows)
    return path


def test_report_lists_unknown_missing_duplicate_ids_and_unknown_labels(samples, messy_file):
    detector = PredictionsFileDetector.build({"path": messy_file})
    report = detector.check(samples)
    assert report["rows"] == 7
    assert report["missing_ids"] == [samples[4].id]
    assert report["unknown_ids"] == [{"line": 6, "id": "rw-0000000000000000"}]
    [dup] = report["duplicate_ids"]
    assert dup == {
        "id": samples[2].id,
        "lines": [3, 4],
        "labels": ["False", "True"],
        "conflicting": True,
        "used_line": 3,
    }
    assert report["unknown_labels"] == [{"line": 5, "id": samples[3].id, "label": "Pants on Fire"}]
    assert report["bad_rows"] == [
        {"line": 7, "reason": f"{messy_file}:7: row has neither 'id' nor 'news_url'"}
    ]
    assert report["problems"] == {
        "bad_rows": 1,
        "unknown_ids": 1,
        "missing_ids": 1,
        "duplicate_ids": 1,
        "unknown_labels": 1,
    }


def test_every_sample_gets_a_prediction_with_the_reason_when_it_has_no_label(samples, messy_file):
    preds = {
        p.id: p
        for p in PredictionsFileDetector.build({"path": messy_file}).predict(
            samples, EvalTask.of("T+I", samples), RunContext()
        )
    }
    assert len(preds) == len(samples)
    assert preds[samples[0].id].label is Label.TRUE
    assert preds[samples[0].id].probabilities == {Label.TRUE: 0.8, Label.FALSE: 0.2}
    assert preds[samples[1].id].label is Label.FALSE  # matched through news_url
    assert preds[samples[1].id].evidence_urls == ["https://example.org/a"]
    assert preds[samples[2].id].explanation == "first"  # first of the duplicates, and reported
    assert (
        preds[samples[3].id].label is None and "unknown label ('Pants on Fire'" in preds[samples[3].id].error
    )
    assert (
        preds[samples[4].id].label is None and "no row in the predictions file" in preds[samples[4].id].error
    )


def test_strict_mode_refuses_a_file_with_problems(samples, messy_file):
    with pytest.raises(RwpostError, match=r"1 unknown ids, 1 missing ids, 1 duplicate ids, 1 unknown labels"):
        PredictionsFileDetector.build({"path": messy_file, "strict": True}).check(samples)


def test_csv_with_probability_columns(tmp_path, samples):
    path = tmp_path / "system.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["id", "label", "prob_True", "prob_False", "evidence_urls"])
        writer.writeheader()
        for s in samples:
            writer.writerow(
                {
                    "id": s.id,
                    "label": "True",
                    "prob_True": 0.6,
                    "prob_False": 0.4,
                    "evidence_urls": "https://a.org/1; https://b.org/2",
                }
            )
    detector = PredictionsFileDetector.build({"path": path})
    assert detector.check(samples)["problems"] == {}
    [first, *_] = detector.predict(samples, EvalTask.of("T+I", samples), RunContext())
    assert first.probabilities == {Label.TRUE: 0.6, Label.FALSE: 0.4}
    assert first.evidence_urls == ["https://a.org/1", "https://b.org/2"]


def test_cli_scores_the_file_reports_problems_and_counts_unanswered_as_wrong(
    tmp_path, samples, messy_file, capsys
):
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    out = tmp_path / "run"
    code = main(
        [
            "evaluate",
            "--data",
            str(data),
            "--predictions",
            str(messy_file),
            "--out",
            str(out),
            "--bootstrap",
            "50",
            "--no-progress",
            "--no-key-points",
        ]
    )
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["input_problems"]["missing_ids"] == 1
    assert (
        metrics["coverage"]
        == {
            "predicted": 3,
            "no_label": 2,
            "no_label_reasons": {f"{messy_file}": 1, "no row for this sample in " + str(messy_file): 1},
        }
        or metrics["coverage"]["no_label"] == 2
    )
    # 5 samples scored: True ok, False ok, False ok (first duplicate), Unproven unanswered, True missing
    assert metrics["views"]["main"]["n"] == 5
    assert metrics["accuracy"] == pytest.approx(3 / 5)
    report = json.loads((out / "input_report.json").read_text())
    assert report["unknown_ids"][0]["id"] == "rw-0000000000000000"
    assert "input problems" in capsys.readouterr().err

    strict = main(
        [
            "evaluate",
            "--data",
            str(data),
            "--predictions",
            str(messy_file),
            "--strict",
            "--out",
            str(tmp_path / "strict"),
            "--no-progress",
        ]
    )
    assert strict == 1
    assert "unknown ids" in capsys.readouterr().err


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_a_csv_saved_by_excel_with_a_byte_order_mark_is_read(self, tmp_path, samples, data):
        path = tmp_path / "excel.csv"
        with open(path, "w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "label"])
            writer.writerows([s.id, str(s.label)] for s in samples)
        assert run_evaluate(data, tmp_path / "run", "--predictions", str(path)) == 0
        assert read_metrics(tmp_path / "run")["accuracy"] == 1.0

    def test_a_file_where_no_row_could_be_read_is_an_error_not_a_zero_score(self, tmp_path, data, capsys):
        path = tmp_path / "bad.csv"
        path.write_text("identifier,verdict\nx,True\ny,False\n")
        assert run_evaluate(data, tmp_path / "run", "--predictions", str(path)) != 0
        assert "no row could be read" in capsys.readouterr().err
        assert not (tmp_path / "run" / "metrics.json").exists()


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(HOSTILE_GOLD)]

    def test_probabilities_given_as_a_list_are_a_bad_row_naming_the_line_not_an_internal_error(
        self, tmp_path, data, samples, capsys
    ):
        rows = [{"id": s.id, "label": "False"} for s in samples]
        rows[2]["probabilities"] = [0.2, 0.8]  # a list, not label -> probability
        rows[3]["probabilities"] = "{not json"  # a JSON string that is not JSON
        rows[4]["evidence_urls"] = "[not json"
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, rows)

        assert evaluate_quietly(data, tmp_path / "run", "--predictions", str(preds)) == 0
        report = json.loads((tmp_path / "run" / "input_report.json").read_text())
        reasons = {bad["line"]: bad["reason"] for bad in report["bad_rows"]}
        assert set(reasons) == {3, 4, 5}
        assert reasons[3].startswith(f"{preds}:3: ") and "probabilities" in reasons[3]
        assert reasons[4].startswith(f"{preds}:4: ") and "probabilities" in reasons[4]
        assert reasons[5].startswith(f"{preds}:5: ") and "evidence_urls" in reasons[5]
        # the three samples are scored as unanswered, never dropped
        assert json.loads((tmp_path / "run" / "metrics.json").read_text())["coverage"]["answered"] == 3

        capsys.readouterr()
        assert evaluate_quietly(data, tmp_path / "strict", "--predictions", str(preds), "--strict") == 1
        assert "internal error" not in capsys.readouterr().err


def test_the_flat_formats_fields_are_documented_in_the_readme_as_the_reader_reads_them(tmp_path, samples):
    """The flat predictions fields were documented nowhere (new-user review item 29): the README's table
    is the reader's own (``FLAT_FIELDS``), and a row using each documented field is read as documented."""
    import re
    from pathlib import Path

    from rwpost.evaluate.formats.flat import FLAT_FIELDS, read_prediction_rows

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("### Scoring another system's predictions file (the flat format)")[1].split(
        "\n### "
    )[0]
    table = dict(re.findall(r"^\| `([^`]+)` \| (.+) \|$", section, flags=re.MULTILINE))
    assert table == FLAT_FIELDS
    path = tmp_path / "p.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["news_url", "label", "prob_True", "prob_False", "explanation", "evidence_urls", "other"])
        url = samples[1].news_url.replace("https://www.snopes", "http://SNOPES").rstrip("/")  # the same id
        w.writerow([url, "FALSE", "0.25", "0.75", "Old.", "https://a.org/x; [1]", "ignored"])
    [row], bad = read_prediction_rows(path)
    assert not bad and row.id == samples[1].id and row.label is Label.FALSE
    assert row.probabilities == {Label.TRUE: 0.25, Label.FALSE: 0.75}
    assert (row.explanation, row.evidence_urls) == ("Old.", ["https://a.org/x", "[1]"])
