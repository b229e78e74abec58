"""Every read is bounded (issue 27): a gzip bomb among saved pages is set aside with its reason, a device
or an endless line as predictions is one line naming the file, and a runaway model answer is a failed
sample that keeps only its beginning, never the whole answer."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import rwpost.io
from rwpost.cli import main
from rwpost.io import MAX_PAGE_BYTES, TooLarge, read_bounded
from rwpost.llm.client import KEPT_CHARS, MAX_ANSWER_CHARS
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.evaluate_helpers import released_head

DENIRO = Path(__file__).parent / "fixtures" / "snopes_html" / "robert-de-niro-trump-oscars.html"
RELEASED = Path(__file__).parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"


def one_line(text: str) -> str:
    return " ".join(text.split())


def gzip_bomb(path: Path, size: int) -> None:
    """``size`` bytes of spaces as a small ``.gz`` (about a thousandth of it)."""
    with gzip.open(path, "wb", compresslevel=9) as handle:
        chunk = b" " * (1 << 20)
        for _ in range(size // len(chunk)):
            handle.write(chunk)


def test_a_gzip_bomb_among_saved_pages_is_set_aside_and_the_rest_imported(tmp_path, capsys):
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "deniro.html").write_text(DENIRO.read_text(encoding="utf-8"), encoding="utf-8")
    gzip_bomb(saved / "bomb.html.gz", MAX_PAGE_BYTES + (8 << 20))
    assert (saved / "bomb.html.gz").stat().st_size < 1 << 20
    store = tmp_path / "store"
    assert main(["crawl", "--from-html", str(saved), "--out", str(store), "--json"]) == 0
    report = json.loads((store / "report.json").read_text())
    assert (report["files"], report["unreadable"]) == (2, 1)
    rows = [json.loads(line) for line in (store / "articles.jsonl").read_text().splitlines()]
    [bomb] = [r for r in rows if "bomb" in r["url"]]
    assert f"larger than {MAX_PAGE_BYTES} bytes once decompressed" in bomb["parse_error"]
    [page] = [r for r in rows if "bomb" not in r["url"]]
    assert "larger than" not in (page.get("parse_error") or "") and page["claim"]  # read as before


def test_read_bounded_stops_at_its_bound(tmp_path):
    gzip_bomb(tmp_path / "b.gz", 4 << 20)
    assert len(read_bounded(tmp_path / "b.gz", 4 << 20, gunzip=True)) == 4 << 20
    with pytest.raises(TooLarge, match="once decompressed"):
        read_bounded(tmp_path / "b.gz", (4 << 20) - 1, gunzip=True)


def test_a_device_as_predictions_is_one_line(tmp_path, capsys):
    args = ["evaluate", "--data", str(RELEASED), "--predictions", "/dev/zero", "--out", str(tmp_path / "r")]
    assert main([*args, "--no-progress"]) == 1  # before: read until the kernel killed it at 24 GB
    assert one_line(capsys.readouterr().err) == "error: /dev/zero: is a device, expected a file"


def test_a_named_pipe_as_predictions_is_one_line_not_a_hang(tmp_path):
    # issue 39 L8: a FIFO nobody writes to waited for ever at open (stopped by timeout at 30 s)
    import os
    import subprocess
    import sys

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    command = [
        sys.executable,
        "-m",
        "rwpost",
        "evaluate",
        "--data",
        str(RELEASED),
        "--predictions",
        str(fifo),
    ]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "r"), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=300,  # a bound on a regression, not a timing
    )  # fmt: skip
    assert done.returncode == 1
    assert one_line(done.stderr) == f"error: {fifo}: is a named pipe (FIFO), expected a file"
    assert not (tmp_path / "r").exists()


def test_an_endless_line_or_file_of_predictions_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(rwpost.io, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(rwpost.io, "MAX_TEXT_BYTES", 1000)
    flat = tmp_path / "p.jsonl"
    flat.write_text(json.dumps({"id": "x", "label": "True", "explanation": "y" * 2000}) + "\n")
    args = ["evaluate", "--data", str(RELEASED), "--out", str(tmp_path / "r"), "--no-progress"]
    assert main([*args, "--predictions", str(flat)]) == 1
    assert one_line(capsys.readouterr().err) == f"error: {flat}:1: line longer than 1000 bytes"
    generic = tmp_path / "p.json"
    generic.write_text(json.dumps([{"meta": {"url": "u"}, "out": {"verdict": "y" * 2000}}]))
    fields = ["--id-field", "meta.url", "--label-field", "out.verdict"]
    assert main([*args, "--predictions", str(generic), *fields]) == 1
    assert one_line(capsys.readouterr().err) == f"error: {generic}: larger than 1000 bytes"


def test_a_runaway_answer_is_a_failed_sample_kept_short(tmp_path, monkeypatch):
    data, _ = released_head(tmp_path, 2)
    out = tmp_path / "run"
    huge = "x" * (MAX_ANSWER_CHARS + 1)
    with FakeLLMServer(lambda body: Reply.text(huge)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-runaway-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        args = [
            "evaluate",
            "--data",
            str(data),
            "--detector",
            "vlm",
            "--model",
            "test-model",
            "--setting",
            "T",
        ]
        assert main([*args, "--out", str(out), "--bootstrap", "5", "--no-progress", "--no-key-points"]) == 0
        assert server.chat_requests == 2 * 3  # an invalid answer is asked again, then the sample fails
    for row in (json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()):
        assert row["label"] is None
        assert f"answer of {len(huge)} characters, longer than the {MAX_ANSWER_CHARS} read" in row["error"]
    written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert written < 20 * KEPT_CHARS + 400_000  # before: every answer stored whole, over and over
