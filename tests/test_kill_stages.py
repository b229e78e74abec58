"""Kill tests (issue 16) of extract, filter and evaluate: each stage, run as a user or ``dvc repro`` runs it
(a subprocess), is SIGKILLed at seeded random moments within one uninterrupted run's duration, then rerun
to its end. Its outputs equal the uninterrupted run's, no record is duplicated or missing, and the resume
asks the loopback LLM server only what the killed run had not got an answer to (what it had is cached).

CI runs 3 points per stage; ``RWPOST_KILL_POINTS=20`` runs the full set (tests/killing.py).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from killing import (
    ROOT,
    SITE,
    assert_ids_once,
    child_env,
    cli_command,
    crawl_options,
    jsonl_ids,
    moments,
    report,
    run_killed,
    run_to_end,
    stage_command,
    timed,
    tree_digest,
)

from rwpost.crawl import run_crawl
from rwpost.extract.scripted import scripted_reply
from rwpost.llm import LLMCache
from rwpost.sample.serve import SampleServer
from rwpost.testing.llm import FakeLLMServer, Reply, message_text

pytestmark = pytest.mark.slow

RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
EXTRACT_OUTPUTS = ("extractions.jsonl", "rejects.jsonl", "summary.json")
FILTER_OUTPUTS = ("decisions.jsonl", "verdicts.jsonl", "rejects.jsonl", "summary.json", "funnel.json")
FILTER_RECORDS = 20
"""Tagged articles the filter test keeps: enough for several LLM calls and OCR runs, short enough for CI."""


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory) -> Path:
    """The sample site crawled by the real spider, then the reformat and offline extract stages."""
    root = tmp_path_factory.mktemp("pipeline")
    with SampleServer(SITE) as server:
        run_crawl(crawl_options(server, root / "crawl"))
    params = write_params(
        root,
        reformat={"crawl": str(root / "crawl"), "out": str(root / "tagged")},
        extract={
            "input": str(root / "tagged" / "articles.jsonl"),
            "out": str(root / "extract"),
            "backend": "offline",
            "cache": str(root / "unused.sqlite"),
        },
    )
    for stage in ("reformat", "extract"):
        run_to_end(stage_command(stage, params), cwd=ROOT, env=child_env())
    return root


def write_params(folder: Path, **sections: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(sections), encoding="utf-8")
    return path


def cached_answers(path: Path) -> int:
    """Answers the LLM cache holds: calls a killed run completed."""
    if not path.exists():
        return 0
    with LLMCache(path) as cache:
        return len(cache)


def settle(server: FakeLLMServer) -> int:
    """The requests the server got, once the killed client's last ones are through."""
    deadline = time.monotonic() + 10
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)
    return server.chat_requests


def kill_and_resume(
    server: FakeLLMServer, command: list[str], after: float, env: dict[str, str], cache: Path, cwd: Path
) -> dict[str, Any]:
    """Kill ``command`` after ``after`` s, then rerun it to its end; what the server and the cache saw."""
    before = server.chat_requests
    killed = run_killed(command, after, cwd=cwd, env=env)
    at_kill = settle(server)
    cached = cached_answers(cache)
    run_to_end(command, cwd=cwd, env=env)
    resumed = settle(server) - at_kill
    return {
        "after_s": round(after, 2),
        "killed": killed,
        "asked_before_kill": at_kill - before,
        "cached_at_kill": cached,
        "asked_on_resume": resumed,
    }


