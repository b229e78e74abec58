"""The runner: blinded inputs, resume after a kill without repeating calls, refusal to mix two runs."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from killing import assert_ids_once, child_env, cli_command, moments, report, run_to_end, timed

from rwpost.cli import main
from rwpost.errors import ConfigError
from rwpost.evaluate.contract import DetectorInputs
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.runner import RunSpec, read_predictions, run
from rwpost.evaluate.task import blind
from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from tests.evaluate_helpers import (
    HOSTILE_GOLD,
    SCRIPTED,
    TRUST_GOLD,
    F,
    evaluate_quietly,
    evidence,
    make_sample,
    read_metrics,
    run_evaluate,
    write_predictions,
)
from tests.killing import kill_and_resume

ROOT = Path(__file__).resolve().parents[1]
DETECTOR = "tests.evaluate_helpers:CountingDetector"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "rwpost", "evaluate", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


@pytest.fixture
def evidence_data(tmp_path) -> Path:
    labels = [Label.TRUE, Label.FALSE, Label.UNPROVEN, Label.FALSE, Label.FALSE] * 2
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, [make_sample(i, g, evidence=evidence(2)) for i, g in enumerate(labels)])
    return path


def test_killed_run_resumes_without_repeating_calls(tmp_path, evidence_data):
    calls, arm, out = tmp_path / "calls.log", tmp_path / "armed", tmp_path / "run"
    arm.touch()
    args = [
        "--data",
        str(evidence_data),
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


def test_a_line_cut_short_by_a_kill_is_dropped_and_that_sample_asked_again(tmp_path, evidence_data):
    path = tmp_path / "predictions.jsonl"
    good = json.dumps({"repeat": 0, "id": "rw-a", "label": "True"})
    path.write_text(good + "\n" + '{"repeat": 0, "id": "rw-b", "lab')
    assert list(read_predictions(path)) == [(0, "rw-a")]
    assert path.read_text() == good + "\n"


def test_the_same_folder_refuses_a_different_run(tmp_path, evidence_data, capsys):
    out = tmp_path / "run"
    base = [
        "evaluate",
        "--data",
        str(evidence_data),
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


def test_trainable_detector_without_training_data_is_a_clear_error(tmp_path, evidence_data, capsys):
    code = main(
        [
            "evaluate",
            "--data",
            str(evidence_data),
            "--detector",
            "majority",
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "learns from labelled samples: give --train or --train-fraction" in capsys.readouterr().err


def test_unknown_detector_names_the_known_ones(tmp_path, evidence_data, capsys):
    code = main(
        ["evaluate", "--data", str(evidence_data), "--detector", "nope", "--out", str(tmp_path / "r")]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown detector 'nope'" in err and "majority" in err and "embedding" in err


def test_third_party_detectors_are_found_through_entry_points(tmp_path, monkeypatch, evidence_data):
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
            str(evidence_data),
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


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_a_predictions_file_changed_in_place_is_refused_naming_it_and_overwrite_starts_afresh(
        self, tmp_path, samples, data, capsys
    ):
        preds = write_predictions(tmp_path / "p.jsonl", samples, [F] * len(TRUST_GOLD))
        out = tmp_path / "run"
        assert run_evaluate(data, out, "--predictions", str(preds)) == 0
        assert read_metrics(out)["accuracy"] == pytest.approx(0.5)
        write_predictions(preds, samples, TRUST_GOLD)  # the same path, now every answer right
        capsys.readouterr()
        assert run_evaluate(data, out, "--predictions", str(preds)) == 2
        err = capsys.readouterr().err
        assert "the predictions file" in err and "--overwrite" in err
        assert len(err.strip().splitlines()) == 1
        assert read_metrics(out)["accuracy"] == pytest.approx(0.5)  # nothing mixed or rewritten
        assert run_evaluate(data, out, "--predictions", str(preds), "--overwrite") == 0
        assert read_metrics(out)["accuracy"] == 1.0
        fresh = tmp_path / "fresh"
        assert run_evaluate(data, fresh, "--predictions", str(preds)) == 0
        assert read_metrics(out)["accuracy"] == read_metrics(fresh)["accuracy"]
        rows = (out / "predictions.jsonl").read_text().splitlines()
        assert len(rows) == len(TRUST_GOLD)  # the first run's predictions are gone, not mixed in
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["predictions_sha256"] == manifest["detector_config"]["sha256"]
        assert "identity" not in manifest  # run.json holds it; the manifest states each fact once
        assert manifest["failures"] == "wrong"

    def test_an_identical_run_resumes_and_every_changed_input_is_named(self, tmp_path, samples):
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
            "the samples' content": dict(
                samples=[samples[0].model_copy(update={"claim": "x"}), *samples[1:]]
            ),
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

    def test_code_version_and_prompts_are_in_the_identity(self, tmp_path, samples, monkeypatch):
        import rwpost.evaluate.identity as identity

        script = tmp_path / "script.json"
        script.write_text(json.dumps({"0": {s.id: "False" for s in samples}}))
        spec = RunSpec(SCRIPTED, config={"script": str(script)})
        run(samples, spec, tmp_path / "run")
        monkeypatch.setattr(identity, "code_version", lambda: "9.9.9")
        with pytest.raises(ConfigError, match="the code version"):
            run(samples, spec, tmp_path / "run")
        from rwpost.evaluate.registry import resolve_detector

        prompts = DetectorInputs(prompts={"p": "1"})
        monkeypatch.setattr(resolve_detector(SCRIPTED), "inputs", lambda self: prompts)
        with pytest.raises(ConfigError, match="the prompts"):
            run(samples, spec, tmp_path / "run", overwrite=False, on_change="refuse")


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(HOSTILE_GOLD)]

    def test_a_predictions_file_inside_out_named_like_the_run_log_is_never_deleted(
        self, tmp_path, data, samples, capsys
    ):
        """A system's output called predictions.jsonl, scored with --out its own folder: the run's log has the
        same name; --overwrite used to delete the input and write the log over it."""
        folder = tmp_path / "system"
        folder.mkdir()
        preds = folder / "predictions.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        before = preds.read_bytes()
        for extra in ([], ["--overwrite"]):
            capsys.readouterr()
            assert evaluate_quietly(data, folder, "--predictions", str(preds), *extra) == 2
            err = capsys.readouterr().err
            assert f"{preds}: is also an input" in err
            assert preds.read_bytes() == before
            assert sorted(p.name for p in folder.iterdir()) == ["predictions.jsonl"]

    def test_data_inside_out_named_like_a_run_file_is_never_replaced(self, tmp_path, samples, capsys):
        folder = tmp_path / "run"
        folder.mkdir()
        data = folder / "scored.jsonl"
        write_jsonl(data, samples)
        before = data.read_bytes()
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        assert evaluate_quietly(data, folder, "--predictions", str(preds), "--overwrite") == 2
        assert f"{data}: is also an input" in capsys.readouterr().err
        assert data.read_bytes() == before

    def test_a_run_inside_the_predictions_folder_it_reads_is_refused(self, tmp_path, data, samples, capsys):
        """An AgentFact output folder scored with --out below it: the run's own files joined the folder's
        checksum, so the same command run again was refused as 'the predictions file changed'."""
        root = tmp_path / "output"
        record = {
            "final_answer": {"updated_answer": {"validation_result": {"3-class_authenticity_label": "false"}}}
        }
        rows = [{"claim_id": s.id, "post_info": {"news_url": s.news_url}, **record} for s in samples]
        write_jsonl(root / "rwpost" / "test" / "full" / "0" / "gpt-4o" / "output.jsonl", rows)
        for _ in range(2):
            capsys.readouterr()
            assert evaluate_quietly(data, root / "scores", "--predictions", str(root)) == 2
            assert "inside the input folder" in capsys.readouterr().err
        assert not (root / "scores").exists()
        assert evaluate_quietly(data, tmp_path / "scores", "--predictions", str(root)) == 0


RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"


def verdict(body: dict[str, Any]) -> Reply:
    """A deterministic stand-in for a vision-language model's verdict on one post."""
    user = message_text(body, "user")
    pick = int(hashlib.sha256(user.encode("utf-8")).hexdigest()[:4], 16)
    label = ["True", "False", "False", "Unproven"][pick % 4]
    return Reply.answer(
        {"label": label, "confidence": 0.5 + pick % 50 / 100, "explanation": "scripted", "evidence_urls": []}
    )


