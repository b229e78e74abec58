"""ReMMDBench (``--data remmdbench:DIR``) and a T2-Agent port run on it, scored in ReMMDBench's own labels.

The benchmark folder and the port's run are hand-made here in the documented layouts: ReMMDBench's
``<id>/annotation.json`` + ``sample.json`` + ``images/`` (the port's ``src/t2agent/data.py``, README
section 7) and the port's ``<run>/details/<index:03d>_<id>.json`` with the fields its
``scripts/run_remmdbench.py`` writes (``_predict_one``). The expected figures are computed by hand below,
as the port's ``src/t2agent/labels.py`` (``verdict_metrics``, ``multilabel_metrics``) computes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_line, run_cli

SCORING = ["--bootstrap", "0", "--no-progress", "--no-key-points"]

# id, gold verdict, gold taxonomy, predicted verdict, predicted taxonomy
ROWS = [
    ("001", "True", [], "True", []),
    ("002", "Mostly True", ["T2 Distortion"], "True", ["T2 Distortion"]),
    ("003", "Mixture", ["T1 Fabrication", "C2 Contextual Inconsistency"], "Mixture", ["T1 Fabrication"]),
    ("004", "Mostly False", ["V1 Synthetic Visual Content"], "False", ["V2 Visual Editing"]),
    ("005", "False", ["T1 Fabrication"], "False", ["T1 Fabrication", "T3 Misleading Context"]),
    ("006", "False", [], "Mostly False", []),
]
# Verdicts: 3 of 6 right. Per class F1: True 2/3 (tp 001, fp 002), Mostly True 0, Mixture 1, Mostly False 0
# (fp 006, fn 004), False 1/2 (tp 005, fp 004, fn 006): macro (2/3 + 1 + 1/2) / 5 = 0.4333.
ACCURACY, MACRO_F1 = 0.5, 0.4333
# Taxonomy: exact 001, 002, 006 (3/6); T1 tp 2, T2 tp 1, T3 fp 1, V1 fn 1, V2 fp 1, C2 fn 1:
# micro P = R = 3/5, macro F1 (1 + 1) / 8.
TAXONOMY = {"exact_match_accuracy": 0.5, "micro_f1": 0.6, "macro_f1": 0.25}


def remmdbench_folder(root: Path, rows=ROWS) -> Path:
    """The benchmark's layout: one folder per sample."""
    for sid, verdict, taxonomy, *_ in rows:
        folder = root / sid
        (folder / "images").mkdir(parents=True)
        (folder / "images" / "01_img_1.jpg").write_bytes(b"\xff\xd8\xff\xd9")
        (folder / "annotation.json").write_text(
            json.dumps({"verdict": verdict, "distortion_taxonomy": taxonomy, "rationale": f"why {sid}"})
        )
        (folder / "sample.json").write_text(
            json.dumps(
                {
                    "text": f"News text {sid}.",
                    "images": ["01_img_1.jpg"],
                    "language_code": "de",
                    "region_code": "germany",
                    "theme_category": "Politics",
                    "text_length_tier": "medium",
                }
            )  # fmt: skip
        )
    return root


def port_run(run: Path, rows=ROWS, errors: dict[str, str] | None = None) -> Path:
    """A run folder as the port's ``run_remmdbench.py`` writes it (``details/<index:03d>_<id>.json``)."""
    errors = errors or {}
    (run / "details").mkdir(parents=True)
    for index, (sid, verdict, taxonomy, said, labels) in enumerate(rows):
        failed = sid in errors
        record = {
            "index": index,
            "sample_id": sid,
            "ground_truth_verdict": verdict,
            "ground_truth_taxonomy": taxonomy,
            "predicted_verdict": "ERROR" if failed else said,
            "predicted_taxonomy": "ERROR" if failed else labels,
            "verdict_match": not failed and said == verdict,
            "taxonomy_match": not failed and set(labels) == set(taxonomy),
            "elapsed_seconds": 12.5,
            "metadata": {"verdict": verdict, "distortion_taxonomy": taxonomy, "language_code": "de"},
            "resumed": False,
            "sample_dir": f"/path/to/ReMMDBench/{sid}",
            "image_paths": [f"/path/to/ReMMDBench/{sid}/images/01_img_1.jpg"],
            "prediction": None
            if failed
            else {
                "benchmark_name": "RealMMDBench",
                "sample_id": sid,
                "predicted_verdict": said,
                "predicted_taxonomy": labels,
                "final_scores": {"p_real": 0.4},
                "subtask_results": {"text": {"best_answer": "TEXT_SUPPORT", "visits": 3}},
            },
            "error": errors.get(sid),
        }
        (run / "details" / f"{index:03d}_{sid}.json").write_text(json.dumps(record, indent=2))
    return run


def metrics_of(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text())


