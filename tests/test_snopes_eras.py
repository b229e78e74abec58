"""Real Snopes pages of every era (issue 17): the page model's fields, the tagged text, link identity and
kinds, listings of 2018 and 2026, saved pages into the crawl store, unknown ratings."""

from __future__ import annotations

import gzip
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rwpost.cli import app
from rwpost.ids import record_id
from rwpost.snopes.layouts import LAYOUT_2018_LATE, LAYOUT_2018_MICRODATA
from rwpost.snopes.links import canonical_image_url, link_identity, link_kind
from rwpost.snopes.listing import is_article_url, read_listing, sitemaps_between
from rwpost.snopes.page import read_article
from rwpost.tagged import rating_outcome, tag_article, tag_html

FIXTURES = Path(__file__).parent / "fixtures" / "snopes_html"
ERA_2018 = FIXTURES / "2018"
LATE = ERA_2018 / "2018-11_christmas-story-marathon-tbs.html"
LATE_URL = "https://www.snopes.com/fact-check/christmas-story-marathon-tbs/"


def _early_pages() -> list[dict]:
    pages = json.loads((ERA_2018 / "index.json").read_text(encoding="utf-8"))
    gold = json.loads((ERA_2018 / "with-rwpost-gold" / "index.json").read_text(encoding="utf-8"))
    pages += [dict(e, file=f"2018/with-rwpost-gold/{e['slug']}.fragment.html") for e in gold]
    return pages


EARLY = _early_pages()
NOT_TEXT = (
    "CLAIM",
    "RATING",
    "About this rating",
    "More From Snopes",
    "Loading...",
    "Filed Under",
    "Sources:",
)


def test_late_2018_page_every_field():
    page = read_article(LATE.read_text(encoding="utf-8"), LATE_URL)
    assert page.layout == LAYOUT_2018_LATE
    assert page.headline == "Did TBS Cancel Their ‘Christmas Story’ Marathon Due to Its Bullying Scene?"
    assert page.subtitle.startswith("The classic 1983 holiday film")
    assert (
        page.claim
        == 'TBS canceled a planned marathon of "A Christmas Story" due to the film\'s bullying scene.'
    )
    assert page.rating == "False"
    assert page.category == "Junk News"
    assert page.author == "Bethania Palma"
    assert page.date_published.date().isoformat() == "2018-11-28"
    assert page.body_text.startswith("Ralphie Parker’s confrontation")
    assert page.body_text.endswith("The movie marathon will run throughout Christmas day.")
    for absent in ("Bell, Amanda", "Filed Under", "Bethania Palma", "About this rating"):
        assert absent not in page.body_text
    assert page.body_links == [
        "https://www.buzzfeednews.com/",
        "https://www.snopes.com/tachyon/2018/11/christmas-story.jpg",
        "https://www.youtube.com/watch?v=lR29zxrY2LM",
    ]
    assert [canonical_image_url(u) for u in page.image_urls] == [
        "https://www.snopes.com/uploads/2018/11/xmasstory.jpg",
        "https://www.snopes.com/uploads/2018/11/christmas-story.jpg",
    ]
    assert not any("rating-false" in u for u in page.image_urls)
    assert page.sources == ["Bell, Amanda. “How to Watch ‘A Christmas Story.'” TV Guide . 19 November 2018."]
    assert page.parse_error is None


def test_late_2018_tagged_text_opens_with_the_lead_image_and_keeps_boxes_out():
    tagged = tag_html(LATE.read_text(encoding="utf-8"), LATE_URL)
    assert tagged.text.startswith("[IMAGE 1: https://www.snopes.com/tachyon/2018/11/xmasstory.jpg")
    urls = [link.url for link in tagged.links]
    assert "https://www.snopes.com/fact-check/rating/false/" not in urls
    assert not any("/author/" in u or "/tag/" in u or "rating-false" in u for u in urls)
    # the full-size link around the body image and the image itself: one id
    assert sum("christmas-story.jpg" in u for u in urls) == 1
    for absent in (*NOT_TEXT, "TBS canceled a planned marathon", "Bell, Amanda"):
        assert absent not in tagged.text


