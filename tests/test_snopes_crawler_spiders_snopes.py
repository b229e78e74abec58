"""The spider as a shell over the page model (crawlers/snopes_crawler/spiders/snopes.py)."""

from __future__ import annotations

import sys
from dataclasses import asdict

import pytest

from rwpost.snopes.page import read_article
from tests.conftest import FIXTURES, ROOT


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
