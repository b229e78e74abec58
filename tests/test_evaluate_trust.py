"""Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
scikit-learn computation under each failure policy.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from rwpost.cli import main
from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Detector, DetectorInputs, Prediction
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.metrics import NO_ANSWER, VIEWS, paired_comparison, view_metrics
from rwpost.evaluate.runner import RunSpec, run
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import make_sample, sklearn_scores

T, F, U = Label.TRUE, Label.FALSE, Label.UNPROVEN
CLASSES = ["True", "False", "Unproven"]
GOLD = [T, F, U, F, F, T, U, F, T, F]
COMMON = ["--bootstrap", "50", "--no-progress", "--no-key-points"]


class ScriptedDetector(Detector):
    """Answers from a JSON script ``{"<seed>": {"<id>": label or null}}`` (null: no answer): lets a test
    give every repeat (seed 0, 1, 2...) its own answers."""

    name = "scripted"

    class Config(BaseModel):
        script: str
        note: str = ""
        """Changes nothing but the options (a test of the run identity)."""

    def predict(self, samples, task, ctx):
        answers = json.loads(Path(self.options.script).read_text())[str(ctx.seed)]
        return [
            Prediction(id=s.id, label=answers.get(s.id), error=None if answers.get(s.id) else "no answer")
            for s in samples
        ]


SCRIPTED = "tests.test_evaluate_trust:ScriptedDetector"


@pytest.fixture
def samples():
    return [make_sample(i, g) for i, g in enumerate(GOLD)]


def _predictions(path: Path, samples, labels) -> Path:
    write_jsonl(path, [{"id": s.id, "label": str(lab)} for s, lab in zip(samples, labels, strict=True)])
    return path


def _evaluate(data: Path, out: Path, *extra: str) -> int:
    return main(["evaluate", "--data", str(data), "--out", str(out), *COMMON, *extra])


def _metrics(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text())


# 1. Stale results ------------------------------------------------------------------------------------


def test_a_predictions_file_changed_in_place_is_refused_naming_it_and_overwrite_starts_afresh(
    tmp_path, samples, data, capsys
):
    preds = _predictions(tmp_path / "p.jsonl", samples, [F] * len(GOLD))
    out = tmp_path / "run"
    assert _evaluate(data, out, "--predictions", str(preds)) == 0
    assert _metrics(out)["accuracy"] == pytest.approx(0.5)
    _predictions(preds, samples, GOLD)  # the same path, now every answer right
    capsys.readouterr()
    assert _evaluate(data, out, "--predictions", str(preds)) == 2
    err = capsys.readouterr().err
    assert "the predictions file" in err and "--overwrite" in err
    assert len(err.strip().splitlines()) == 1
    assert _metrics(out)["accuracy"] == pytest.approx(0.5)  # nothing mixed or rewritten
    assert _evaluate(data, out, "--predictions", str(preds), "--overwrite") == 0
    assert _metrics(out)["accuracy"] == 1.0
    fresh = tmp_path / "fresh"
    assert _evaluate(data, fresh, "--predictions", str(preds)) == 0
    assert _metrics(out)["accuracy"] == _metrics(fresh)["accuracy"]
    rows = (out / "predictions.jsonl").read_text().splitlines()
    assert len(rows) == len(GOLD)  # the first run's predictions are gone, not mixed in
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["identity"]["predictions_sha256"] == manifest["detector_config"]["sha256"]
    assert manifest["failures"] == "wrong"


def test_an_identical_run_resumes_and_every_changed_input_is_named(tmp_path, samples):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"0": {s.id: "False" for s in samples}}))
    out = tmp_path / "run"
    spec = RunSpec(SCRIPTED, config={"script": str(script)})
    first = run(samples, spec, out, data_info={"sha256": "a" * 64})
    assert first.manifest.resume == "new"
    again = run(samples, spec, out, data_info={"sha256": "a" * 64})
    assert again.manifest.resume == "resumed"
    changes = {
        "the data file": dict(data_info={"sha256": "b" * 64}),
        "the samples' content": dict(samples=[samples[0].model_copy(update={"claim": "x"}), *samples[1:]]),
        "the blocked-domain list": dict(
            spec=RunSpec(spec.detector, spec.config, blocklist=BlockList({"a.org"}))
        ),
        "the detector options": dict(spec=RunSpec(spec.detector, {**spec.config, "note": "5"})),
    }
    for name, change in changes.items():
        kwargs = {"samples": samples, "spec": spec, "data_info": {"sha256": "a" * 64}, **change}
        with pytest.raises(ConfigError, match=f"changed since it started: {name}"):
            run(kwargs["samples"], kwargs["spec"], out, data_info=kwargs["data_info"])
    restarted = run(samples, spec, out, data_info={"sha256": "b" * 64}, on_change="restart")
    assert restarted.manifest.resume == "restarted"


def test_code_version_and_prompts_are_in_the_identity(tmp_path, samples, monkeypatch):
    import rwpost.evaluate.runner as runner

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"0": {s.id: "False" for s in samples}}))
    spec = RunSpec(SCRIPTED, config={"script": str(script)})
    run(samples, spec, tmp_path / "run")
    monkeypatch.setattr(runner, "code_version", lambda: "9.9.9")
    with pytest.raises(ConfigError, match="the code version"):
        run(samples, spec, tmp_path / "run")
    from rwpost.evaluate.registry import resolve_detector

    prompts = DetectorInputs(prompts={"p": "1"})
    monkeypatch.setattr(resolve_detector(SCRIPTED), "inputs", lambda self: prompts)
    with pytest.raises(ConfigError, match="the prompts"):
        run(samples, spec, tmp_path / "run", overwrite=False, on_change="refuse")


# 2. Repeats ------------------------------------------------------------------------------------------


def test_repeats_report_mean_and_every_repeat_and_the_leaderboard_ranks_by_the_mean(tmp_path, samples, data):
    right = {s.id: str(s.label) for s in samples}
    wrong = {s.id: ("True" if s.label is not Label.TRUE else "False") for s in samples}
    lucky = tmp_path / "lucky.json"  # repeat 0 perfect, repeats 1 and 2 all wrong: mean 1/3
    lucky.write_text(json.dumps({"0": right, "1": wrong, "2": wrong}))
    steady = tmp_path / "steady.json"  # always half right
    half = {s.id: (right if i % 2 else wrong)[s.id] for i, s in enumerate(samples)}
    steady.write_text(json.dumps({"0": half}))
    runs = tmp_path / "runs"
    args = ["--detector", SCRIPTED]
    assert (
        _evaluate(
            data, runs / "lucky", *args, "--set", f"script={lucky}", "--repeats", "3", "--name", "lucky"
        )
        == 0
    )
    assert _evaluate(data, runs / "steady", *args, "--set", f"script={steady}", "--name", "steady") == 0
    metrics = _metrics(runs / "lucky")
    assert metrics["accuracy"] == pytest.approx(1 / 3)
    assert metrics["repeats"]["headline"]["accuracy"]["values"] == [1.0, 0.0, 0.0]
    report = (runs / "lucky" / "report.md").read_text()
    assert (
        "mean ± sd over 3 repeats" in report
        and "| accuracy | 0.333 ± 0.577 | 1.000 | 0.000 | 0.000 |" in report
    )

    board = tmp_path / "board"
    assert main(["leaderboard", str(runs), "--out", str(board)]) == 0
    rows = json.loads((board / "leaderboard.json").read_text())
    assert [r["system"] for r in rows] == ["steady", "lucky"]  # ranked by the mean macro F1
    assert rows[1]["repeat_values"]["accuracy"] == [1.0, 0.0, 0.0]
    md = (board / "leaderboard.md").read_text()
    assert "0.333 ± 0.577" in md and "1.000, 0.000, 0.000" in md

    result = tmp_path / "compare.json"
    assert (
        main(
            ["compare", str(runs / "lucky"), str(runs / "steady"), "--bootstrap", "50", "--out", str(result)]
        )
        == 0
    )
    accuracy = json.loads(result.read_text())["views"]["main"]["metrics"]["accuracy"]
    assert accuracy["repeats"]["a"]["values"] == [1.0, 0.0, 0.0]
    assert accuracy["repeats"]["difference"]["mean"] == pytest.approx(1 / 3 - 0.5)


# 3. Failures -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("failures", ["wrong", "exclude", "class"])
def test_each_failure_policy_equals_a_direct_scikit_learn_computation(failures):
    rng = np.random.default_rng(3)
    gold = [CLASSES[i] for i in rng.integers(0, 3, 60)]
    pred = [None if rng.random() < 0.25 else CLASSES[i] for i in rng.integers(0, 3, 60)]
    got = view_metrics(
        [Label(g) for g in gold],
        [p and Label(p) for p in pred],
        VIEWS["main"],
        n_resamples=200,
        failures=failures,
    )
    expected = sklearn_scores(gold, pred, failures)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert got["coverage"]["answered"] == sum(p is not None for p in pred)
    assert got["failures"] == failures
    assert got["macro_classes"] == CLASSES + ([NO_ANSWER] if failures == "class" else [])
    for key, (low, high) in got["ci95"].items():
        assert low <= got[key] + 1e-9 and got[key] - 1e-9 <= high


def test_failing_never_scores_higher_than_answering_wrongly():
    """40 of 46 missing gave accuracy 0.087 but weighted precision 0.761: a failure must not flatter."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        gold = [CLASSES[i] for i in rng.integers(0, 3, 20)]
        answered = [CLASSES[i] for i in rng.integers(0, 3, 20)]
        fail = rng.random(20) < 0.4
        failed = [None if f else a for f, a in zip(fail, answered, strict=True)]
        # the failed samples answered wrongly instead, each with some wrong class
        wrong = [
            (rng.choice([c for c in CLASSES if c != g]) if f else a)
            for f, a, g in zip(fail, answered, gold, strict=True)
        ]
        a = view_metrics(
            [Label(g) for g in gold], [p and Label(p) for p in failed], VIEWS["main"], n_resamples=0
        )
        b = view_metrics([Label(g) for g in gold], [Label(p) for p in wrong], VIEWS["main"], n_resamples=0)
        for key in ("weighted_precision", "macro_f1", "weighted_f1"):
            assert a[key] <= b[key] + 1e-12, (key, a[key], b[key])
        for key in ("accuracy", "weighted_recall"):
            assert a[key] == pytest.approx(b[key])