@pytest.mark.parametrize("entry", EARLY, ids=lambda e: e["file"].rsplit("/", 1)[-1])
def test_early_2018_microdata_pages(entry):
    html = (FIXTURES / entry["file"]).read_text(encoding="utf-8")
    page = read_article(html, entry["url"])
    assert page.layout == LAYOUT_2018_MICRODATA
    assert page.rating == entry["rating"]
    assert page.claim  # its exact value: the golden fields of tests/test_tagged.py
    assert page.date_published.date().isoformat() == entry["published"][:10]
    assert page.author
    assert page.body_text and not page.body_text.startswith(page.claim[:30])
    assert page.sources
    assert not any("/fact-check/rating/" in u or "/author/" in u for u in page.body_links)
    assert not any("rating-" in u.rsplit("/", 1)[-1] for u in page.image_urls)
    if entry["rating"] is None:  # "Actors Read 'Gun Facts'": no rating at all
        assert page.parse_error.startswith("no rating")
    else:
        assert page.parse_error is None
    tagged = tag_html(html, entry["url"])
    for absent in NOT_TEXT:
        assert absent not in tagged.text
    assert page.claim not in tagged.text
    assert not any("/fact-check/rating/" in link.url or "rating-" in link.url for link in tagged.links)


def test_hand_labelled_post_links_are_tagged():
    labels = json.loads((ERA_2018 / "labels.json").read_text(encoding="utf-8"))
    assert labels["hand_labelled"] is True
    urls = {e["file"].removeprefix("2018/"): e["url"] for e in EARLY} | {LATE.name: LATE_URL}
    for name, label in labels["pages"].items():
        tagged = tag_html((ERA_2018 / name).read_text(encoding="utf-8"), urls[name])
        ids = {link_identity(link.url) for link in tagged.links}
        for url in filter(None, [label["post_link"], *label["also_acceptable"]]):
            assert link_identity(url) in ids, (name, url)


def test_published_time_is_zone_correct():
    html = "".join(
        (FIXTURES / n).read_text(encoding="utf-8")
        for n in ("robert-de-niro-trump-oscars.head.html", "robert-de-niro-trump-oscars.html")
    )
    page = read_article(html, "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/")
    assert page.date_published == datetime(2025, 3, 3, 19, 28, 26, tzinfo=UTC)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://us-east-1.tchyn.io/snopes-production/uploads/2018/04/x.jpg", "https://www.snopes.com/uploads/2018/04/x.jpg"),
        ("https://www.snopes.com/uploads/2018/04/x.jpg", "https://www.snopes.com/uploads/2018/04/x.jpg"),
        ("https://www.snopes.com/tachyon/2018/11/x.jpg?resize=865,452", "https://www.snopes.com/uploads/2018/11/x.jpg"),
        ("https://media.snopes.com/2023/06/q.png", "https://www.snopes.com/uploads/2023/06/q.png"),
        ("https://mediaproxy.snopes.com/width/600/https://media.snopes.com/2023/06/q.png", "https://www.snopes.com/uploads/2023/06/q.png"),
        ("https://media-proxy.snopes.com/width/600?url=https://media.snopes.com/2024/02/s.png", "https://www.snopes.com/uploads/2024/02/s.png"),
        ("https://example.com/uploads/2018/04/x.jpg", "https://example.com/uploads/2018/04/x.jpg"),
    ],
)  # fmt: skip
def test_canonical_image_url(url, canonical):
    assert canonical_image_url(url) == canonical


def test_one_identity_per_tweet_and_video_kinds():
    assert link_identity("https://x.com/a/status/12?s=20") == link_identity("https://twitter.com/i/status/12")
    assert link_identity("https://x.com/a/status/12") != link_identity("https://x.com/a/status/13")
    fb = "https://www.facebook.com/plugins/video.php?href=https%3A%2F%2Fwww.facebook.com%2Fa%2Fvideos%2F1%2F"
    assert link_kind(fb) == "video"
    assert link_kind("https://content.jwplatform.com/players/X8vj1YQT-Rw1YG0C0.html") == "video"
    html = (
        '<div class="entry-content"><p>See <a href="https://example.com/full.jpg">'
        '<img src="https://example.com/full-300x200.jpg" alt="meme"></a></p></div>'
    )
    tagged = tag_html(html, "https://www.snopes.com/fact-check/x/")
    assert [(link.kind, link.url, link.anchor) for link in tagged.links] == [
        ("image", "https://example.com/full.jpg", "meme")
    ]


