"""Kill tests (issue 16): SIGKILL a crawl at seeded random moments, then resume it; the final store is
byte-identical to an uninterrupted run's (so no duplicate and no missing record).

CI runs 3 points; ``RWPOST_KILL_POINTS=20`` runs the full set. Each point: a fresh store, a crawl child
killed (its whole process group) after a seeded random delay within one uninterrupted crawl's duration,
then ``run_crawl`` to the end against the same server.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_crawl_harden import SITE, options, tree_digest

from rwpost.crawl import crawl_command, crawl_env, find_crawlers_dir, run_crawl
from rwpost.sample.serve import SampleServer

pytestmark = pytest.mark.slow

POINTS = int(os.environ.get("RWPOST_KILL_POINTS", "3"))
SEED = int(os.environ.get("RWPOST_KILL_SEED", "16"))


def killed_crawl(server: SampleServer, out: Path, after: float) -> int:
    """Start a crawl child and SIGKILL its process group after ``after`` seconds; the lines stored."""
    project = find_crawlers_dir()
    child = subprocess.Popen(
        crawl_command(options(server, out)),
        cwd=project,
        env=crawl_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(after)
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()
    store = out / "articles.jsonl"
    return len(store.read_bytes().splitlines()) if store.exists() else 0


def test_crawls_killed_at_random_moments_resume_to_the_uninterrupted_store(tmp_path):
    with SampleServer(SITE) as server:
        started = time.monotonic()
        run_crawl(options(server, tmp_path / "whole"))
        duration = time.monotonic() - started
    expected = tree_digest(tmp_path / "whole")
    records = len((tmp_path / "whole" / "articles.jsonl").read_text().splitlines())
    rng = random.Random(SEED)
    moments = sorted(rng.uniform(0.2, duration) for _ in range(POINTS))
    survived = []
    for point, after in enumerate(moments):
        out = tmp_path / f"kill{point}"
        with SampleServer(SITE) as server:
            stored = killed_crawl(server, out, after)
            run_crawl(options(server, out))
        ids = [json.loads(line)["id"] for line in (out / "articles.jsonl").read_text().splitlines()]
        assert len(ids) == len(set(ids)) == records, f"point {point} ({after:.2f} s)"
        assert tree_digest(out) == expected, f"point {point} ({after:.2f} s, {stored} lines at the kill)"
        survived.append({"after_s": round(after, 2), "lines_at_kill": stored})
    print(json.dumps({"points": len(survived), "records": records, "kills": survived}))
