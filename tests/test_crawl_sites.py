"""A real Scrapy crawl of other fact-checkers' pages (the real saved pages of tests/fixtures/multisite/,
served on 127.0.0.1): discovery from a ClaimReview feed (streamed; the feed's fields a fallback, the
page's own win, each field saying where it came from) and from a site's sitemaps found in robots.txt,
with robots.txt obeyed, ``Retry-After`` honoured and a second run fetching nothing again.

The feed and sitemap files are generated in the test (their review fields are invented wording, to
tell them apart from the pages'); the pages are real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.errors import ConfigError
from rwpost.records import CrawledArticle
from rwpost.testing.sites import FolderServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent / "fixtures" / "multisite"
GOLD = {
    g["file"].removeprefix("pages/"): g
    for g in map(json.loads, (ROOT / "index.jsonl").read_text(encoding="utf-8").splitlines())
}
PAGES = {
    "afp-factuel/9XC9W4-2022.html": "/fc/afp-factuel.html",  # ClaimReview JSON-LD, fr
    "tfc-taiwan/articles-7177.html": "/fc/tfc-7177.html",  # ClaimReview, zh-Hant, no ratingValue
    "reuters/es-otan-roger-cloutier-2022.html": "/fc/reuters-es.html",  # no ClaimReview, es on lang=en
    "newtral/orquesta-corea-del-norte-killing-in-the-name-2022.html": "/fc/newtral.html",
    "africa-check/south-african-mayor-covid-vaccine-2021.html": "/private/africa-check.html",
}
BUSY = "/fc/newtral.html"
"""Answers 503 with Retry-After once: fetched on the retry."""


def _web(folder: Path) -> Path:
    for file, path in PAGES.items():
        target = folder / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "pages" / file, target)
    return folder


def _feed(base: str) -> dict:
    """A DataFeed of the pages (and one review that names no page)."""

    def review(path: str, claim: str, rating: str) -> dict:
        return {
            "@type": "ClaimReview",
            "url": base + path,
            "claimReviewed": claim,
            "datePublished": "2022-01-01",
            "itemReviewed": {"@type": "Claim", "appearance": [{"url": f"https://social.example{path}"}]},
            "reviewRating": {"@type": "Rating", "alternateName": rating},
        }

    items = [review(path, f"feed wording of {path}", "Falso") for path in PAGES.values()]
    items.append({"@type": "ClaimReview", "claimReviewed": "a review of no page"})
    elements = [{"@type": "DataFeedItem", "item": [item]} for item in items]
    return {"@context": "https://schema.org", "@type": "DataFeed", "dataFeedElement": elements}


def _options(out: Path, **extra) -> CrawlConfig:
    # no images: theirs are on the publishers' hosts, which a test cannot reach (a page whose images failed
    # for want of a network is fetched again by the next run, as it should be)
    chosen = {
        "throttle": False,
        "allow_loopback": True,
        "contact": "tests@rwpost.invalid",
        "since": "any",
        "download_images": False,
    }
    return CrawlConfig(out=out, progress_interval=0.5, **chosen, **extra)


def _store(out: Path) -> dict[str, CrawledArticle]:
    lines = (out / "articles.jsonl").read_text(encoding="utf-8").splitlines()
    records = [CrawledArticle.model_validate_json(line) for line in lines]
    return {r.fetched_url.split("/", 3)[3]: r for r in records}


@pytest.fixture(scope="module")
def feed_crawl(tmp_path_factory):
    web = _web(tmp_path_factory.mktemp("web"))
    (web / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("crawl")
    with FolderServer(web, busy=(BUSY,)) as server:
        feed = tmp_path_factory.mktemp("feed") / "feed.json"
        feed.write_text(json.dumps(_feed(server.base_url)), encoding="utf-8")
        report = run_crawl(_options(out, feed=str(feed)))
        requests = list(server.requests)
    return {"out": out, "report": report, "requests": requests}


def test_the_feed_crawl_reads_every_allowed_page_with_the_multisite_reader(feed_crawl):
    records = _store(feed_crawl["out"])
    assert set(records) == {path.lstrip("/") for path in PAGES.values() if not path.startswith("/private/")}
    for file, path in PAGES.items():
        if path.startswith("/private/"):
            continue
        record, gold = records[path.lstrip("/")], GOLD[file]
        assert (record.language, record.publisher, record.layout) == (
            gold["language"],
            gold["publisher"],
            "multisite",
        )
        assert record.url == (gold["canonical"] or gold["url"])  # the page's own canonical link


def test_page_fields_win_and_the_feed_fills_what_the_page_lacks(feed_crawl):
    records = _store(feed_crawl["out"])
    page = records["fc/afp-factuel.html"]  # its own ClaimReview
    review = page.claim_reviews[0]
    gold = GOLD["afp-factuel/9XC9W4-2022.html"]
    assert (review.claim_reviewed, review.rating_alternate_name) == (gold["claim_reviewed"], "Faux")
    assert review.appearances == ["https://social.example/fc/afp-factuel.html"]  # the page has none
    assert page.field_sources["claim_reviewed"] == "json-ld" and page.field_sources["appearances"] == "feed"
    assert page.metadata_only is False
    bare = records["fc/reuters-es.html"]  # no ClaimReview on the page: the feed's review, marked so
    assert [(r.claim_reviewed, r.source) for r in bare.claim_reviews] == [
        ("feed wording of /fc/reuters-es.html", "feed")
    ]
    assert (
        bare.field_sources["claim_reviewed"] == "feed" and bare.claim == "feed wording of /fc/reuters-es.html"
    )


def test_robots_txt_is_obeyed_retry_after_honoured_and_a_review_without_page_counted(feed_crawl):
    requests, counts = feed_crawl["requests"], feed_crawl["report"]["this_run"]
    assert not [p for p, _ in requests if p.startswith("/private/")]
    assert [s for p, s in requests if p == BUSY] == [503, 200]
    assert counts["feed_reviews"] == len(PAGES) + 1 and counts["feed_reviews_without_url"] == 1
    assert counts["robots_forbidden"] == 1


def test_a_sitemap_crawl_of_a_site_is_incremental(tmp_path):
    web = _web(tmp_path / "web")
    with FolderServer(web) as server:
        urls = "".join(f"<url><loc>{server.base_url}{p}</loc></url>" for p in PAGES.values())
        sitemap = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        (web / "sitemap.xml").write_text(sitemap, encoding="utf-8")
        (web / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {server.base_url}/sitemap.xml\n")
        first = run_crawl(_options(tmp_path / "out", start_url=server.base_url + "/", reader="sites"))
        assert first["this_run"]["fetched"] == len(PAGES)
        assert {r.language for r in _store(tmp_path / "out").values()} == {"fr", "zh-Hant", "es", "en"}
        fetched_before = len(server.requests)
        second = run_crawl(_options(tmp_path / "out", start_url=server.base_url + "/", reader="sites"))
        pages_again = [p for p, _ in server.requests[fetched_before:] if p.endswith(".html")]
    assert pages_again == [] and second["this_run"]["skipped_stored"] == len(PAGES)


def test_a_feed_that_is_no_file_or_a_loopback_url_without_leave_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="--feed .*: no such file"):
        run_crawl(_options(tmp_path / "out", feed=str(tmp_path / "missing.json")))
    with pytest.raises(ConfigError, match="loopback address"):
        run_crawl(CrawlConfig(out=tmp_path / "out", feed="http://127.0.0.1:9/feed.json", contact="x@y.z"))
    assert not (tmp_path / "out").exists()


def test_a_feed_url_is_fetched_to_the_store_and_streamed_from_there(tmp_path):
    web = _web(tmp_path / "web")
    with FolderServer(web, placeholder="__BASE__") as server:
        (web / "feed.json").write_text(json.dumps(_feed("__BASE__")), encoding="utf-8")
        report = run_crawl(_options(tmp_path / "out", feed=f"{server.base_url}/feed.json"))
    assert report["this_run"]["feed_reviews"] == len(PAGES) + 1
    assert json.loads((tmp_path / "out" / "feed.json").read_text(encoding="utf-8"))["@type"] == "DataFeed"
    assert len(_store(tmp_path / "out")) == len(PAGES)  # no robots.txt here: every page is allowed
