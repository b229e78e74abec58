"""Progress lines on stdout while crawling and ``report.json`` when the crawl ends.

Progress is one JSON object per line on stdout (``{"event": "progress", ...}``), which ``rwpost crawl``
reads to draw its console display; Scrapy's own log goes to ``crawl.log`` in the output folder.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from datetime import UTC, datetime
from typing import Any

from scrapy import signals
from twisted.internet import task

from rwpost.io import write_json
from snopes_crawler.store import REPORT_FILE

COUNTERS = (
    "found",
    "fetched",
    "failed",
    "skipped_stored",
    "refetch_updated",
    "refetch_failed",
    "refetch_failed_images",
    "resumed_scheduled",
    "out_of_window",
    "over_max_articles",
    "robots_forbidden",
    "listing_pages",
    "listing_failed",
    "sitemaps",
    "sitemap_host_refused",
    "sitemap_not_article",
    "sitemap_offsite",
    "stored_ok",
    "stored_parse_errors",
    "stored_http_failures",
    "duplicates",
    "images_ok",
    "images_failed",
    "images_retried",
    "retries",
    "retry_after_honoured",
)
"""The crawl's counters (Scrapy stats under ``rwpost/``), in report order."""
FEED_COUNTERS = ("feed_reviews", "feed_reviews_without_url")
"""A feed crawl's own counters, reported only when a feed was read (a Snopes report stays as it was)."""


class CrawlReport:
    """Prints progress every ``RWPOST_PROGRESS_INTERVAL`` seconds and writes the report at the end."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.interval = crawler.settings.getfloat("RWPOST_PROGRESS_INTERVAL", 2.0)
        self.started = time.monotonic()
        self.started_at = datetime.now(UTC)
        self.loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlReport:
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def counts(self) -> dict[str, int]:
        stats = self.crawler.stats
        counts = {name: int(stats.get_value(f"rwpost/{name}", 0)) for name in COUNTERS}
        feed = {name: int(stats.get_value(f"rwpost/{name}", 0)) for name in FEED_COUNTERS}
        return counts | feed if any(feed.values()) else counts

    def emit(self, event: str, **extra: Any) -> None:
        counts = self.counts()
        elapsed = time.monotonic() - self.started
        line = {
            "event": event,
            "elapsed_s": round(elapsed, 2),
            "rate_per_s": round(counts["fetched"] / elapsed, 2) if elapsed > 0 else 0.0,
            **counts,
            **extra,
        }
        sys.stdout.write(json.dumps(line, default=str) + "\n")
        sys.stdout.flush()

    def spider_opened(self, spider: Any) -> None:
        self.started = time.monotonic()
        self.emit("started", torn_lines=spider.store.torn_lines, stored_before=len(spider.store.records))
        self.loop = task.LoopingCall(self.emit, "progress")
        self.loop.start(self.interval, now=False)

    def spider_closed(self, spider: Any, reason: str) -> None:
        if self.loop and self.loop.running:
            self.loop.stop()
        spider.store.compact()
        elapsed = time.monotonic() - self.started
        counts = self.counts()
        records = list(spider.store.records.values())
        report = {
            "finish_reason": reason,
            "started_at": self.started_at.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
            "elapsed_s": round(elapsed, 2),
            "pages_per_s": round(counts["fetched"] / elapsed, 2) if elapsed > 0 else 0.0,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "this_run": counts,
            "start_error": self.crawler.stats.get_value("rwpost/start_error"),
            "store": {
                "articles": len(records),
                "parsed_ok": sum(1 for r in records if not r.parse_error),
                "parse_errors": sum(1 for r in records if r.parse_error and r.http_status == 200),
                "http_failures": sum(1 for r in records if r.http_status != 200),
                "images": sum(1 for r in records for i in r.images if not i.error),
                "image_errors": sum(1 for r in records for i in r.images if i.error),
            },
            "settings": {
                "start_url": spider.start_url,
                "since": str(spider.since) if spider.since else None,
                "until": str(spider.until) if spider.until else None,
                "max_articles": spider.max_articles,
                "user_agent": self.crawler.settings.get("USER_AGENT"),
                "autothrottle": self.crawler.settings.getbool("AUTOTHROTTLE_ENABLED"),
                "robots_obey": self.crawler.settings.getbool("ROBOTSTXT_OBEY"),
            },
        }
        write_json(spider.store.out_dir / REPORT_FILE, report)
        self.emit("done", finish_reason=reason, report=str(spider.store.out_dir / REPORT_FILE))