def test_extract_killed_at_random_moments_resumes_to_the_uninterrupted_outputs(tmp_path, pipeline):
    tagged = pipeline / "tagged" / "articles.jsonl"

    def params_in(folder: Path) -> Path:
        extract = {"input": str(tagged), "out": str(folder / "out"), "backend": "llm", "model": "scripted"}
        return write_params(
            folder, extract={**extract, "concurrency": 4, "cache": str(folder / "llm.sqlite")}
        )

    with FakeLLMServer(scripted_reply, latency_s=0.03) as server:
        env = child_env(OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url)
        whole = tmp_path / "whole"
        duration = timed(lambda: run_to_end(stage_command("extract", params_in(whole)), cwd=ROOT, env=env))
        calls = server.chat_requests
        expected = tree_digest(whole / "out", EXTRACT_OUTPUTS)
        ids = jsonl_ids(whole / "out" / "extractions.jsonl")
        assert len(ids) == len(jsonl_ids(tagged)) and calls == 3 * len(ids)
        kills = []
        for point, after in enumerate(moments(duration)):
            folder = tmp_path / f"kill{point}"
            command = stage_command("extract", params_in(folder))
            kill = kill_and_resume(server, command, after, env, folder / "llm.sqlite", ROOT)
            where = f"point {point}: {kill}"
            assert_ids_once(folder / "out" / "extractions.jsonl", ids, where)
            assert tree_digest(folder / "out", EXTRACT_OUTPUTS) == expected, where
            # every answer the killed run got is cached: the resume asks exactly the rest
            assert kill["asked_on_resume"] == calls - kill["cached_at_kill"], where
            cost = json.loads((folder / "out" / "cost.json").read_text())
            assert cost["counts"]["extracted"] + cost["counts"]["skipped"] == len(ids), where
            assert cost["summary"]["extracted"] == len(ids), where  # the outputs' totals, not the run's
            kills.append(kill)
    report("extract", kills, records=len(ids), llm_calls=calls, run_s=round(duration, 2))


def judge(body: dict[str, Any]) -> Reply:
    """A deterministic stand-in for the Tables S1/S2 judges: the answer is a function of the prompt."""
    user = message_text(body, "user")
    pick = int(hashlib.sha256(user.encode("utf-8")).hexdigest()[:4], 16)
    if "watermark" in message_text(body, "system").lower() or "data:image/" in json.dumps(body["messages"]):
        return Reply.answer({"watermarked": pick % 5 == 0, "matched_keywords": [], "reason": "scripted"})
    return Reply.answer({"image_required": ["yes", "yes", "no", "unsure"][pick % 4], "reason": "scripted"})


def test_filter_killed_at_random_moments_resumes_to_the_uninterrupted_outputs(tmp_path, pipeline):
    lines = (pipeline / "tagged" / "articles.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    tagged = tmp_path / "tagged.jsonl"
    tagged.write_text("".join(lines[:FILTER_RECORDS]), encoding="utf-8")

    def params_in(folder: Path) -> Path:
        section = {
            "tagged": str(tagged),
            "extractions": str(pipeline / "extract" / "extractions.jsonl"),
            "crawl": str(pipeline / "crawl"),
            "out": str(folder / "out"),
            "llm": True,
            "cache": str(folder / "llm.sqlite"),
        }
        return write_params(folder, filter=section)

    with FakeLLMServer(judge, latency_s=0.1) as server:
        env = child_env(OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url, RWPOST_LLM_MODEL="scripted")
        whole = tmp_path / "whole"
        duration = timed(lambda: run_to_end(stage_command("filter", params_in(whole)), cwd=ROOT, env=env))
        calls = server.chat_requests
        expected = tree_digest(whole / "out", FILTER_OUTPUTS)
        ids = jsonl_ids(tagged)
        assert calls > 0 and len(expected) == len(FILTER_OUTPUTS)
        kills = []
        for point, after in enumerate(moments(duration)):
            folder = tmp_path / f"kill{point}"
            command = stage_command("filter", params_in(folder))
            kill = kill_and_resume(server, command, after, env, folder / "llm.sqlite", ROOT)
            where = f"point {point}: {kill}"
            assert_ids_once(folder / "out" / "verdicts.jsonl", ids, where)
            assert tree_digest(folder / "out", FILTER_OUTPUTS) == expected, where
            assert kill["asked_on_resume"] == calls - kill["cached_at_kill"], where
            kills.append(kill)
    report("filter", kills, records=len(ids), llm_calls=calls, run_s=round(duration, 2))


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


def test_evaluate_killed_at_random_moments_resumes_to_the_uninterrupted_run(tmp_path):
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
        env = child_env(OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url, RWPOST_LLM_MODEL="scripted")
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
            assert without_times(json.loads((folder / "run" / "metrics.json").read_text())) == metrics, where
            assert kill["asked_on_resume"] == calls - kill["cached_at_kill"], where
            kills.append(kill)
    report("evaluate", kills, records=len(expected), llm_calls=calls, run_s=round(duration, 2))
