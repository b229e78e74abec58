"""The Snopes page model on real Snopes pages and the sample site, and the crawler's pure safety helpers
(no network)."""

from __future__ import annotations

import gzip
import io
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PIL import Image

from rwpost.ids import record_id
from rwpost.images import ImageRefused, address_refusal, inspect_image
from rwpost.records import CrawledArticle
from rwpost.sample.build import load_gold
from rwpost.sample.images import draw_decompression_bomb
from rwpost.snopes.listing import read_listing
from rwpost.snopes.page import SnopesArticle, read_article

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "crawlers"))

from snopes_crawler.middlewares import retry_after_seconds  # noqa: E402
from snopes_crawler.store import ArticleStore  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "snopes_html"
SITE = ROOT / "data" / "sample" / "site"


def real_page(name: str) -> SnopesArticle:
    """Join the verbatim head and body slices of a saved page (SOURCES.md) and parse it."""
    html = (FIXTURES / f"{name}.head.html").read_text(encoding="utf-8") + (
        FIXTURES / f"{name}.html"
    ).read_text(encoding="utf-8")
    return read_article(html, f"https://www.snopes.com/fact-check/{name}/")


def test_real_2025_page_parses_every_field():
    page = real_page("robert-de-niro-trump-oscars")
    assert page.layout == "snopes-2020s"
    assert page.canonical_url == "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/"
    assert page.claim == (
        'A video authentically shows actor Robert De Niro saying "F*** Trump" '
        "during his Oscars speech in 2025."
    )
    assert page.rating == "Miscaptioned"
    assert page.headline.startswith("Video of Robert De Niro saying '[Expletive] Trump'")
    assert page.author == "Nur Ibrahim"
    assert page.category == "Entertainment"
    # article:published_time (19:28 UTC); the JSON-LD says 11:28Z, Pacific local time labelled UTC (issue 17)
    assert page.date_published == datetime(2025, 3, 3, 19, 28, 26, tzinfo=UTC)
    assert page.date_published.isoformat() == "2025-03-03T11:28:26-08:00"  # the site's zone: the date shown
    # article:modified_time says 22:24:48 UTC; the JSON-LD's "14:24:48Z" is Pacific clock time labelled UTC
    assert page.date_modified.isoformat() == "2025-03-03T14:24:48-08:00"
    assert page.image_urls == [
        "https://mediaproxy.snopes.com/width/1200/https://media.snopes.com/2025/03/tony_awards.jpg"
    ]
    assert "It actually took place at the 2018 Tony Awards" in page.body_text
    assert (
        "https://www.theguardian.com/film/2018/jun/11/robert-de-niro-wins-ovation-fuck-trump-speech-tony-awards"
        in (page.body_links)
    )
    assert len(page.sources) == 3 and page.sources[0].startswith(
        "YouTube. https://www.youtube.com/watch?v=1zNr8Pf1QkY"
    )
    assert page.parse_error is None


def test_real_2026_page_parses_and_drops_ads_and_rating_box_from_body():
    page = real_page("house-resolution-piker-antisemitism")
    assert page.rating == "Mostly True"
    assert page.claim.startswith(
        "On April 30, 2026, a bipartisan group of legislators introduced a resolution"
    )
    assert page.author == "Nur Ibrahim"
    assert page.category == "Politics"
    assert page.date_published.date().isoformat() == "2026-05-02"
    assert page.image_urls == [
        "https://mediaproxy.snopes.com/width/1200/https://media.snopes.com/2026/05/hasan_piker.png"
    ]
    assert len(page.sources) == 7
    body = page.body_text
    assert "Advertisement" not in body and "About this rating" not in body and "Claim:" not in body
    assert body.endswith("Snopes has extensively reported on antisemitism accusations and free speech.")
    # the claim review's own URLs (sharing links, nav, tags) are not body links
    assert not any("facebook.com/sharer" in link or "/tag/" in link for link in page.body_links)


def test_damaged_2020_wordpress_fragment_parses_from_markup():
    html = (FIXTURES / "quaden-bayles-suicide-hoax.html").read_text(encoding="utf-8")
    page = read_article(html, "https://www.snopes.com/fact-check/quaden-bayles-suicide-hoax/")
    assert page.layout == "snopes-wordpress-2017"
    assert page.claim == "The BBC reported in February 2020 that Quaden Bayles had committed suicide."
    assert page.rating == "False"
    assert page.headline == "No, Quaden Bayles Did Not Commit Suicide"
    assert page.author == "David Mikkelson"
    assert page.date_published.date().isoformat() == "2020-02-29"
    assert page.image_urls[0].startswith("https://www.snopes.com/tachyon/2020/02/quaden.jpg")


@pytest.mark.parametrize("gold", load_gold(SITE), ids=lambda g: g["page"])
def test_every_sample_page_parses_to_its_gold_fields(gold):
    html = (SITE / gold["page"].lstrip("/") / "index.html").read_text(encoding="utf-8")
    page = read_article(html, f"http://127.0.0.1:8000{gold['page']}")
    assert record_id(page.canonical_url) == gold["id"]
    assert page.layout == gold["layout"]
    assert (page.claim, page.rating, page.category) == (
        gold["claim"],
        gold["rating"],
        gold["category"],
    )
    published = page.date_published.date().isoformat() if page.date_published else None
    assert published == gold["date"]
    expected_images = [f"http://127.0.0.1:8000/{gold['image_path']}"] if gold["image_path"] else []
    assert page.image_urls == expected_images
    for url in gold["evidence_urls"]:
        assert url in page.body_links
    # navigation, share widgets, ads and related articles are outside the body
    body = page.body_text or ""
    assert "Related Articles" not in body and "Buy one, get one free" not in body
    assert not any("sharer" in link or "ads.example.com" in link for link in page.body_links)


