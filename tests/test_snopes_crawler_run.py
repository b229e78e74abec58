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


def test_components_switched_off_are_left_out_of_scrapy_s_lists():
    """Scrapy imports every component its lists name (a None entry too) before the component says it is
    off: the remote control (on by default since Scrapy 2.13: an aiohttp server running posted code), the
    cookies middleware (tldextract) and the Telnet console are off, and named in no list."""
    settings = settings_for()
    assert not settings.getbool("REMOTE_CONTROL_ENABLED")
    assert not settings.getbool("COOKIES_ENABLED") and not settings.getbool("TELNETCONSOLE_ENABLED")
    named = {
        *settings.getdict("EXTENSIONS_BASE"),
        *settings.getdict("EXTENSIONS"),
        *settings.getdict("DOWNLOADER_MIDDLEWARES_BASE"),
        *settings.getdict("DOWNLOADER_MIDDLEWARES"),
    }
    off = {
        "scrapy.extensions.remote_control.RemoteControl",
        "scrapy.extensions.telnet.TelnetConsole",
        "scrapy.downloadermiddlewares.cookies.CookiesMiddleware",
    }
    assert not named & off
    assert "scrapy.extensions.corestats.CoreStats" in named  # the rest of Scrapy's lists stays