RUN_SPECIFIC = {
    "wall_s",
    "latency_s",
    "started",
    "finished",
    "cached",
    "cache_hits",
    "cost_usd",
    "unpriced_calls",
}
"""Keys that time the run or follow from what the LLM cache served (a cached call is free in the ledger), not
from what was predicted: a resume serves the killed run's last answers from the cache. The ledger's
``list_cost_usd`` (every call at list price) is compared: it follows from the predictions alone."""


def without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in RUN_SPECIFIC}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def predictions_by_id(run: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    return {row["id"]: without_times(row) for row in rows}


@pytest.mark.kill
@pytest.mark.slow
class TestKill:
    """The kill pass (issue 16, tests/killing.py) on the evaluate runner: SIGKILLed at seeded moments, rerun
    to the uninterrupted run's outputs, asking the LLM server only what the killed run had not got."""

    def test_evaluate_killed_at_random_moments_resumes_to_the_uninterrupted_run(self, tmp_path):
        # relative --out and cache: every point's run has the same identity as the uninterrupted one
        command = cli_command(
            "evaluate",
            "--data",
            str(RELEASED),
            "--detector",
            "vlm",
            "--setting",
            "T",
            "--set",
            "cache_path=llm.sqlite",
            "--set",
            "concurrency=1",
            "--batch-size",
            "4",
            "--out",
            "run",
            "--bootstrap",
            "0",
            "--no-progress",
            "--no-key-points",
            "--prices",
            "prices.json",
        )
        prices = json.dumps({"scripted": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}})
        with FakeLLMServer(verdict, latency_s=0.08) as server:
            env = child_env(
                OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url, RWPOST_LLM_MODEL="scripted"
            )
            whole = tmp_path / "whole"
            whole.mkdir()
            (whole / "prices.json").write_text(prices)
            duration = timed(lambda: run_to_end(command, cwd=whole, env=env))
            calls = server.chat_requests
            expected = predictions_by_id(whole / "run")
            metrics = without_times(json.loads((whole / "run" / "metrics.json").read_text()))
            assert calls == len(expected) == len(RELEASED.read_text(encoding="utf-8").splitlines())
            assert metrics["ledger"]["list_cost_usd"] > 0  # compared below: the same after any resume
            kills = []
            for point, after in enumerate(moments(duration)):
                folder = tmp_path / f"kill{point}"
                folder.mkdir()
                (folder / "prices.json").write_text(prices)
                kill = kill_and_resume(server, command, after, env, folder / "llm.sqlite", folder)
                where = f"point {point}: {kill}"
                assert_ids_once(folder / "run" / "predictions.jsonl", expected, where)
                assert predictions_by_id(folder / "run") == expected, where
                assert without_times(json.loads((folder / "run" / "metrics.json").read_text())) == metrics, (
                    where
                )
                assert kill["asked_on_resume"] == calls - kill["cached_at_kill"], where
                kills.append(kill)
        report("evaluate", kills, records=len(expected), llm_calls=calls, run_s=round(duration, 2))


