"""Kill tests (issue 16): SIGKILL a crawl at seeded random moments, then resume it; the final store is
byte-identical to an uninterrupted run's (so no duplicate and no missing record).

CI runs 3 points; ``RWPOST_KILL_POINTS=20`` runs the full set (tests/killing.py). Each point: a fresh
store, a crawl child killed (its whole process group) after a seeded random delay within one
uninterrupted crawl's duration, then ``run_crawl`` to the end against the same server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from killing import (
    HASHED,
    SITE,
    assert_ids_once,
    crawl_options,
    jsonl_ids,
    moments,
    report,
    run_killed,
    timed,
    tree_digest,
)

from rwpost.crawl import crawl_command, crawl_env, find_crawlers_dir, run_crawl
from rwpost.sample.serve import SampleServer

pytestmark = pytest.mark.slow


def killed_crawl(server: SampleServer, out: Path, after: float) -> dict:
    """A crawl child SIGKILLed (with its process group) after ``after`` seconds; what it had stored."""
    project = find_crawlers_dir()
    killed = run_killed(crawl_command(crawl_options(server, out)), after, cwd=project, env=crawl_env(project))
    store = out / "articles.jsonl"
    lines = len(store.read_bytes().splitlines()) if store.exists() else 0  # the last may be torn: not parsed
    return {"after_s": round(after, 2), "killed": killed, "lines_at_kill": lines}


def test_crawls_killed_at_random_moments_resume_to_the_uninterrupted_store(tmp_path):
    with SampleServer(SITE) as server:
        duration = timed(lambda: run_crawl(crawl_options(server, tmp_path / "whole")))
    expected = tree_digest(tmp_path / "whole", HASHED)
    ids = jsonl_ids(tmp_path / "whole" / "articles.jsonl")
    kills = []
    for point, after in enumerate(moments(duration)):
        out = tmp_path / f"kill{point}"
        with SampleServer(SITE) as server:
            kill = killed_crawl(server, out, after)
            run_crawl(crawl_options(server, out))
        where = f"point {point}: {kill}"
        assert_ids_once(out / "articles.jsonl", ids, where)
        assert tree_digest(out, HASHED) == expected, where
        kills.append(kill)
    report("crawl", kills, records=len(ids), run_s=round(duration, 2))