def test_unknown_and_missing_ratings_do_not_raise():
    assert rating_outcome("No Rating") == (None, "unrated")
    assert rating_outcome(None) == (None, "unrated")
    assert rating_outcome("Totally Bogus") == (None, "unknown-rating: Totally Bogus")
    assert rating_outcome("Incorrect Attribution")[0] == "False"
    html = LATE.read_text(encoding="utf-8").replace("False", "Totally Bogus")  # box and JSON-LD
    tagged = tag_article(html, LATE_URL)
    assert tagged.rating == "Totally Bogus" and tagged.label is None


def test_labels_unknown_lists_words_of_a_store(tmp_path):
    rows = [
        {"rating": r}
        for r in ("False", "Totally Bogus", "Totally Bogus", "No Rating", None, "Unproven (retired)")
    ]
    (tmp_path / "articles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["labels", "--unknown", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"Totally Bogus": 2}


def test_2018_listing_cards_give_dates_and_2026_archive_its_categories():
    listing = read_listing(
        (FIXTURES / "listings" / "fact-check-page-2018-11.repr.txt").read_text(encoding="utf-8"),
        "https://www.snopes.com/fact-check/page/2/",
    )
    assert len(listing.articles) == 21
    assert all(day is not None for _, day in listing.articles)
    assert listing.articles[0] == (LATE_URL, datetime(2018, 11, 28).date())
    html = gzip.decompress((FIXTURES / "listings" / "fact-check-archive-2026.html.gz").read_bytes()).decode()
    archive = read_listing(html, "https://www.snopes.com/fact-check/")
    assert len(archive.articles) == 20 and all(day for _, day in archive.articles)
    assert archive.next_page == "https://www.snopes.com/fact-check/?pagenum=2"
    assert "https://www.snopes.com/category/politics/" in archive.categories
    assert len(archive.categories) == len(set(archive.categories))


def test_article_url_filter_and_sitemaps():
    assert is_article_url("https://www.snopes.com/news/2018/11/28/about-that-meme/")
    assert is_article_url("https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/")
    assert not is_article_url("https://www.snopes.com/articles/469232/unrated-feature/")
    assert not is_article_url("https://www.snopes.com/fact-check/rating/false/")
    urls = sitemaps_between(datetime(2025, 12, 5).date(), None, datetime(2026, 1, 20).date())
    assert urls[-2:] == [
        "https://media.snopes.com/sitemaps/sitemap-articles-2026-01.xml",
        "https://media.snopes.com/sitemaps/sitemap-articles-2025-12.xml",
    ]
    assert "https://media.snopes.com/sitemaps/sitemap-latest.xml" in urls
    # a window in the past: only its months (the latest and news sitemaps list recent articles only)
    past = sitemaps_between(
        datetime(2023, 1, 1).date(), datetime(2023, 2, 28).date(), datetime(2026, 1, 20).date()
    )
    assert past == [
        "https://media.snopes.com/sitemaps/sitemap-articles-2023-02.xml",
        "https://media.snopes.com/sitemaps/sitemap-articles-2023-01.xml",
    ]
    mirror = sitemaps_between(
        None, None, datetime(2026, 1, 20).date(), base="http://localhost:8000/sitemaps/"
    )
    assert mirror == [
        "http://localhost:8000/sitemaps/sitemap-latest.xml",
        "http://localhost:8000/sitemaps/sitemap-news.xml",
    ]


def test_saved_pages_into_the_crawl_store(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "crawlers"))
    from snopes_crawler.saved import import_saved_pages

    saved = tmp_path / "saved"
    saved.mkdir()
    late = LATE.read_text(encoding="utf-8")
    stamp = "https://web.archive.org/web/20181129000000"
    wayback = (
        late.replace("https://www.snopes.com/", f"{stamp}/https://www.snopes.com/")
        .replace("https://www.snopes.com/tachyon", "https://www.snopes.com/tachyon")
        .replace("<body", "<!-- BEGIN WAYBACK TOOLBAR INSERT --><div>Wayback toolbar</div>"
                 '<a href="/web/2018/https://example.org/">x</a><!-- END WAYBACK TOOLBAR INSERT --><body', 1)
    )  # fmt: skip
    (saved / "capture.html").write_text(wayback, encoding="utf-8")
    (saved / "sub").mkdir()
    (saved / "sub" / "late.html.gz").write_bytes(gzip.compress(late.encode("utf-8")))
    early = EARLY[0]
    (saved / "early.html").write_text(
        (FIXTURES / early["file"]).read_text(encoding="utf-8"), encoding="utf-8"
    )
    (saved / "index.json").write_text(json.dumps([{"file": "early.html", "url": early["url"]}]))
    (saved / "nourl.html").write_text("<html><body><p>nothing</p></body></html>")
    counts = import_saved_pages(saved, tmp_path / "store")
    assert counts["files"] == 4 and counts["wayback"] == 1 and counts["duplicates"] == 1
    rows = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    by_url = {row["url"]: row for row in rows}
    late_row = by_url[LATE_URL]
    assert late_row["id"] == record_id(LATE_URL) and late_row["parse_error"] is None
    assert late_row["headline"].startswith("Did TBS Cancel")
    stored = gzip.decompress((tmp_path / "store" / late_row["html_path"]).read_bytes()).decode()
    assert "web.archive.org" not in stored and "Wayback toolbar" not in stored
    assert by_url[early["url"]]["rating"] == early["rating"]
    assert any(row["parse_error"] and row["parse_error"].startswith("no URL") for row in rows)
    assert sys.modules["snopes_crawler.saved"]


