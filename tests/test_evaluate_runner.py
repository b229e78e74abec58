"""The runner: blinded inputs, resume after a kill without repeating calls, refusal to mix two runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.evaluate.runner import read_predictions
from rwpost.evaluate.task import blind
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import evidence, make_sample

ROOT = Path(__file__).resolve().parents[1]
DETECTOR = "tests.evaluate_helpers:CountingDetector"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "rwpost", "evaluate", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


@pytest.fixture
def data(tmp_path) -> Path:
    labels = [Label.TRUE, Label.FALSE, Label.UNPROVEN, Label.FALSE, Label.FALSE] * 2
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, [make_sample(i, g, evidence=evidence(2)) for i, g in enumerate(labels)])
    return path


def test_killed_run_resumes_without_repeating_calls(tmp_path, data):
    calls, arm, out = tmp_path / "calls.log", tmp_path / "armed", tmp_path / "run"
    arm.touch()
    args = [
        "--data",
        str(data),
        "--detector",
        DETECTOR,
        "--set",
        f"calls_log={calls}",
        "--set",
        f"arm_file={arm}",
        "--batch-size",
        "2",
        "--out",
        str(out),
        "--bootstrap",
        "0",
        "--no-progress",
        "--no-key-points",
    ]
    first = _cli(*args)
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert not (out / "metrics.json").exists()
    asked_before_kill = calls.read_text().split()
    assert len(asked_before_kill) == 4  # two batches of two answered, then killed
    assert len(read_predictions(out / "predictions.jsonl")) == 4

    second = _cli(*args)
    assert second.returncode == 0, second.stderr
    asked = calls.read_text().split()
    assert len(asked) == 10 and len(set(asked)) == 10, "a finished sample was asked again"
    assert json.loads((out / "metrics.json").read_text())["n_samples"] == 10

    third = _cli(*args)
    assert third.returncode == 0, third.stderr
    assert len(calls.read_text().split()) == 10, "a complete run made calls again"


def test_a_line_cut_short_by_a_kill_is_dropped_and_that_sample_asked_again(tmp_path, data):
    path = tmp_path / "predictions.jsonl"
    good = json.dumps({"repeat": 0, "id": "rw-a", "label": "True"})
    path.write_text(good + "\n" + '{"repeat": 0, "id": "rw-b", "lab')
    assert list(read_predictions(path)) == [(0, "rw-a")]
    assert path.read_text() == good + "\n"


def test_the_same_folder_refuses_a_different_run(tmp_path, data, capsys):
    out = tmp_path / "run"
    base = [
        "evaluate",
        "--data",
        str(data),
        "--detector",
        DETECTOR,
        "--out",
        str(out),
        "--bootstrap",
        "0",
        "--no-progress",
        "--no-key-points",
    ]
    assert main([*base, "--set", f"calls_log={tmp_path / 'a.log'}"]) == 0
    assert main([*base, "--set", f"calls_log={tmp_path / 'b.log'}"]) == 2
    assert "holds a different run" in capsys.readouterr().err


def test_detectors_never_see_gold_verdicts_and_see_evidence_only_in_gold_evidence():
    sample = make_sample(1, Label.FALSE, evidence=evidence(3), reasoning_logic="why", key_points=["k"])
    closed = blind(sample, "closed-book")
    assert (closed.label, closed.reasoning_logic, closed.key_points, closed.evidence) == (
        None,
        None,
        None,
        [],
    )
    gold = blind(sample, "gold-evidence")
    assert gold.label is None and len(gold.evidence) == 3
    train = blind(sample, "closed-book", keep_label=True)
    assert train.label is Label.FALSE and train.reasoning_logic is None


def test_trainable_detector_without_training_data_is_a_clear_error(tmp_path, data, capsys):
    code = main(
        [
            "evaluate",
            "--data",
            str(data),
            "--detector",
            "majority",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "learns from labelled samples: give --train or --train-fraction" in capsys.readouterr().err


def test_unknown_detector_names_the_known_ones(tmp_path, data, capsys):
    code = main(["evaluate", "--data", str(data), "--detector", "nope", "--out", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown detector 'nope'" in err and "majority" in err and "embedding" in err


def test_third_party_detectors_are_found_through_entry_points(tmp_path, monkeypatch, data):
    """A package installed with an entry point in group rwpost.detectors (a real .dist-info folder)."""
    dist = tmp_path / "site" / "my_agent-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agent\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[rwpost.detectors]\nmy-agent = {DETECTOR}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    from rwpost.evaluate.registry import available_detectors, make_detector

    assert available_detectors()["my-agent"] == DETECTOR
    detector = make_detector("my-agent", {"calls_log": str(tmp_path / "calls.log")})
    assert detector.name == "counting"
    out = tmp_path / "run"
    code = main(
        [
            "evaluate",
            "--data",
            str(data),
            "--detector",
            "my-agent",
            "--set",
            f"calls_log={tmp_path / 'c'}",
            "--out",
            str(out),
            "--bootstrap",
            "0",
            "--no-progress",
            "--no-key-points",
        ]
    )
    assert code == 0
    assert json.loads((out / "manifest.json").read_text())["detector"] == "my-agent"
