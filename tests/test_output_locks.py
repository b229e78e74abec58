"""One run per output folder (issue 27): a second ``evaluate`` or ``extract`` into the ``--out`` of a
running one is refused at once, naming the first's PID, so no call is paid twice and no id written twice.

The first run is a real ``rwpost`` process against a slow loopback LLM server; the second runs here while
the first is waiting for its answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.extract.scripted import scripted_reply
from rwpost.io import FolderBusy, folder_lock, write_jsonl
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.evaluate_helpers import released_head

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
LATENCY_S = 1.5
"""Each answer's delay: the first run is still waiting for its answers when the second starts."""


def start_rwpost(server: FakeLLMServer, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(
        PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'crawlers'}",
        OPENAI_API_KEY="sk-lock-test",
        OPENAI_BASE_URL=server.base_url,
    )
    cmd = [sys.executable, "-m", "rwpost", *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_first_request(server: FakeLLMServer, first: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while server.chat_requests == 0:
        assert first.poll() is None, first.communicate()[0]
        assert time.monotonic() < deadline, "the first run never asked the server"
        time.sleep(0.05)


def refused(capsys, args: list[str], first: subprocess.Popen) -> None:
    """The second run into the same folder: refused in one line naming the first run's PID."""
    assert main(args) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"is being written by PID {first.pid}" in err and "cannot share one --out" in err, err


def vlm_answer(body: dict) -> Reply:
    return Reply.answer({"label": "True", "confidence": 0.7, "explanation": "x", "evidence_urls": []})


def test_a_second_evaluate_into_a_running_runs_folder_is_refused(tmp_path, capsys, monkeypatch):
    data, _ = released_head(tmp_path, 3)
    out = tmp_path / "run"
    args = ["evaluate", "--data", str(data), "--detector", "vlm", "--model", "test-model", "--setting", "T"]
    args += ["--out", str(out), "--bootstrap", "5", "--no-progress", "--no-key-points"]
    with FakeLLMServer(vlm_answer, latency_s=LATENCY_S) as server:
        first = start_rwpost(server, *args)
        try:
            wait_for_first_request(server, first)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-lock-test")
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            refused(capsys, args, first)
            assert first.wait(timeout=120) == 0, first.communicate()[0]
        finally:
            first.kill()
        assert server.chat_requests == 3  # each sample asked once
    ids = [json.loads(line)["id"] for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 3
    assert not (out / ".evaluate.lock").exists()  # released with the run
    assert main(args) == 0  # and the folder resumes as before


def test_a_second_extract_into_a_running_output_folder_is_refused(tmp_path, capsys, monkeypatch):
    gold = [json.loads(line) for line in (SITE / "gold.jsonl").read_text(encoding="utf-8").splitlines()[:3]]
    articles = [
        tag_article((SITE / g["page"].strip("/") / "index.html").read_text(encoding="utf-8"), g["news_url"])
        for g in gold
    ]
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, articles)
    out = tmp_path / "extract"
    args = [
        "extract",
        "--in",
        str(tagged),
        "--out",
        str(out),
        "--backend",
        "llm",
        "--cache",
        str(tmp_path / "c.db"),
    ]
    with FakeLLMServer(scripted_reply, latency_s=LATENCY_S) as server:
        first = start_rwpost(server, *args)
        try:
            wait_for_first_request(server, first)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-lock-test")
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            refused(capsys, args, first)
            assert first.wait(timeout=120) == 0, first.communicate()[0]
        finally:
            first.kill()
        assert server.chat_requests == 3 * 3  # post, rationale and evidence of each article, once
    ids = [json.loads(line)["id"] for line in (out / "extractions.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(a.id for a in articles)
    assert json.loads((out / "summary.json").read_text())["extracted"] == 3


def test_the_lock_of_a_dead_holder_is_taken_over_and_a_refused_run_leaves_no_folder(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".x.lock").write_text("999999\n")  # a SIGKILLed run's lock file
    with folder_lock(tmp_path / "out", ".x.lock") as path:
        assert path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(FolderBusy, match=f"PID {os.getpid()}"):
            with folder_lock(tmp_path / "out", ".x.lock"):
                pass
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(RuntimeError), folder_lock(tmp_path / "new", ".x.lock"):
        raise RuntimeError("refused before writing anything")
    assert not (tmp_path / "new").exists()