def test_an_unreadable_saved_page_is_set_aside_with_its_reason(tmp_path):
    """A cut-short ``.html.gz`` among saved pages: the import goes on (the real page is stored as usual);
    the damaged file becomes a record with its reason, which reformat sets aside, never a traceback."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "late.html").write_text(LATE.read_text(encoding="utf-8"), encoding="utf-8")
    page = LATE.read_bytes()
    (saved / "cut.html.gz").write_bytes(gzip.compress(page)[:4000])  # a download cut short
    runner = CliRunner()
    crawled = runner.invoke(app, ["crawl", "--from-html", str(saved), "--out", str(tmp_path / "store")])
    assert crawled.exit_code == 0, crawled.output
    rows = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    bad = next(row for row in rows if row["url"].endswith("/cut.html.gz"))
    assert bad["parse_error"].startswith("unreadable saved page: EOFError")
    report = json.loads((tmp_path / "store" / "report.json").read_text())
    assert (report["files"], report["stored_ok"], report["unreadable"]) == (2, 1, 1)
    out = tmp_path / "tagged"
    reformatted = runner.invoke(app, ["reformat", "--in", str(tmp_path / "store"), "--out", str(out)])
    assert reformatted.exit_code == 0, reformatted.output
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rejects] == [bad["id"]]
    assert "unreadable saved page" in json.dumps(rejects[0])


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


def test_an_index_json_that_gives_no_url_is_said_not_skipped(tmp_path):
    """The authors' gold folder lists pages by ``slug``, not ``file``: such an index gives no page its URL.
    The import says which index entry it could not use (in the command's output and the page's reason),
    where it used to say only "give it in an index.json beside it" with one right there."""
    saved = tmp_path / "saved"
    saved.mkdir()
    gold = FIXTURES / "2018" / "with-rwpost-gold"
    slug = "liberals-protesting-trump-photo"
    (saved / f"{slug}.fragment.html").write_bytes((gold / f"{slug}.fragment.html").read_bytes())
    (saved / "index.json").write_text(
        json.dumps([{"slug": slug, "url": f"https://www.snopes.com/fact-check/{slug}/"},
                    {"file": "missing.html", "url": "https://www.snopes.com/fact-check/missing/"}])
    )  # fmt: skip
    result = CliRunner().invoke(app, ["crawl", "--from-html", str(saved), "--out", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    assert 'index not used: index.json: entry 1 has no "file" and "url"' in result.output
    assert "index not used: index.json: entry 2: no such file missing.html" in result.output
    report = json.loads((tmp_path / "store" / "report.json").read_text())
    assert report["index_problems"] == 2 and len(report["index_problem_lines"]) == 2
    (row,) = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    assert row["parse_error"].startswith("no URL") and "entry 1" in row["parse_error"]
