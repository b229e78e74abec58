"""An interrupted crawl stage, rerun, gives the uninterrupted store (issue 27, hostile H2).

``dvc repro``'s crawl stage serves the sample site on a random loopback port. Stopped by Ctrl-C, it kept
its Scrapy queue, whose requests named that port; the rerun served the site on another port, every queued
page failed with "connection refused", was stored as an HTTP failure and never fetched again: 57 samples
became 53 with exit 0. Each test here stops ``python -m pipelines.crawl`` (as ``dvc repro`` runs it, in
its own process group) once a fifth of the store is written, reruns it to the end and compares the
store's hashed files with an uninterrupted run's.
"""

from __future__ import annotations

import copy
import errno
import fcntl
import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from killing import (
    HASHED,
    ROOT,
    SITE,
    child_env,
    crawl_options,
    jsonl_ids,
    run_to_end,
    stage_command,
    tree_digest,
)

from rwpost.crawl import run_crawl
from rwpost.ids import record_id
from rwpost.io import read_records, write_jsonl
from rwpost.records import CrawledArticle
from rwpost.sample.serve import SampleServer
from rwpost.stages.base import load_params

pytestmark = pytest.mark.slow

LINES_BEFORE_STOP = 20
"""Store lines written before the signal (of 111): the queue still holds most of the site."""


def _params(tmp_path: Path, out: Path) -> Path:
    params = copy.deepcopy(load_params(ROOT / "params.yaml"))
    params["crawl"]["out"] = str(out)
    # a slower crawl (same pages, same bytes) leaves time to stop it mid-way
    params["crawl"]["settings"] = {"CONCURRENT_REQUESTS": 4, "CONCURRENT_REQUESTS_PER_DOMAIN": 4}
    path = tmp_path / f"{out.name}.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def _wait_until_released(out: Path, timeout: float = 60) -> None:
    """Until no crawl holds ``out``'s lock (after a SIGKILL the crawler child stops on its own)."""
    deadline = time.monotonic() + timeout
    with open(out / ".crawl.lock", "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                assert exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN), exc
                assert time.monotonic() < deadline, f"{out} still locked after {timeout} s"
                time.sleep(0.1)
                continue
            fcntl.flock(handle, fcntl.LOCK_UN)
            return


def _stopped_stage(params: Path, out: Path, signum: int) -> dict:
    """The crawl stage started in its own process group and sent ``signum`` (the group) once the store
    holds :data:`LINES_BEFORE_STOP` lines; what it had written and how it ended."""
    stage = subprocess.Popen(
        stage_command("crawl", params),
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    store = out / "articles.jsonl"
    deadline = time.monotonic() + 120
    while _lines(store) < LINES_BEFORE_STOP and stage.poll() is None:
        assert time.monotonic() < deadline, "the crawl wrote nothing in 120 s"
        time.sleep(0.01)
    assert stage.poll() is None, "the crawl finished before it could be stopped"
    at_stop = _lines(store)
    os.killpg(stage.pid, signum)
    _, stderr = stage.communicate(timeout=120)
    _wait_until_released(out)
    return {"lines_at_stop": at_stop, "code": stage.returncode, "stderr": stderr.decode(errors="replace")}


@pytest.fixture(scope="module")
def uninterrupted(sample_crawl) -> dict:
    """The session's uninterrupted crawl of the sample site (conftest's ``sample_crawl``; the stage's slower
    settings fetch the same pages and store the same bytes)."""
    ids = sorted(jsonl_ids(sample_crawl / "articles.jsonl"))
    return {"out": sample_crawl, "files": tree_digest(sample_crawl, HASHED), "ids": ids}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_crawl_stage_stopped_and_rerun_stores_what_an_uninterrupted_one_does(
    tmp_path, signum, uninterrupted
):
    out = tmp_path / "stopped"
    params = _params(tmp_path, out)
    stop = _stopped_stage(params, out, signum)
    if signum != signal.SIGKILL:
        assert stop["code"] == 128 + signum, stop
        assert f"stopped ({signum.name}); rerun to resume" in stop["stderr"], stop
    assert _lines(out / "articles.jsonl") < len(uninterrupted["ids"]), stop
    run_to_end(stage_command("crawl", params), cwd=ROOT, env=child_env())
    assert sorted(jsonl_ids(out / "articles.jsonl")) == uninterrupted["ids"], stop
    assert tree_digest(out, HASHED) == uninterrupted["files"], stop


def test_pages_stored_as_transport_failures_are_fetched_again_and_the_store_repaired(tmp_path, uninterrupted):
    """A store damaged by the old resume (pages stored as "connection refused" under the dead port's URL)
    is repaired by a plain rerun: a failure before any response is an outage, not the site's answer."""
    out = tmp_path / "damaged"
    shutil.copytree(uninterrupted["out"], out)
    records = list(read_records(out / "articles.jsonl", CrawledArticle))
    damaged = [r for r in records if r.http_status == 200][:6]
    dead = "http://127.0.0.1:9"
    failures = []
    for record in damaged:
        url = dead + urlsplit(record.fetched_url or record.url).path
        failures.append(
            CrawledArticle(
                id=record_id(url),
                url=url,
                fetched_url=url,
                http_status=0,
                fetched_at=datetime.now(UTC),
                parse_error="DownloadConnectionRefusedError: Connection was refused by other side: 111.",
            )
        )
    kept = [r for r in records if r not in damaged]
    write_jsonl(out / "articles.jsonl", sorted([*kept, *failures], key=lambda r: r.id))
    with SampleServer(SITE) as server:
        report = run_crawl(crawl_options(server, out))
    assert report["this_run"]["refetch_failed"] == len(damaged)
    assert report["this_run"]["fetched"] == len(
        damaged
    )  # the redirect loop and the huge page stay as they are
    assert tree_digest(out, HASHED) == uninterrupted["files"]