def test_coverage_and_the_policy_are_in_every_table_and_the_manifest(
    tmp_path, samples, data, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "400")  # rich tables: no column squeezed
    labels = [None, None, *GOLD[2:]]  # two failures, the rest right
    preds = tmp_path / "p.jsonl"
    write_jsonl(
        preds,
        [
            {"id": s.id, "label": str(x) if x else "Pants on Fire"}
            for s, x in zip(samples, labels, strict=True)
        ],
    )
    out = tmp_path / "runs" / "partial"
    assert _evaluate(data, out, "--predictions", str(preds), "--failures", "exclude") == 0
    metrics, manifest = _metrics(out), json.loads((out / "manifest.json").read_text())
    assert manifest["failures"] == metrics["failures"] == "exclude"
    assert metrics["accuracy"] == 1.0  # on the answered samples
    assert metrics["coverage"]["answered"] == 8 and metrics["coverage"]["total"] == 10
    assert "unknown label" in json.dumps(metrics["coverage"]["no_label_reasons"])  # reported, not scored
    report = (out / "report.md").read_text()
    assert "failures: exclude" in report and "| coverage |" in report and "8/10 (!)" in report
    assert "Macro F1 averages over the classes main: True, False, Unproven" in report
    full = tmp_path / "runs" / "full"
    assert _evaluate(data, full, "--predictions", str(_predictions(tmp_path / "q.jsonl", samples, GOLD))) == 0
    board = tmp_path / "board"
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(board)]) == 0
    shown = capsys.readouterr().out
    assert "8/10 (!)" in shown and "10/10" in shown and "failures: exclude, wrong" in shown
    md = (board / "leaderboard.md").read_text()
    assert "| coverage |" in md and "8/10 (!)" in md and "failures: exclude" in md and "failures: wrong" in md
    assert main(["compare", str(full), str(out), "--bootstrap", "50"]) == 0
    shown = capsys.readouterr().out
    assert "coverage A 10/10 B 8/10" in shown and "failures: wrong" in shown


