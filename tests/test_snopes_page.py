"""The Snopes page model (snopes/page.py) on real pages of every era, a damaged fragment and the
sample site."""

from __future__ import annotations

from datetime import UTC, datetime

import lxml.html
import pytest

from rwpost.ids import record_id
from rwpost.sample.build import load_gold
from rwpost.snopes.layouts import LAYOUT_2018_LATE, LAYOUT_2018_MICRODATA
from rwpost.snopes.links import canonical_image_url
from rwpost.snopes.page import SnopesArticle, page_url_problem, read_article
from rwpost.snopes.select import parse_html
from rwpost.tagged import tag_html
from tests.conftest import EARLY, FIXTURES, LATE, LATE_URL, NOT_TEXT, ROOT

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


def test_reading_a_parsed_page_leaves_the_tree_as_it_was():
    html = (FIXTURES / "quaden-bayles-suicide-hoax.html").read_text(encoding="utf-8")
    page = parse_html(html)
    before = lxml.html.tostring(page)
    url = "https://www.snopes.com/fact-check/quaden-bayles-suicide-hoax/"
    assert read_article(page, url) == read_article(html, url)
    assert lxml.html.tostring(page) == before


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


def test_published_time_is_zone_correct():
    html = "".join(
        (FIXTURES / n).read_text(encoding="utf-8")
        for n in ("robert-de-niro-trump-oscars.head.html", "robert-de-niro-trump-oscars.html")
    )
    page = read_article(html, "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/")
    assert page.date_published == datetime(2025, 3, 3, 19, 28, 26, tzinfo=UTC)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://www.snopes.com/fact-check/x/?a=1#b", None),
        ("HTTPS://u@H:8080/x", None),
        ("http://h:99999/", "not a URL (Port out of range 0-65535)"),
        ("https://h:x/", "not a URL (Port could not be cast to integer value as 'x')"),
        ("http://[::1/x", "not a URL (Invalid IPv6 URL)"),
        ("ftp://h/x", "not an http(s) URL"),
        ("https:///x", "no host"),
    ],
)
def test_a_page_url_needs_http_a_host_and_a_good_port(url, problem):
    assert page_url_problem(url) == problem
