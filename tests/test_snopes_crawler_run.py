"""The crawl's Scrapy settings (crawlers/snopes_crawler/run.py): the polite delay a run chooses."""

from __future__ import annotations

from pathlib import Path

from snopes_crawler.run import crawl_settings

from rwpost.crawl import CrawlConfig


def settings_for(**chosen):
    config = CrawlConfig(start_url="https://www.snopes.com/fact-check/", out=Path("o"), **chosen)
    return crawl_settings(config)


def test_the_delay_is_the_download_delay_and_autothrottles_start():
    default = settings_for()
    assert default.getfloat("DOWNLOAD_DELAY") == default.getfloat("AUTOTHROTTLE_START_DELAY") == 1.0
    assert default.getbool("AUTOTHROTTLE_ENABLED")
    quick = settings_for(delay=0.05)
    assert quick.getfloat("DOWNLOAD_DELAY") == quick.getfloat("AUTOTHROTTLE_START_DELAY") == 0.05
    # AutoThrottle never waits longer than its maximum: a delay over it raises the maximum.
    slow = settings_for(delay=90)
    assert slow.getfloat("DOWNLOAD_DELAY") == 90 and slow.getfloat("AUTOTHROTTLE_MAX_DELAY") >= 90
    assert settings_for(delay=5).getfloat("AUTOTHROTTLE_MAX_DELAY") == 60.0


def test_no_throttle_ignores_the_delay():
    unthrottled = settings_for(delay=3, throttle=False)
    assert unthrottled.getfloat("DOWNLOAD_DELAY") == 0
    assert not unthrottled.getbool("AUTOTHROTTLE_ENABLED")