def test_probabilities_outside_0_1_or_not_summing_to_1_are_reported_not_scored(tmp_path):
    samples = [make_sample(i, g) for i, g in enumerate(GOLD)]
    good = {"True": 0.2, "False": 0.7, "Unproven": 0.1}
    bad = [{"True": 1.5, "False": -0.5}, {"True": 0.5, "False": 0.2}]
    predictions = [
        Prediction(id=s.id, label=F, probabilities=bad[i] if i < 2 else good) for i, s in enumerate(samples)
    ]
    from rwpost.evaluate.scoring import score_run

    got = score_run(samples, predictions, blocklist=BlockList(), n_resamples=0).dump()
    assert got["coverage"]["invalid_probabilities"] == 2
    assert got["coverage"]["invalid_probability_ids"] == [samples[0].id, samples[1].id]
    assert got["views"]["main"]["n_with_probabilities"] == 8
    assert got["views"]["main"]["n_invalid_probabilities"] == 2


# 4. compare ------------------------------------------------------------------------------------------


def test_compare_puts_mcnemar_beside_accuracy_and_a_paired_bootstrap_beside_every_metric():
    a = [T, F, U, F, F, T, U, F, T, F]
    b = [F, F, F, F, F, T, T, T, T, F]
    got = paired_comparison(GOLD, a, b, VIEWS["main"], n_resamples=200, seed=0)["metrics"]
    assert list(got) == ["weighted_f1", "accuracy", "weighted_recall", "weighted_precision", "macro_f1"]
    assert [k for k, m in got.items() if "mcnemar" in m] == ["accuracy"]
    for key, m in got.items():
        low, high = m["difference_ci95"]
        assert low <= m["difference"] <= high
        expected = sklearn_scores([str(x) for x in GOLD], [str(x) for x in a], "wrong")[key]
        assert m["a"] == pytest.approx(expected)