def test_a_deterministic_detector_under_repeats_runs_once_and_the_report_says_so(tmp_path):
    """``--detector stratified --detector embedding --repeats 3`` reran the deterministic detector three
    times (``± 0.000``, new-user review item 21): it runs once; the stochastic one still runs three times."""
    from tests.evaluate_helpers import TRUST_GOLD, make_sample

    data = tmp_path / "data.jsonl"
    write_jsonl(data, [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)])
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": make_sample(i, g).id, "label": "False"} for i, g in enumerate(TRUST_GOLD)])
    common = ["evaluate", "--data", str(data), "--repeats", "3", "--setting", "T", "--no-progress",
              "--no-key-points", "--bootstrap", "0"]  # fmt: skip
    out = tmp_path / "grid"
    args = ["--detector", "majority", "--detector", "stratified", "--train-fraction", "0.5"]
    assert main([*common, *args, "--out", str(out)]) == 0
    assert main([*common, "--predictions", str(preds), "--out", str(tmp_path / "file")]) == 0
    for run_dir in (out / "majority-T", tmp_path / "file"):
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert (manifest["repeats"], manifest["repeats_asked"]) == (1, 3)
        assert {
            json.loads(x)["repeat"] for x in (run_dir / "predictions.jsonl").read_text().splitlines()
        } == {0}
        assert "repeats" not in json.loads((run_dir / "metrics.json").read_text())  # no ± 0.000 spread
        assert (
            "Deterministic detector: run once, not the 3 repeats asked" in (run_dir / "report.md").read_text()
        )
    stratified = json.loads((out / "stratified-T" / "manifest.json").read_text())
    assert stratified["repeats"] == 3 and stratified.get("repeats_asked") is None