def test_sample_layouts_follow_the_date_rule():
    by_era = {}
    for g in load_gold(SITE):
        era = (
            "2022+"
            if (g["date"] or "0") >= "2022"
            else "2019-21"
            if (g["date"] or "0") >= "2019"
            else (
                "2018-late"
                if (g["date"] or "0")[:7] >= "2018-07"
                else "2017-18"
                if (g["date"] or "0") >= "2017"
                else "older"
            )
        )
        by_era.setdefault(era, set()).add(g["layout"])
    assert by_era.pop("2022+") == {"snopes-2020s"}
    assert by_era.pop("2019-21") == {"snopes-wordpress-2017"}
    assert by_era.pop("2018-late") == {"snopes-2018-cards"}
    assert by_era.pop("2017-18") == {"snopes-2018-microdata"}
    # 2015-2016 and undated pages are spread across the three older themes
    assert by_era.pop("older") <= {"snopes-2018-microdata", "snopes-2018-cards", "snopes-wordpress-2017"}


def test_listing_page_gives_articles_dates_next_page_and_categories():
    html = (SITE / "fact-check" / "index.html").read_text(encoding="utf-8")
    listing = read_listing(html, "http://127.0.0.1:8000/fact-check/")
    assert len(listing.articles) == 10
    url, listed = listing.articles[0]
    assert url.startswith("http://127.0.0.1:8000/fact-check/") and listed is not None
    assert listing.next_page == "http://127.0.0.1:8000/fact-check/page/2/"
    assert "http://127.0.0.1:8000/fact-check/category/politics/" in listing.categories


def test_listing_reads_the_2020s_archive_card_markup():
    # Markup of the live archive as public Snopes scrapers select it (div.article_wrapper cards,
    # span.article_date beside the link, a.page-number.next); a hand-written snippet, not a saved page.
    html = (
        '<div id="article-list"><div class="article_wrapper">'
        '<a class="outer_article_link_wrapper" href="https://www.snopes.com//fact-check/x-y/">'
        '<h3 class="article_title">T</h3></a><span class="article_date">March 3, 2025</span></div></div>'
        '<a class="page-number next" href="/fact-check/?pagenum=2">Next</a>'
    )
    listing = read_listing(html, "https://www.snopes.com/fact-check/")
    assert [(u, d.isoformat()) for u, d in listing.articles] == [
        ("https://www.snopes.com//fact-check/x-y/", "2025-03-03")
    ]
    assert listing.next_page == "https://www.snopes.com/fact-check/?pagenum=2"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("file:///etc/passwd", False),
        ("ftp://example.org/a.jpg", False),
        ("http://127.0.0.1:8000/a.jpg", False),
        ("http://10.0.0.5/a.jpg", False),
        ("http://169.254.169.254/latest/meta-data", False),
        ("http://[::1]/a.jpg", False),
        ("https://93.184.216.34/a.jpg", True),
    ],
)
def test_image_urls_refused_unless_public_http(url, allowed):
    assert (address_refusal(url, allow_loopback=False, resolve=False) is None) is allowed


def test_loopback_images_allowed_only_when_asked():
    assert address_refusal("http://127.0.0.1:8000/a.jpg", allow_loopback=True) is None
    assert address_refusal("http://10.0.0.5/a.jpg", allow_loopback=True) is not None


def test_image_inspection_accepts_images_and_refuses_bombs_and_non_images():
    buffer = io.BytesIO()
    Image.new("RGB", (150, 90), (200, 10, 10)).save(buffer, format="PNG")
    info = inspect_image(buffer.getvalue())
    assert (info.format, info.extension, info.width, info.height) == ("PNG", "png", 150, 90)
    with pytest.raises(ImageRefused, match="decompression bomb"):
        inspect_image(draw_decompression_bomb())
    with pytest.raises(ImageRefused, match="not an image"):
        inspect_image(b"<html><body>not an image</body></html>")
    with pytest.raises(ImageRefused, match="broken image"):
        inspect_image(buffer.getvalue()[:60])


def test_retry_after_reads_seconds_and_http_dates():
    from datetime import UTC, datetime

    assert retry_after_seconds("7") == 7.0
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None


def test_store_drops_a_torn_last_line_and_keeps_one_line_per_id(tmp_path):
    def record(url: str, claim: str) -> str:
        return CrawledArticle(
            id=record_id(url), url=url, http_status=200, fetched_at="2026-01-01T00:00:00Z", claim=claim
        ).model_dump_json()

    url = "https://www.snopes.com/fact-check/a/"
    lines = [record(url, "old"), record(url, "new"), record("https://www.snopes.com/fact-check/b/", "b")]
    (tmp_path / "articles.jsonl").write_text("\n".join(lines) + '\n{"id": "rw-torn', encoding="utf-8")
    store = ArticleStore(tmp_path)
    assert store.torn_lines == 1
    rows = [json.loads(line) for line in (tmp_path / "articles.jsonl").read_text().splitlines()]
    # one line per id (the last one wins), sorted by id (issue 16: deterministic store)
    expected = sorted([(record_id(url), "new"), (record_id("https://www.snopes.com/fact-check/b/"), "b")])
    assert [(r["id"], r["claim"]) for r in rows] == expected
    assert store.get_by_url("http://127.0.0.1:9/fact-check/a/").claim == "new"
    sha, path = store.save_html(b"<html>x</html>")
    assert gzip.decompress((tmp_path / path).read_bytes()) == b"<html>x</html>" and sha in path
