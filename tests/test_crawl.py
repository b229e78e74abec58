"""The real Scrapy crawl, in a subprocess, against the sample site served on 127.0.0.1.

One full crawl is shared by most tests (module fixture); the kill/restart and refresh tests run their
own crawls on their own servers. The server records every request, which is how "fetched again" is
checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import killing
import pytest
from killing import (
    HASHED,
    assert_ids_once,
    crawl_options,
    jsonl_ids,
    moments,
    report,
    run_killed,
    timed,
    tree_digest,
)

from rwpost.crawl import CrawlConfig, crawl_command, crawl_env, find_crawlers_dir, run_crawl
from rwpost.errors import ConfigError, RwpostError
from rwpost.sample.build import LATEST_SITEMAP_SIZE, NEWS_SITEMAP_SIZE, load_gold
from rwpost.sample.hostile import HOSTILE_HOST, HOSTILE_PAGES, SITEMAP_ONLY_PAGES
from rwpost.sample.serve import SITEMAP_HOST, SampleServer
from rwpost.stages import crawl as crawl_stage
from tests.conftest import LATE, ROOT

SITE = ROOT / "data" / "sample" / "site"
GOLD = {g["id"]: g for g in load_gold(SITE)}
HOSTILE = json.loads((SITE / "hostile.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.slow


def options(server: SampleServer, out: Path, **extra) -> CrawlConfig:
    chosen = {
        "since": "any",
        "throttle": False,
        "allow_loopback": True,
        "contact": "tests@rwpost.invalid",
        "progress_interval": 0.5,
        **extra,
    }
    return CrawlConfig(start_url=f"{server.base_url}/fact-check/", out=out, **chosen)


def read_store(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "articles.jsonl").read_text(encoding="utf-8").splitlines()]


def identities(records: list[dict]) -> set[str]:
    """Ids of parsed pages; pages without a canonical URL are stored under the (random-port) URL
    they were fetched from, so compare those by path."""
    return {urlsplit(r["url"]).path if r["url"].startswith("http://127.0.0.1") else r["id"] for r in records}


def is_article(path: str) -> bool:
    """An article page of the sample site (``/fact-check/<slug>/``; not a listing or category page)."""
    return path.startswith("/fact-check/") and path.count("/") == 3


def article_requests(server: SampleServer) -> list[str]:
    return [path for _, path, _ in server.requests if is_article(path)]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    out = tmp_path_factory.mktemp("crawl")
    with SampleServer(SITE) as server:
        events: list[dict] = []
        report = run_crawl(options(server, out), on_event=events.append)
        requests = list(server.requests)
        yield {"out": out, "report": report, "events": events, "requests": requests, "server": server}


def test_every_article_is_stored_with_the_gold_fields(crawled):
    records = {r["id"]: r for r in read_store(crawled["out"])}
    for gold in GOLD.values():
        record = records[gold["id"]]
        assert record["url"] == gold["news_url"]
        assert record["parse_error"] is None
        assert (record["claim"], record["rating"], record["category"]) == (
            gold["claim"],
            gold["rating"],
            gold["category"],
        )
        assert (record["date_published"] or "")[:10] == (gold["date"] or "")
        assert record["layout"] == gold["layout"]


def test_store_has_no_duplicates_and_keeps_verbatim_html(crawled):
    out = crawled["out"]
    records = read_store(out)
    assert not [i for i, n in Counter(r["id"] for r in records).items() if n > 1]
    gold = next(iter(GOLD.values()))
    record = next(r for r in records if r["id"] == gold["id"])
    import gzip

    html = gzip.decompress((out / record["html_path"]).read_bytes())
    assert html == (SITE / gold["page"].lstrip("/") / "index.html").read_bytes()
    assert hashlib.sha256(html).hexdigest() == record["html_sha256"]


def test_images_are_content_addressed_with_their_size(crawled):
    out = crawled["out"]
    records = {r["id"]: r for r in read_store(crawled["out"])}
    for gold in GOLD.values():
        images = records[gold["id"]]["images"]
        if not gold["image_path"]:
            assert images == []
            continue
        (image,) = images
        data = (out / image["path"]).read_bytes()
        assert image["error"] is None and image["format"] == "JPEG"
        assert hashlib.sha256(data).hexdigest() == image["sha256"] and image["path"].startswith("images/")
        assert [image["width"], image["height"]] == gold["image_size"] and image["size_bytes"] == len(data)


def test_hostile_pages_end_in_the_store_with_reasons(crawled):
    records = read_store(crawled["out"])
    by_path = {r["fetched_url"].split(":", 2)[2].split("/", 1)[1]: r for r in records}

    def at(path: str) -> dict:
        return by_path[path.lstrip("/")]

    assert "no rating" in at("/fact-check/hostile-missing-rating/")["parse_error"]
    assert "no claim" in at("/fact-check/hostile-truncated/")["parse_error"]
    assert at("/fact-check/hostile-gone/")["http_status"] == 404
    assert at("/fact-check/hostile-gone/")["parse_error"] == "HTTP 404"
    assert "redirect loop" in at("/fact-check/hostile-loop/")["parse_error"]
    assert "too large" in at("/fact-check/hostile-huge/")["parse_error"]
    binary = at("/fact-check/hostile-binary/")
    assert binary["http_status"] == 200 and binary["parse_error"].startswith(
        "not an HTML page (Content-Type image/png"
    )
    for path in ("/fact-check/hostile-flaky/", "/fact-check/hostile-busy/"):
        assert at(path)["parse_error"] is None and at(path)["rating"] == "True"
    errors = [i["error"] for i in at("/fact-check/hostile-bad-image/")["images"]]
    assert errors[0].startswith("not an image") and errors[1].startswith("decompression bomb")
    assert errors[2].startswith("refused: not an http(s) URL")
    assert set(HOSTILE) == set(HOSTILE_PAGES)


def test_retries_honour_retry_after_and_robots_is_obeyed(crawled):
    statuses = [(p, s) for _, p, s in crawled["requests"]]
    assert statuses.count(("/fact-check/hostile-flaky/", 500)) == 1
    assert statuses.count(("/fact-check/hostile-flaky/", 200)) == 1
    assert statuses.count(("/fact-check/hostile-busy/", 429)) == 1
    assert crawled["report"]["this_run"]["retry_after_honoured"] == 2
    assert not [p for p, _ in statuses if p.startswith("/private/")]
    assert crawled["report"]["this_run"]["robots_forbidden"] == 1


def test_progress_events_and_report_are_written(crawled):
    kinds = [e["event"] for e in crawled["events"]]
    assert kinds[0] == "started" and kinds[-1] == "done"
    report = json.loads((crawled["out"] / "report.json").read_text())
    # 11 hostile paths: one robots-disallowed, one a duplicate of a real article
    assert report["store"]["articles"] == len(GOLD) + 9
    assert report["this_run"]["duplicates"] == 1
    assert report["store"]["parsed_ok"] == len(GOLD) + 3
    assert "tests@rwpost.invalid" in report["settings"]["user_agent"]


def test_second_run_fetches_no_article_page_again(crawled, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(crawled["out"], out)
    before = (out / "articles.jsonl").read_text()
    with SampleServer(SITE) as server:  # a new port: the store matches articles by path
        report = run_crawl(options(server, out))
        assert article_requests(server) == []
    assert report["this_run"]["fetched"] == 0
    assert report["this_run"]["skipped_stored"] == len(GOLD) + 10  # the alias too
    assert sorted(before.splitlines()) == sorted((out / "articles.jsonl").read_text().splitlines())


def test_newer_sitemap_lastmod_refetches_only_that_article(crawled, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    target = next(g for g in GOLD.values() if g["date"])
    sitemap = (site / "sitemap.xml").read_text()
    marker = f"{target['page']}</loc><lastmod>{target['date']}</lastmod>"
    assert marker in sitemap
    (site / "sitemap.xml").write_text(
        sitemap.replace(marker, f"{target['page']}</loc><lastmod>2099-01-01</lastmod>")
    )
    out = tmp_path / "out"
    shutil.copytree(crawled["out"], out)
    with SampleServer(site) as server:
        report = run_crawl(options(server, out))
        assert article_requests(server) == [target["page"]]
    assert report["this_run"]["refetch_updated"] == 1
    ids = [r["id"] for r in read_store(out)]
    assert len(ids) == len(set(ids)) == len(GOLD) + 9


def start_slow_crawl(server: SampleServer, out: Path, lines: int) -> subprocess.Popen:
    """Start a crawl child at one request per 50 ms; return once ``lines`` records are stored."""
    config = crawl_command(options(server, out))
    config_obj = json.loads(config[-1])
    config_obj["settings"] = {"DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
    config[-1] = json.dumps(config_obj)
    project = find_crawlers_dir()
    child = subprocess.Popen(
        config, cwd=project, env=crawl_env(project), stdout=subprocess.DEVNULL, start_new_session=True
    )
    store = out / "articles.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if store.exists() and len(store.read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    return child


def test_stopped_crawl_resumes_its_queue_and_fetches_no_article_twice(crawled, tmp_path):
    out = tmp_path / "stopped"
    with SampleServer(SITE) as server:
        child = start_slow_crawl(server, out, lines=20)
        child.send_signal(signal.SIGTERM)  # Scrapy's graceful stop: the JOBDIR keeps the pending queue
        assert child.wait(timeout=60) == 0
        stopped_at = len(read_store(out))
        assert stopped_at < len(GOLD)
        report = run_crawl(options(server, out))
        fetched = Counter(article_requests(server))
    assert report["this_run"]["resumed_scheduled"] > 0
    retried = {f"/fact-check/hostile-{name}/" for name in ("flaky", "busy", "loop", "loop-back")}
    assert not [path for path, n in fetched.items() if n > 1 and path not in retried]
    records = read_store(out)
    assert len({r["id"] for r in records}) == len(records)
    assert identities(records) == identities(read_store(crawled["out"]))


def test_killed_crawl_restarts_to_the_same_set_without_duplicates(crawled, tmp_path):
    out = tmp_path / "killed"
    with SampleServer(SITE) as server:
        child = start_slow_crawl(server, out, lines=30)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        store = out / "articles.jsonl"
        killed_count = len(store.read_text().splitlines())
        assert 30 <= killed_count < len(GOLD)
        assert not (out / "report.json").exists()
        events: list[dict] = []
        report = run_crawl(options(server, out), on_event=events.append)
    assert any(e.get("event") == "notice" and "killed" in e["message"] for e in events)
    records = read_store(out)
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids))
    assert identities(records) == identities(read_store(crawled["out"]))
    assert report["this_run"]["skipped_stored"] >= killed_count - 1


def test_crawl_refuses_loopback_without_the_flag_and_real_web_without_contact(tmp_path):
    with pytest.raises(ConfigError, match="allow-loopback"):
        run_crawl(CrawlConfig(start_url="http://127.0.0.1:9/fact-check/", out=tmp_path))
    with pytest.raises(ConfigError, match="contact"):
        run_crawl(CrawlConfig(start_url="https://www.snopes.com/fact-check/", out=tmp_path))
    with pytest.raises(ConfigError, match="no-throttle"):
        run_crawl(
            CrawlConfig(start_url="https://www.snopes.com/", out=tmp_path, contact="me@x.org", throttle=False)
        )
    with pytest.raises(ConfigError, match="since"):
        run_crawl(
            crawl_stage.Params.of(
                start_url="http://127.0.0.1:9/", out=tmp_path, allow_loopback=True, since="last year"
            )
        )


def test_date_window_and_max_articles_limit_what_is_fetched(tmp_path):
    with SampleServer(SITE) as server:
        report = run_crawl(options(server, tmp_path / "window", since="2023-01-01", until="2023-12-31"))
        fetched = set(article_requests(server))
    dated = {g["page"] for g in GOLD.values() if g["date"] and "2023-01-01" <= g["date"] <= "2023-12-31"}
    stored = {r["id"] for r in read_store(tmp_path / "window")}
    assert {g["id"] for g in GOLD.values() if g["page"] in dated} <= stored
    # an undated page cannot be placed outside the window, so it is kept
    assert not [g for g in GOLD.values() if g["id"] in stored and g["date"] and g["page"] not in dated]
    assert report["this_run"]["out_of_window"] > 0 and len(fetched) < len(GOLD)
    with SampleServer(SITE) as server:
        report = run_crawl(options(server, tmp_path / "five", max_articles=5))
        assert len(set(article_requests(server))) == 5
    assert report["store"]["articles"] == 5


def test_cli_crawl_prints_a_json_report(tmp_path, capsys):
    from rwpost.cli import main

    with SampleServer(SITE) as server:
        code = main(
            [
                "crawl",
                "--start-url",
                f"{server.base_url}/fact-check/",
                "--out",
                str(tmp_path / "cli"),
                "--allow-loopback",
                "--no-throttle",
                "--since",
                "any",
                "--max-articles",
                "3",
                "--contact",
                "tests@rwpost.invalid",
                "--json",
            ]
        )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["store"]["articles"] == 3 and report["this_run"]["fetched"] == 3
    assert main(["crawl", "--start-url", "http://127.0.0.1:9/", "--out", str(tmp_path / "x")]) == 2


def killed_crawl(server: SampleServer, out: Path, after: float) -> dict:
    """A crawl child SIGKILLed (with its process group) after ``after`` seconds; what it had stored."""
    project = find_crawlers_dir()
    killed = run_killed(crawl_command(crawl_options(server, out)), after, cwd=project, env=crawl_env(project))
    store = out / "articles.jsonl"
    lines = len(store.read_bytes().splitlines()) if store.exists() else 0  # the last may be torn: not parsed
    return {"after_s": round(after, 2), "killed": killed, "lines_at_kill": lines}


@pytest.mark.kill
@pytest.mark.slow
class TestKill:
    """Kill tests (issue 16): SIGKILL a crawl at seeded random moments, then resume it; the final store is
    byte-identical to an uninterrupted run's (so no duplicate and no missing record).

    CI runs 3 points; ``RWPOST_KILL_POINTS=20`` runs the full set (tests/killing.py). Each point: a fresh
    store, a crawl child killed (its whole process group) after a seeded random delay within one
    uninterrupted crawl's duration, then ``run_crawl`` to the end against the same server."""

    def test_crawls_killed_at_random_moments_resume_to_the_uninterrupted_store(self, tmp_path):
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


