"""A full disk (issue 27): ``crawl``, ``evaluate`` and ``extract`` stop in one line naming the file they
could not write, leave nothing half-written (every JSONL line whole, no temporary file) and resume once
there is room.

The full disk is a file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored) on the ``rwpost`` process:
a real write past it fails with ``EFBIG`` ("File too large") from the same write paths an ``ENOSPC`` takes,
and it needs neither root nor a small file system (a 64 KB tmpfs was also tried by hand: the same lines,
with "No space left on device")."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from rwpost.cli import main
from rwpost.io import write_jsonl
from rwpost.sample.serve import SampleServer
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.evaluate_helpers import released_head

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"


def limited(limit: int, *args: str, **env: str) -> tuple[int, str, float]:
    """``rwpost args`` with no file allowed past ``limit`` bytes: exit code, output on one line, seconds."""

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of a core dump
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    environ.update(PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'crawlers'}", PYTHONDONTWRITEBYTECODE="1", **env)
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rwpost", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
        preexec_fn=preexec,  # noqa: PLW1509 (no threads here)
    )
    return done.returncode, " ".join((done.stdout + done.stderr).split()), time.monotonic() - began


def whole_lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends in a line cut short"
    return [json.loads(line) for line in data.splitlines()]


def no_temporary_files(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_evaluate_on_a_full_disk_stops_in_one_line_and_resumes(tmp_path, monkeypatch):
    data, _ = released_head(tmp_path, 30)
    out = tmp_path / "run"
    answer = {"label": "True", "confidence": 0.7, "explanation": "x" * 300, "evidence_urls": []}
    args = ["evaluate", "--data", str(data), "--detector", "vlm", "--model", "test-model", "--setting", "T"]
    args += ["--out", str(out), "--bootstrap", "5", "--no-progress", "--no-key-points", "--batch-size", "4"]
    with FakeLLMServer(lambda body: Reply.answer(answer)) as server:
        env = {"OPENAI_API_KEY": "sk-full-disk", "OPENAI_BASE_URL": server.base_url}
        code, output, _ = limited(6000, *args, **env)
        assert code == 1, output  # before: 70, "internal error: OSError: [Errno 28]"
        assert output == f"error: {out / 'predictions.jsonl'}: cannot write (File too large)"
        kept = whole_lines(out / "predictions.jsonl")
        assert 0 < len(kept) < 30
        no_temporary_files(out)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert main(args) == 0
    assert json.loads((out / "metrics.json").read_text())["coverage"]["answered"] == 30
    assert len(whole_lines(out / "predictions.jsonl")) == 30


def tagged_articles(path: Path, n: int) -> list:
    gold = [json.loads(line) for line in (SITE / "gold.jsonl").read_text(encoding="utf-8").splitlines()[:n]]
    articles = [
        tag_article((SITE / g["page"].strip("/") / "index.html").read_text(encoding="utf-8"), g["news_url"])
        for g in gold
    ]
    write_jsonl(path, articles)
    return articles


def test_extract_on_a_full_disk_stops_in_one_line_and_resumes(tmp_path):
    tagged = tmp_path / "tagged.jsonl"
    articles = tagged_articles(tagged, 12)
    out = tmp_path / "out"
    args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "offline"]
    code, output, _ = limited(8000, *args)
    assert code == 1, output
    assert output == f"error: {out / 'extractions.jsonl'}: cannot write (File too large)"
    assert 0 < len(whole_lines(out / "extractions.jsonl")) < 12
    no_temporary_files(out)
    assert main(args) == 0
    assert sorted(r["id"] for r in whole_lines(out / "extractions.jsonl")) == sorted(a.id for a in articles)
    # the LLM backend's answer cache on the full disk: one line naming it, never an internal error
    args = ["extract", "--in", str(tagged), "--out", str(tmp_path / "llm"), "--backend", "llm"]
    code, output, _ = limited(8000, *args, "--cache", str(tmp_path / "c.db"), OPENAI_API_KEY="sk-full-disk")
    assert code == 1 and output.startswith(f"error: {tmp_path / 'c.db'}: cannot open the cache ("), output


def test_a_crawl_on_a_full_disk_stops_in_one_line_and_resumes(tmp_path):
    out = tmp_path / "store"
    with SampleServer(SITE) as server:
        args = ["crawl", "--start-url", f"{server.base_url}/fact-check/", "--allow-loopback", "--no-throttle"]
        args += ["--since", "any", "--out", str(out)]
        code, output, seconds = limited(60_000, *args)
        assert code == 1, output  # before: it went on failing every page and never ended
        assert seconds < 90
        assert output.startswith("error: ") and output.endswith(
            ": cannot write (File too large); the crawl stopped: free space and rerun to resume"
        )
        kept = whole_lines(out / "articles.jsonl") if (out / "articles.jsonl").stat().st_size else []
        no_temporary_files(out)
        assert main(args) == 0
    ids = [r["id"] for r in whole_lines(out / "articles.jsonl")]
    assert len(ids) == len(set(ids)) > len(kept)
