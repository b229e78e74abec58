"""Sitemap-only discovery (``rwpost crawl --sitemaps``): the real Scrapy crawl, in a subprocess, of the
sample site, whose live-site sitemaps (``sitemaps/sitemap-articles-YYYY-MM.xml``, ``sitemap-latest.xml``,
``sitemap-news.xml``) are served only on another host name (``localhost``, as Snopes serves them from
media.snopes.com), with article URLs on the site's own host (127.0.0.1). No listing page is walked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.errors import ConfigError
from rwpost.sample.build import LATEST_SITEMAP_SIZE, NEWS_SITEMAP_SIZE, load_gold
from rwpost.sample.hostile import SITEMAP_ONLY_PAGES
from rwpost.sample.serve import SITEMAP_HOST, SampleServer

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
GOLD = load_gold(SITE)
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


def read_store(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "articles.jsonl").read_text(encoding="utf-8").splitlines()]


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
    in_window = {g["page"] for g in GOLD if g["date"] and "2023-01" <= g["date"][:7] <= "2023-06"}
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
    gold_ids = {g["id"] for g in GOLD if g["page"] in in_window}
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
    newest = sorted((g for g in GOLD if g["date"]), key=lambda g: g["date"], reverse=True)
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
    march_pages = {g["page"] for g in GOLD if (g["date"] or "").startswith("2024-03")}
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
