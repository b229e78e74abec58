"""The Batch API path of evaluation (``--batch-api``) against the loopback server's files and batches
endpoints: the vlm detector's answers come from one batch into the same cache, the ledger prices them at
the batch rate, what the batch failed (error lines, invalid answers, an expired batch's rest) is asked
synchronously, and a run SIGKILLed while polling resumes the batch it recorded without a second one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rwpost.errors import ConfigError
from rwpost.evaluate import RunSpec, evaluate
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.evaluate_helpers import evidence, make_sample
from tests.vlm_helpers import SECRET, responder

ROOT = Path(__file__).resolve().parents[1]
GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE, Label.FALSE]
PRICE = Price(input_per_mtok=1.0, output_per_mtok=2.0)
SAME = ("id", "label", "probabilities", "explanation", "error", "repeat")
"""The fields of a prediction row that do not depend on how the answer was paid for."""


def samples():
    return [make_sample(i, g, evidence=evidence(2)) for i, g in enumerate(GOLD)]


def spec(server, cache: Path, **options) -> RunSpec:
    config = {"model": "test-model", "base_url": server.base_url, "cache_path": str(cache), "concurrency": 2}
    return RunSpec(
        "vlm",
        config=config,
        secrets={"api_key": SECRET},
        setting="T+E",
        n_resamples=20,
        prices={"test-model": PRICE},
        batch_poll_s=0.01,
        **options,
    )


def rows(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]


def test_batch_answers_match_synchronous_ones_at_half_price_and_failures_go_synchronous(tmp_path):
    with FakeLLMServer(responder) as server:
        sync = evaluate(
            samples(), spec(server, tmp_path / "sync.sqlite"), tmp_path / "sync", encode=None
        ).dump()
        calls = server.chat_requests
        batched = evaluate(
            samples(),
            spec(server, tmp_path / "batch.sqlite", batch_api=True),
            tmp_path / "batch",
            encode=None,
        ).dump()
        assert len(server.batches) == 1 and server.batch_requests == 6  # one batch of every sample
        # claim 5's answer is invalid: the batch's line is set aside and it alone is asked synchronously
        # (its three tries, as in the synchronous run)
        assert server.chat_requests - calls == 3
    keep = [{k: r[k] for k in SAME} for r in rows(tmp_path / "sync")]
    assert [{k: r[k] for k in SAME} for r in rows(tmp_path / "batch")] == keep
    assert batched["macro_f1"] == sync["macro_f1"]
    paid = {r["id"]: r["calls"][0] for r in rows(tmp_path / "batch")}
    listed = {r["id"]: r["calls"][0] for r in rows(tmp_path / "sync")}
    batch_ids = [r["id"] for r in rows(tmp_path / "batch") if r["error"] is None]
    assert len(batch_ids) == 5
    for i in batch_ids:  # the batch's answers: paid (not cache hits), at half the list price
        assert not paid[i]["cached"] and paid[i]["tokens_in"] == listed[i]["tokens_in"]
        assert paid[i]["cost_usd"] == pytest.approx(
            PRICE.cost(paid[i]["tokens_in"], paid[i]["tokens_out"]) / 2
        )
    state = Path(f"{tmp_path / 'batch.sqlite'}.batches.json")
    assert json.loads(state.read_text()) == {}  # nothing left in flight
    # the run says it was asked through the Batch API: its manifest, report and a leaderboard over both
    from rwpost.evaluate.leaderboard import leaderboard, leaderboard_markdown

    assert json.loads((tmp_path / "batch" / "manifest.json").read_text())["batch_api"] is True
    assert (
        "Asked through the provider's Batch API (--batch-api)"
        in (tmp_path / "batch" / "report.md").read_text()
    )
    assert "Batch API" not in (tmp_path / "sync" / "report.md").read_text()
    board = {r.run: r for r in leaderboard([tmp_path / "sync", tmp_path / "batch"])}
    assert board[str(tmp_path / "batch")].cost_cell().endswith(" (Batch API)")
    assert board[str(tmp_path / "sync")].cost_cell() != "-" and not board[str(tmp_path / "sync")].batch_api
    assert "priced at its rate" in leaderboard_markdown(list(board.values()))


def test_error_lines_and_an_expired_batch_fall_back_to_synchronous_calls(tmp_path):
    failed_once: set[str] = set()

    def flaky(body):  # claim 1's batch line is a server error; synchronously it is answered
        user = json.dumps(body["messages"])
        if "Generated claim number 1" in user and "1" not in failed_once:
            failed_once.add("1")
            return Reply.server_error(500)
        return responder(body)

    with FakeLLMServer(flaky) as server:
        metrics = evaluate(
            samples(), spec(server, tmp_path / "a.sqlite", batch_api=True), tmp_path / "a", encode=None
        ).dump()
        assert server.chat_requests == 1 + 3  # claim 1 once, claim 5's three tries
        server.batch_expire_after, before = 2, server.chat_requests
        evaluate(samples(), spec(server, tmp_path / "b.sqlite", batch_api=True), tmp_path / "b", encode=None)
        assert server.chat_requests - before == 4 + 2  # the 4 lines expiry left (claim 5: 3 tries)
    assert [r["label"] for r in rows(tmp_path / "a")] == [r["label"] for r in rows(tmp_path / "b")]
    assert metrics["coverage"]["answered"] == 5  # claim 5 alone: its answer is never valid


def test_a_run_killed_while_polling_resumes_its_batch_and_pays_once(tmp_path):
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(s.model_dump_json() + "\n" for s in samples()))
    with FakeLLMServer(responder) as server:
        server.batch_polls = 10**6  # the batch stays in progress until the child is killed
        script = (
            "import json, sys; from pathlib import Path; from rwpost.records import Sample; "
            "from rwpost.evaluate import evaluate; from tests.test_batch_evaluate import spec; "
            "from rwpost.testing.llm import FakeLLMServer; "
            "server = type('S', (), {'base_url': sys.argv[1]}); "
            "samples = [Sample.model_validate_json(x) for x in Path(sys.argv[2]).read_text().splitlines()]; "
            "evaluate(samples, spec(server, Path(sys.argv[3]), batch_api=True), sys.argv[4], encode=None)"
        )
        cache, out = tmp_path / "cache.sqlite", tmp_path / "run"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        child = subprocess.Popen(
            [sys.executable, "-c", script, server.base_url, str(data), str(cache), str(out)],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        state = Path(f"{cache}.batches.json")
        deadline = time.monotonic() + 60
        while not (state.exists() and json.loads(state.read_text() or "{}")) and time.monotonic() < deadline:
            assert child.poll() is None, "the child ended before recording its batch"
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        assert [v["batch_id"] for v in json.loads(state.read_text()).values()] == ["batch_1"]
        server.batch_polls = 0
        evaluate(samples(), spec(server, cache, batch_api=True), out, encode=None)
        assert len(server.batches) == 1 and server.batch_requests == 6  # the same batch: paid once
        assert server.chat_requests == 3  # claim 5's invalid answer only
    assert len(rows(out)) == 6 and json.loads(state.read_text()) == {}


def test_multi_step_detectors_are_refused_and_a_cache_is_required(tmp_path):
    from tests.evaluate_helpers import agentfact_spec

    with FakeLLMServer(responder) as server:
        agentic = agentfact_spec(server, server, tmp_path, setting="T+E")
        agentic.batch_api = True
        with pytest.raises(ConfigError, match="dependent model calls .* without --batch-api"):
            evaluate(samples(), agentic, tmp_path / "agentfact", encode=None)
        no_cache = spec(server, tmp_path / "x.sqlite", batch_api=True)
        no_cache.config.pop("cache_path")
        with pytest.raises(ConfigError, match="cache_path"):
            evaluate(samples(), no_cache, tmp_path / "nocache", encode=None)
        assert server.chat_requests == 0 and not server.batches  # refused before anything was paid


def test_params_batch_api_reaches_every_planned_run(tmp_path):
    from rwpost.evaluate.leakage import BlockList
    from rwpost.evaluate.shards import EvaluateSettings, _plan

    settings = EvaluateSettings(
        out=tmp_path, batch_api=True, batch_poll_s=2, detectors=[{"name": "majority"}, {"name": "vlm"}]
    )
    specs = [p.spec for p in _plan(settings, "main", BlockList())]
    assert [(s.batch_api, s.batch_poll_s) for s in specs] == [(True, 2.0), (True, 2.0)]


def test_cli_batch_api_asks_through_one_batch(tmp_path, monkeypatch):
    from rwpost.cli import main as cli_main

    def answer(body):
        return Reply.answer({"label": "True", "confidence": 0.9, "explanation": "e", "evidence_urls": []})

    data = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
    with FakeLLMServer(answer) as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        args = ["evaluate", "--data", str(data), "--detector", "vlm", "--setting", "T", "--batch-api"]
        args += ["--batch-poll-s", "0.01", "--set", f"cache_path={tmp_path / 'llm.sqlite'}"]
        args += ["--bootstrap", "10", "--no-key-points", "--no-progress", "--out", str(tmp_path / "run")]
        assert cli_main(args) == 0
        assert len(server.batches) == 1 and server.batch_requests == 46 and server.chat_requests == 0
    ledger = json.loads((tmp_path / "run" / "metrics.json").read_text())["ledger"]
    assert ledger["cache_hits"] == 0 and ledger["model_calls"] == 46
