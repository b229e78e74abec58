"""The Snopes page model's seams: parsel-style selectors over one BeautifulSoup tree, layouts as data
shared by the crawl record and the tagger, robots.txt sitemaps, and the spider as a shell over the model."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from rwpost.snopes.body import BODY_SELECTORS, LEAD_IMAGE_SELECTORS
from rwpost.snopes.layouts import LAYOUTS
from rwpost.snopes.listing import sitemaps_of_robots
from rwpost.snopes.page import read_article
from rwpost.snopes.select import first, first_raw, parse_html, values

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "snopes_html"


def test_text_queries_give_own_text_nodes_in_document_order():
    soup = parse_html(
        '<div class="a"><span class="b">inner</span> after <!-- note --></div>'
        '<p class="c" data-x="1">x &amp;amp; y</p><p class="c">  </p>'
    )
    assert values(soup, ".a::text") == [" after "]  # own text only, comments are not text
    assert values(soup, ".a::text, .b::text") == ["inner", " after "]  # a group: document order
    assert values(soup, "p::attr(data-x)") == ["1"]
    assert first(soup, ".missing::text", "p.c::text") == "x & y"  # entities decoded, as parsel did
    assert first_raw(soup, ".a::text") == " after " and first_raw(soup, "nav::text") is None


def test_every_layout_body_and_lead_image_is_known_to_the_tagger():
    for layout in LAYOUTS:
        for selector in layout.body.split(","):
            assert selector.strip() in BODY_SELECTORS, (layout.name, selector)
    assert LEAD_IMAGE_SELECTORS == tuple(layout.lead_image for layout in LAYOUTS if layout.lead_image)


def test_robots_txt_names_the_sitemaps_else_the_default_one():
    robots = "User-agent: *\nDisallow: /private/\nSitemap: /sitemap-index.xml\nsitemap: https://x.org/s.xml\n"
    assert sitemaps_of_robots(robots, "http://127.0.0.1:8000/robots.txt") == [
        "http://127.0.0.1:8000/sitemap-index.xml",
        "https://x.org/s.xml",
    ]
    assert sitemaps_of_robots("", "http://127.0.0.1:8000/robots.txt") == ["http://127.0.0.1:8000/sitemap.xml"]


def test_reading_a_parsed_page_leaves_the_tree_as_it_was():
    html = (FIXTURES / "quaden-bayles-suicide-hoax.html").read_text(encoding="utf-8")
    soup = parse_html(html)
    before = str(soup)
    url = "https://www.snopes.com/fact-check/quaden-bayles-suicide-hoax/"
    assert read_article(soup, url) == read_article(html, url)
    assert str(soup) == before


def test_spider_callback_yields_the_model_reading_of_the_page(tmp_path):
    scrapy = pytest.importorskip("scrapy")
    from scrapy.utils.test import get_crawler

    sys.path.insert(0, str(ROOT / "crawlers"))
    from snopes_crawler.spiders.snopes import SnopesSpider

    name = "robert-de-niro-trump-oscars"
    html = (FIXTURES / f"{name}.head.html").read_text(encoding="utf-8") + (
        FIXTURES / f"{name}.html"
    ).read_text(encoding="utf-8")
    url = f"https://www.snopes.com/fact-check/{name}/"
    crawler = get_crawler(SnopesSpider)
    spider = SnopesSpider.from_crawler(crawler, start_url=url, out_dir=str(tmp_path))
    request = scrapy.Request(url)
    response = scrapy.http.HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8", request=request)
    [item] = list(spider.parse_article(response))
    assert item["kind"] == "article" and item["parsed"] == asdict(read_article(html, url))
    assert item["parsed"]["rating"] == "Miscaptioned"