def store_digest(out: Path) -> dict[str, str]:
    """sha256 of every file DVC hashes in a crawl store."""
    return killing.tree_digest(out, HASHED)


STOP_AT = 5
"""Records a crawl stores before a test stops it; the sample site then holds every other article."""


def cli_crawl(server: SampleServer, out: Path) -> subprocess.Popen:
    """``rwpost crawl`` with AutoThrottle at ``--delay 0.05``, which cannot finish: once it has stored
    :data:`STOP_AT` records the server holds every article request until the test releases it."""
    store = out / "articles.jsonl"
    server.hold(lambda path: is_article(path) and line_count(store) >= STOP_AT)
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
            "--delay",
            "0.05",
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


def line_count(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def wait_for_lines(path: Path, lines: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if line_count(path) >= lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {lines} lines after {timeout} s")


def wait_for_text(path: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(encoding="utf-8", errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{path}: no {text!r} after {timeout} s")


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
def test_two_crawls_of_the_sample_site_are_byte_identical(sample_crawl, tmp_path):
    # the session's crawl (conftest) is the first, on another server and port
    with SampleServer(SITE) as server:
        run_crawl(crawl_options(server, tmp_path / "b"))
    digests = [store_digest(sample_crawl), store_digest(tmp_path / "b")]
    assert digests[0] == digests[1]
    assert len(digests[0]) > 100
    text = (sample_crawl / "articles.jsonl").read_text(encoding="utf-8")
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


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_rwpost_crawl_stops_its_child_gracefully_and_a_rerun_finishes(
    sample_crawl, tmp_path, signum
):
    out = tmp_path / "out"
    with SampleServer(SITE) as server:
        parent = cli_crawl(server, out)
        wait_for_lines(out / "articles.jsonl", STOP_AT)
        children = crawl_children(parent.pid)
        assert children
        parent.send_signal(signum)
        # Once the child has taken the signal, the held articles are answered and the graceful stop ends.
        wait_for_text(out / "crawl.log", f"Received {signum.name}, shutting down gracefully")
        server.release()
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
    assert store_digest(out) == store_digest(sample_crawl)  # the uninterrupted crawl's store


@pytest.mark.slow
def test_the_child_dies_with_a_killed_parent(tmp_path):
    out = tmp_path / "out"
    with SampleServer(SITE) as server:
        parent = cli_crawl(server, out)
        wait_for_lines(out / "articles.jsonl", STOP_AT)
        children = crawl_children(parent.pid)
        assert children
        parent.kill()
        parent.wait()
        assert all(gone(pid) for pid in children)


SITEMAP_GOLD = load_gold(SITE)


NEWS_PAGE, FEATURE_PAGE = SITEMAP_ONLY_PAGES


def sitemap_options(server: SampleServer, out: Path, **extra) -> CrawlConfig:
    chosen = {
        "since": "any",
        "throttle": False,
        "allow_loopback": True,
        "download_images": False,
        "contact": "tests@rwpost.invalid",
        "sitemaps": True,
        "sitemap_base": server.sitemap_base,
        "sitemap_hosts": [SITEMAP_HOST],
        **extra,
    }
    return CrawlConfig(start_url=f"{server.base_url}/", out=out, **chosen)


def fetched(server: SampleServer, prefix: str) -> list[str]:
    return [path for _, path, status in server.requests if path.startswith(prefix) and status == 200]


def pages_requested(server: SampleServer) -> set[str]:
    """Every page requested that is not a sitemap or robots.txt (articles, listings, anything else)."""
    return {p for _, p, _ in server.requests if not p.startswith("/sitemaps/") and p != "/robots.txt"}


@pytest.mark.slow
def test_window_of_months_fetches_exactly_those_months_articles_from_the_sitemap_host(tmp_path):
    with SampleServer(SITE) as server:
        report = run_crawl(sitemap_options(server, tmp_path / "out", since="2023-01-01", until="2023-06-30"))
        sitemaps = fetched(server, "/sitemaps/")
        requested = pages_requested(server)
    in_window = {g["page"] for g in SITEMAP_GOLD if g["date"] and "2023-01" <= g["date"][:7] <= "2023-06"}
    assert len(in_window) >= 8
    # the rated news piece is an article; the unrated /articles/N/ feature of the same sitemap is not fetched
    assert requested == in_window | {NEWS_PAGE}
    assert FEATURE_PAGE not in requested and not [p for p in requested if p.startswith("/fact-check/page/")]
    # one sitemap per month of the window, served on the sitemap host (it is 404 on the site's own host);
    # the latest and news sitemaps list recent articles only, so a window in the past does not read them
    months = [f"/sitemaps/sitemap-articles-2023-0{m}.xml" for m in range(6, 0, -1)]
    assert sorted(sitemaps) == sorted(m for m in months if (SITE / m.lstrip("/")).exists())
    assert sorted(p for _, p, _ in server.requests if p.startswith("/sitemaps/")) == sorted(months)
    run = report["this_run"]
    assert run["listing_pages"] == 0 and run["sitemap_not_article"] == 1 and run["sitemap_host_refused"] == 0
    assert run["found"] == run["fetched"] == len(in_window) + 1
    records = read_store(tmp_path / "out")
    gold_ids = {g["id"] for g in SITEMAP_GOLD if g["page"] in in_window}
    news = [r for r in records if r["url"].endswith(NEWS_PAGE)]
    assert {r["id"] for r in records} == gold_ids | {news[0]["id"]}
    assert news[0]["parse_error"] is None and news[0]["rating"]
    assert all(r["parse_error"] is None for r in records)


@pytest.mark.slow
def test_no_since_reads_only_the_latest_and_news_sitemaps(tmp_path):
    with SampleServer(SITE) as server:
        report = run_crawl(sitemap_options(server, tmp_path / "out"))
        sitemaps = fetched(server, "/sitemaps/")
        requested = pages_requested(server)
    newest = sorted((g for g in SITEMAP_GOLD if g["date"]), key=lambda g: g["date"], reverse=True)
    assert LATEST_SITEMAP_SIZE >= NEWS_SITEMAP_SIZE
    latest = {g["page"] for g in newest[:LATEST_SITEMAP_SIZE]}
    assert sorted(sitemaps) == ["/sitemaps/sitemap-latest.xml", "/sitemaps/sitemap-news.xml"]
    assert requested == latest  # the news sitemap's articles are the newest three, already scheduled
    assert report["this_run"]["fetched"] == len(latest) and report["store"]["parsed_ok"] == len(latest)


@pytest.mark.slow
def test_sitemaps_on_hosts_not_allowed_and_off_site_articles_are_ignored_and_counted(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    index = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>sitemap-articles-2024-03.xml</loc></sitemap>"
        "<sitemap><loc>https://sitemaps.rwpost.invalid/sitemaps/sitemap-articles-2024-02.xml</loc></sitemap>"
        "</sitemapindex>\n"
    )
    (site / "sitemaps" / "sitemap-index.xml").write_text(index)
    march = site / "sitemaps" / "sitemap-articles-2024-03.xml"
    march.write_text(
        march.read_text().replace(
            "</urlset>", "<url><loc>https://elsewhere.rwpost.invalid/fact-check/x/</loc></url>\n</urlset>"
        )
    )
    with SampleServer(site) as server:
        index_url = server.sitemap_base + "sitemap-index.xml"
        report = run_crawl(sitemap_options(server, tmp_path / "out", sitemap_urls=[index_url]))
        requested = pages_requested(server)
    march_pages = {g["page"] for g in SITEMAP_GOLD if (g["date"] or "").startswith("2024-03")}
    assert march_pages and requested == march_pages  # nothing of February: its sitemap's host is refused
    run = report["this_run"]
    assert run["sitemap_host_refused"] == 1 and run["sitemap_offsite"] == 1 and run["sitemaps"] == 2


def test_sitemap_options_on_hosts_not_allowed_are_refused_before_crawling(tmp_path):
    base = {"start_url": "http://127.0.0.1:9/", "out": tmp_path, "allow_loopback": True}
    with pytest.raises(ConfigError, match="--sitemap-url https://evil.invalid/s.xml: evil.invalid is not"):
        run_crawl(CrawlConfig(**base, sitemaps=True, sitemap_urls=["https://evil.invalid/s.xml"]))
    with pytest.raises(ConfigError, match="--sitemap-host"):
        run_crawl(CrawlConfig(**base, sitemaps=True, sitemap_base="http://localhost:9/sitemaps/"))
    with pytest.raises(ConfigError, match="expected an http"):
        run_crawl(CrawlConfig(**base, sitemaps=True, sitemap_urls=["file:///etc/passwd"]))


def test_an_import_of_saved_pages_reports_its_progress(tmp_path):
    """The import runs in a subprocess and says how far it is (what the command line's live line shows)."""
    from rwpost.crawl import run_import_html

    saved = tmp_path / "saved"
    saved.mkdir()
    for name in ("a", "b", "c"):
        (saved / f"{name}.html").write_text(LATE.read_text(encoding="utf-8"), encoding="utf-8")
    events: list[dict] = []
    counts = run_import_html(saved, tmp_path / "store", on_event=events.append)
    assert events and all(e["event"] == "progress" and e["total"] == 3 for e in events)
    assert events[0]["files"] == 0 and all(0 <= e["files"] < 3 for e in events)
    assert (counts["files"], counts["stored_ok"], counts["duplicates"]) == (3, 1, 2)
