"""Ctrl-C or SIGTERM on ``evaluate`` and ``extract`` (issue 27): one line saying what was kept, what was
in flight and how to resume, exit 130 (SIGINT) or 143 (SIGTERM); the same command then finishes.

Each run is a real ``rwpost`` process waiting for a slow loopback LLM server when the signal arrives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.extract.scripted import scripted_reply
from rwpost.io import write_jsonl
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.conftest import real_page
from tests.evaluate_helpers import released_head

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143)]


def interrupted(server: FakeLLMServer, sig: signal.Signals, *args: str) -> tuple[int, str]:
    """Run ``rwpost args`` until its first request reaches ``server``, send ``sig``; exit code and output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(
        PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'crawlers'}",
        OPENAI_API_KEY="sk-interrupt-test",
        OPENAI_BASE_URL=server.base_url,
    )
    # `python -m rwpost`, with Ctrl-C's default handler restored first: a test run started in the background
    # (`pytest &`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt for it
    start = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'rwpost'; runpy.run_module('rwpost', run_name='__main__', alter_sys=True)"
    )
    cmd = [sys.executable, "-c", start, *args]
    process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while server.chat_requests == 0:
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0]
            time.sleep(0.05)
        process.send_signal(sig)
        output, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, " ".join(output.split())


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_evaluate_says_what_it_kept_and_resumes(tmp_path, monkeypatch, sig, code):
    data, _ = released_head(tmp_path, 3)
    out = tmp_path / "run"
    args = ["evaluate", "--data", str(data), "--detector", "vlm", "--model", "test-model", "--setting", "T"]
    args += ["--out", str(out), "--bootstrap", "5", "--no-progress", "--no-key-points"]
    answer = {"label": "True", "confidence": 0.7, "explanation": "x", "evidence_urls": []}
    with FakeLLMServer(lambda body: Reply.answer(answer), latency_s=3.0) as server:
        returncode, output = interrupted(server, sig, *args)
        assert returncode == code, output
        assert output == (
            f"evaluate interrupted ({sig.name}): 0 of 3 answers kept in {out / 'predictions.jsonl'}; the 3 "
            "being asked were not kept (the next run asks them again); run the same command again to resume"
        )
        assert not (out / ".evaluate.lock").exists()
        server.latency_s = 0.0
        monkeypatch.setenv("OPENAI_API_KEY", "sk-interrupt-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(args) == 0
    assert json.loads((out / "metrics.json").read_text())["coverage"]["answered"] == 3


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_an_interrupted_extract_says_what_it_kept_and_resumes(tmp_path, monkeypatch, sig, code):
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [tag_article(real_page("robert-de-niro-trump-oscars"), "https://www.snopes.com/x/")])
    out = tmp_path / "out"
    args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "llm"]
    args += ["--cache", str(tmp_path / "c.db")]
    with FakeLLMServer(scripted_reply, latency_s=3.0) as server:
        returncode, output = interrupted(server, sig, *args)
        assert returncode == code, output
        assert output.startswith(f"extract interrupted ({sig.name}): 0 articles kept in {out} ")
        assert "the other 1 were in flight or not started" in output
        assert output.endswith("run the same command again to resume")
        server.latency_s = 0.0
        monkeypatch.setenv("OPENAI_API_KEY", "sk-interrupt-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(args) == 0
    assert json.loads((out / "summary.json").read_text())["extracted"] == 1