# 5. Calibration --------------------------------------------------------------------------------------


def test_calibration_uses_the_argmax_of_the_probabilities_not_the_label():
    gold = [F, F, T, T]
    label = [T, T, F, F]  # every label wrong...
    probabilities = [{"True": 0.1, "False": 0.9}] * 2 + [{"True": 0.9, "False": 0.1}] * 2  # ...argmax right
    got = view_metrics(gold, label, VIEWS["binary"], probabilities=probabilities, n_resamples=0)
    assert got["accuracy"] == 0.0
    assert got["reliability"] == [
        {
            "low": pytest.approx(0.8),
            "high": pytest.approx(0.9),
            "count": 4,
            "confidence": 0.9,
            "accuracy": 1.0,
        }
    ]
    assert got["ece"] == pytest.approx(0.1)


# 6. Files --------------------------------------------------------------------------------------------


def test_a_csv_saved_by_excel_with_a_byte_order_mark_is_read(tmp_path, samples, data):
    path = tmp_path / "excel.csv"
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "label"])
        writer.writerows([s.id, str(s.label)] for s in samples)
    assert _evaluate(data, tmp_path / "run", "--predictions", str(path)) == 0
    assert _metrics(tmp_path / "run")["accuracy"] == 1.0


def test_a_file_where_no_row_could_be_read_is_an_error_not_a_zero_score(tmp_path, data, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("identifier,verdict\nx,True\ny,False\n")
    assert _evaluate(data, tmp_path / "run", "--predictions", str(path)) != 0
    assert "no row could be read" in capsys.readouterr().err
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_duplicate_sample_ids_in_the_data_are_refused_naming_them(tmp_path, samples, capsys):
    path = tmp_path / "dup.jsonl"
    write_jsonl(path, [*samples, samples[3]])
    code = main(
        [
            "evaluate",
            "--data",
            str(path),
            "--detector",
            "majority",
            "--train-fraction",
            "0.5",
            "--out",
            str(tmp_path / "r"),
            *COMMON,
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "duplicate sample ids" in err and samples[3].id in err


def test_two_class_views_scored_from_three_class_answers_are_labelled_derived(tmp_path, data, evaluate_cli):
    evaluate_cli(
        "--data", str(data), "--detector", "majority", "--train-fraction", "0.5", "--out", str(tmp_path)
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["views"]["binary"]["derived"] and not metrics["views"]["main"]["derived"]
    report = (tmp_path / "report.md").read_text()
    assert "| binary (derived) |" in report and "| true_vs_not_true (derived) |" in report
    assert "| main |" in report
