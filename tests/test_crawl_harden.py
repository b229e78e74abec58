"""Issue 16, crawl side: deterministic stores, one writer per --out, graceful stops, fast failures.

Two crawls of the sample site give byte-identical hashed outputs; a second crawl into a locked store
fails with one line naming the holder's PID; SIGINT/SIGTERM to ``rwpost crawl`` stop its child too
(queue kept, exit 130/143) and a rerun finishes the store; an unreachable start URL fails fast.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import killing
import pytest
from killing import HASHED, SITE, crawl_options

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.errors import RwpostError
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer

ROOT = Path(__file__).resolve().parents[1]


def tree_digest(out: Path) -> dict[str, str]:
    """sha256 of every file DVC hashes in a crawl store."""
    return killing.tree_digest(out, HASHED)


@pytest.mark.slow
def test_two_crawls_of_the_sample_site_are_byte_identical(tmp_path):
    digests = []
    for name in ("a", "b"):
        with SampleServer(SITE) as server:
            run_crawl(crawl_options(server, tmp_path / name))
        digests.append(tree_digest(tmp_path / name))
    assert digests[0] == digests[1]
    assert len(digests[0]) > 100
    text = (tmp_path / "a" / "articles.jsonl").read_text(encoding="utf-8")
    assert "127.0.0.1" not in text
    ids = [json.loads(line)["id"] for line in text.splitlines()]
    assert ids == sorted(ids) and len(ids) == len(set(ids))


def test_a_second_crawl_into_a_locked_store_names_the_holder(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path[:0] = [sys.argv[1] + '/crawlers', sys.argv[1]]\n"
            "from snopes_crawler.store import store_lock\n"
            "with store_lock(sys.argv[2]):\n    print('locked', flush=True); time.sleep(60)",
            str(ROOT),
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with SampleServer(SITE) as server, pytest.raises(RwpostError, match=f"PID {holder.pid}") as info:
            run_crawl(crawl_options(server, tmp_path))
        assert "\n" not in str(info.value)
    finally:
        holder.kill()
        holder.wait()


def test_the_stale_lock_of_a_dead_pid_is_taken_over(tmp_path):
    (tmp_path / ".crawl.lock").write_text("999999\n")
    with SampleServer(SITE) as server:
        report = run_crawl(crawl_options(server, tmp_path, max_articles=2))
    assert report["store"]["articles"] == 2


def test_an_unreachable_start_url_fails_fast_with_one_line(tmp_path):
    started = time.monotonic()
    with pytest.raises(RwpostError, match="cannot connect") as info:
        run_crawl(CrawlConfig(start_url="http://127.0.0.1:9/fact-check/", out=tmp_path, allow_loopback=True))
    assert time.monotonic() - started < 10 and "\n" not in str(info.value)


def test_a_start_url_answering_404_is_an_error(tmp_path):
    with SampleServer(SITE) as server, pytest.raises(RwpostError, match="404") as info:
        run_crawl(
            CrawlConfig(
                start_url=f"{server.base_url}/no-such-listing/",
                out=tmp_path,
                allow_loopback=True,
                throttle=False,
            )
        )
    assert "\n" not in str(info.value)


def cli_crawl(server: SampleServer, out: Path) -> subprocess.Popen:
    """``rwpost crawl`` at one request per 100 ms (slow enough to be stopped mid-way)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rwpost.cli",
            "crawl",
            "--start-url",
            f"{server.base_url}/fact-check/",
            "--out",
            str(out),
            "--allow-loopback",
            "--since",
            "any",
            "--site-origin",
            HOSTILE_HOST,
            "--json",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def crawl_children(parent: int) -> list[int]:
    """PIDs whose parent is ``parent`` (from /proc)."""
    children = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{parent}\n" in text:
            children.append(int(status.parent.name))
    return children


def wait_for_lines(path: Path, lines: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_bytes().splitlines()) >= lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {lines} lines after {timeout} s")


def gone(pid: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_rwpost_crawl_stops_its_child_gracefully_and_a_rerun_finishes(tmp_path, signum):
    out = tmp_path / "out"
    with SampleServer(SITE) as server:
        parent = cli_crawl(server, out)
        wait_for_lines(out / "articles.jsonl", 5)
        children = crawl_children(parent.pid)
        assert children
        parent.send_signal(signum)
        _, stderr = parent.communicate(timeout=120)
        assert parent.returncode == 128 + signum
        assert "stopped" in stderr and "rerun to resume" in stderr
        assert all(gone(pid) for pid in children)
        assert (out / ".jobdir").exists() and not (out / ".jobdir" / "RUNNING").exists()
        stopped = len((out / "articles.jsonl").read_text().splitlines())
        events: list[dict] = []
        report = run_crawl(crawl_options(server, out), on_event=events.append)
    assert report["this_run"]["resumed_scheduled"] > 0
    assert report["store"]["articles"] >= stopped
    with SampleServer(SITE) as server:
        run_crawl(crawl_options(server, tmp_path / "whole"))
    assert tree_digest(out) == tree_digest(tmp_path / "whole")


@pytest.mark.slow
def test_the_child_dies_with_a_killed_parent(tmp_path):
    out = tmp_path / "out"
    with SampleServer(SITE) as server:
        parent = cli_crawl(server, out)
        wait_for_lines(out / "articles.jsonl", 5)
        children = crawl_children(parent.pid)
        assert children
        parent.kill()
        parent.wait()
        assert all(gone(pid) for pid in children)


def test_evaluate_with_the_vlm_detector_and_no_endpoint_fails_fast(tmp_path, monkeypatch):
    from rwpost.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
    started = time.monotonic()
    code = main(["evaluate", "--data", str(data), "--detector", "vlm", "--out", str(tmp_path / "ev")])
    assert code == 2 and time.monotonic() - started < 30
