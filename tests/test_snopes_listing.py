"""Listings, archive cards, article URLs, sitemaps and robots.txt (snopes/listing.py)."""

from __future__ import annotations

import gzip
from datetime import datetime

from rwpost.snopes.listing import is_article_url, read_listing, sitemaps_between, sitemaps_of_robots
from tests.conftest import FIXTURES, LATE_URL, ROOT

SITE = ROOT / "data" / "sample" / "site"


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


def test_robots_txt_names_the_sitemaps_else_the_default_one():
    robots = "User-agent: *\nDisallow: /private/\nSitemap: /sitemap-index.xml\nsitemap: https://x.org/s.xml\n"
    assert sitemaps_of_robots(robots, "http://127.0.0.1:8000/robots.txt") == [
        "http://127.0.0.1:8000/sitemap-index.xml",
        "https://x.org/s.xml",
    ]
    assert sitemaps_of_robots("", "http://127.0.0.1:8000/robots.txt") == ["http://127.0.0.1:8000/sitemap.xml"]


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