def test_a_port_run_scores_to_the_ports_own_accuracy_and_macro_f1_over_all_rows(tmp_path, capsys):
    data = remmdbench_folder(tmp_path / "ReMMDBench")
    run = port_run(tmp_path / "artifacts" / "runs" / "gpt5_2")
    out = tmp_path / "scored"
    code, err = run_cli(capsys, "evaluate", "--data", f"remmdbench:{data}", "--predictions", run,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    metrics = metrics_of(out)
    assert metrics["primary_view"] == "remmdbench_verdict"
    assert metrics["coverage"]["answered"] == metrics["coverage"]["total"] == 6
    assert round(metrics["accuracy"], 3) == round(ACCURACY, 3)
    assert round(metrics["macro_f1"], 3) == round(MACRO_F1, 3)
    own = metrics["benchmark_scores"]
    assert own["verdict"]["accuracy"] == ACCURACY and own["verdict"]["macro_f1"] == MACRO_F1
    assert {k: own["taxonomy"][k] for k in TAXONOMY} == TAXONOMY
    view = metrics["views"]["remmdbench_verdict"]
    assert view["macro_classes"] == ["True", "Mostly True", "Mixture", "Mostly False", "False"]
    # RW-Post's views are extra views, through Table II (the "mostly" ones are Mixture)
    assert "RW-Post Table II mapping" in metrics["views"]["main"]["title"]
    assert metrics["views"]["challenging"]["n"] == 3
    report = (out / "report.md").read_text()
    assert "The primary view `remmdbench_verdict` is the benchmark's own label space" in report
    scored = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    assert [(r["gold_class"], r["predicted_class"]) for r in scored] == [(r[1], r[3]) for r in ROWS]
    assert [r["correct"] for r in scored] == [r[1] == r[3] for r in ROWS]


def test_without_data_the_gold_comes_from_the_predictions_file_and_the_report_says_so(tmp_path, capsys):
    run = port_run(tmp_path / "run", errors={"006": "Traceback ...\nTimeoutError: read timed out"})
    out = tmp_path / "scored"
    code, err = run_cli(capsys, "evaluate", "--predictions", run, "--out", out, *SCORING)
    assert code == 0, err
    metrics = metrics_of(out)
    assert metrics["primary_view"] == "remmdbench_verdict" and metrics["n_samples"] == 6
    # the port's conventions: accuracy over all rows (the ERROR is wrong), macro over the 5 valid rows
    # (True 2/3, Mixture 1, False 2/3: 005 right, 004 a false alarm; (2/3 + 1 + 2/3) / 5)
    assert metrics["benchmark_scores"]["verdict"]["accuracy"] == 0.5
    assert metrics["benchmark_scores"]["verdict"]["macro_f1"] == round((0.6667 + 1 + 0.6667) / 5, 4)
    assert metrics["benchmark_scores"]["verdict"]["errors"] == 1
    assert metrics["coverage"]["answered"] == 5
    assert "gold from the predictions file's ground_truth_verdict" in (out / "report.md").read_text()


def test_an_unknown_verdict_sets_that_row_aside_not_the_file(tmp_path, capsys):
    rows = [*ROWS[:5], ("006", "False", [], "Pants on Fire", [])]
    data = remmdbench_folder(tmp_path / "ReMMDBench", rows)
    run = port_run(tmp_path / "run", rows)
    out = tmp_path / "scored"
    code, err = run_cli(capsys, "evaluate", "--data", f"remmdbench:{data}", "--predictions", run,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    report = json.loads((out / "input_report.json").read_text())
    [bad] = report["bad_rows"]
    assert "005_006.json" in bad["reason"] and "Pants on Fire" in bad["reason"]
    assert metrics_of(out)["coverage"]["answered"] == 5


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"annotation": {"verdict": "Half Right"}}, "001/annotation.json, field 'verdict': expected one of"),
        ({"annotation": {"verdict": "True", "distortion_taxonomy": ["X9"]}}, "distortion_taxonomy"),
        ({"sample": {"text": "t", "images": ["../../secret.jpg"]}}, "outside the sample folder"),
        ({"sample": {"text": "t", "images": ["/etc/passwd"]}}, "outside the sample folder"),
    ],
)
def test_a_bad_sample_is_one_line_naming_file_and_field(tmp_path, capsys, change, problem):
    data = remmdbench_folder(tmp_path / "ReMMDBench", ROWS[:2])
    for name, content in change.items():
        (data / "001" / f"{name}.json").write_text(json.dumps(content))
    code, err = run_cli(capsys, "evaluate", "--data", f"remmdbench:{data}", "--detector", "majority",
                        "--out", tmp_path / "r", *SCORING)  # fmt: skip
    assert code != 0 and problem in one_line(err)
    assert not (tmp_path / "r").exists()
