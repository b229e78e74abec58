"""Run one crawl in this process: ``python -m snopes_crawler.run --config '<json>'`` (from ``crawlers/``).

``rwpost crawl`` and ``pipelines/crawl.py`` start this module in a subprocess, because Twisted's reactor
cannot be restarted in a process. The config is :class:`rwpost.crawl.CrawlConfig` as JSON (the crawl
stage's params; see :func:`crawl_settings`). A marker file in the Scrapy JOBDIR tells whether the last run
ended cleanly; if it did not (a hard kill), the on-disk request queue may be torn, so it is discarded and the
crawl rediscovers its work from the listings, skipping everything the store already holds.

The run holds the store's lock (:func:`snopes_crawler.store.store_lock`) from start to end: a second
crawl into the same folder ends at once with an ``{"event": "error"}`` line naming the holder's PID.
SIGINT and SIGTERM stop the crawl gracefully (Scrapy's shutdown: the JOBDIR keeps the pending queue);
the ``rwpost crawl`` parent forwards its own signals here and arranges that this process is killed if
the parent dies. A queue kept for another origin than the start URL's (the sample site on the stopped
run's port) is discarded like a killed run's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings

from rwpost.crawl import CrawlConfig
from rwpost.urls import origin
from snopes_crawler.settings import USER_AGENT as DEFAULT_USER_AGENT
from snopes_crawler.spiders.snopes import SnopesSpider
from snopes_crawler.store import JOB_DIR, REPORT_FILE, StoreBusy, store_lock

RUNNING_MARKER = "RUNNING"
ORIGIN_FILE = "origin"
"""In the JOBDIR: the origin (scheme://host:port) the kept queue's requests were made for."""


def user_agent(base: str | None, contact: str | None) -> str:
    """The User-Agent: the project's crawler name plus the operator's contact."""
    agent = base or DEFAULT_USER_AGENT
    return f"{agent} contact: {contact}" if contact and contact not in agent else agent


def crawl_settings(config: CrawlConfig) -> Settings:
    """Scrapy settings for one run: the project defaults plus this run's choices."""
    settings = Settings()
    settings.setmodule("snopes_crawler.settings", priority="project")
    out_dir = config.out
    overrides: dict[str, Any] = {
        "JOBDIR": str(out_dir / JOB_DIR),
        "LOG_FILE": str(out_dir / "crawl.log"),
        "LOG_FILE_APPEND": True,
        "USER_AGENT": user_agent(config.user_agent, config.contact),
        "RWPOST_ALLOW_LOOPBACK": config.allow_loopback,
        "RWPOST_DOWNLOAD_IMAGES": config.download_images,
        "RWPOST_MAX_IMAGE_BYTES": config.max_image_bytes,
        "RWPOST_DOWNLOAD_VIDEOS": config.download_videos,
        "RWPOST_MAX_VIDEO_BYTES": config.max_video_bytes,
        "RWPOST_PROGRESS_INTERVAL": config.progress_interval,
        # The polite delay: Scrapy's DOWNLOAD_DELAY is AutoThrottle's floor, and its start delay follows.
        "DOWNLOAD_DELAY": config.delay,
        "AUTOTHROTTLE_START_DELAY": config.delay,
        "AUTOTHROTTLE_MAX_DELAY": max(settings.getfloat("AUTOTHROTTLE_MAX_DELAY"), config.delay),
    }
    if config.sitemap_hosts:
        overrides["RWPOST_SITEMAP_HOSTS"] = [
            *settings.getlist("RWPOST_SITEMAP_HOSTS"),
            *(h.lower() for h in config.sitemap_hosts),
        ]
    if not config.throttle:
        # Loopback benchmarks and tests: no delays, many parallel requests.
        overrides.update(
            {
                "AUTOTHROTTLE_ENABLED": False,
                "DOWNLOAD_DELAY": 0,
                "CONCURRENT_REQUESTS": 32,
                "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
                "RETRY_BACKOFF_BASE": 0.2,
            }
        )
    overrides.update(config.settings)
    settings.setdict(overrides, priority="cmdline")
    return settings


def prepare_jobdir(out_dir: Path, resume: bool, start_url: str) -> str | None:
    """Make the JOBDIR usable; returns why a kept queue was discarded (None when none was).

    A queue is discarded when the run that left it was killed (it may be torn) or when it was crawled
    from another origin than ``start_url``'s: its requests name that origin (the sample site's port of
    the stopped run, which nothing serves any more), and the listings rediscover them on this one.
    """
    jobdir = out_dir / JOB_DIR
    marker = jobdir / RUNNING_MARKER
    origin_file = jobdir / ORIGIN_FILE
    origin = _origin(start_url)
    why = None
    if marker.exists():
        why = "previous run was killed"
    elif origin_file.exists() and origin_file.read_text(encoding="utf-8").strip() != origin:
        why = f"previous run crawled {origin_file.read_text(encoding='utf-8').strip()}, this one {origin}"
    if jobdir.exists() and (why or not resume):
        shutil.rmtree(jobdir)
    jobdir.mkdir(parents=True, exist_ok=True)
    marker.write_text("a crawl is running or was killed\n", encoding="utf-8")
    origin_file.write_text(f"{origin}\n", encoding="utf-8")
    return why


def _origin(url: str) -> str:
    return origin(url).lower()


EXIT_BUSY = 75
"""Exit code when another crawl holds the store (EX_TEMPFAIL)."""


def run(config: CrawlConfig) -> int:
    """Run the crawl described by ``config`` under the store's lock; returns the process exit code."""
    out_dir = config.out
    try:
        with store_lock(out_dir):
            return _run_locked(config, out_dir)
    except StoreBusy as exc:
        print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
        return EXIT_BUSY


def _run_locked(config: CrawlConfig, out_dir: Path) -> int:
    assert config.start_url is not None or config.feed  # rwpost.crawl.run_crawl checked it
    discarded = prepare_jobdir(out_dir, config.resume, config.start_url or f"feed://{config.feed}")
    if discarded:
        print(json.dumps({"event": "notice", "message": f"{discarded}: request queue discarded"}))
    process = CrawlerProcess(crawl_settings(config))
    process.crawl(
        SnopesSpider,
        start_url=config.start_url or "",
        out_dir=str(out_dir),
        reader=config.reader,
        feed=config.feed or "",
        since=config.since,
        until=config.until,
        max_articles=config.max_articles,
        retry_failed=config.retry_failed,
        sitemaps_only=config.sitemaps,
        sitemap_urls=",".join(config.sitemap_urls or []),
        sitemap_base=config.sitemap_base or "",
        site_origin=config.site_origin or "",
    )
    process.start()
    jobdir = out_dir / JOB_DIR
    report = out_dir / REPORT_FILE
    if report.exists() and json.loads(report.read_text(encoding="utf-8")).get("finish_reason") == "finished":
        # A finished crawl leaves nothing to resume: the next run is a fresh incremental one.
        (jobdir / "spider.state").unlink(missing_ok=True)
    (jobdir / RUNNING_MARKER).unlink(missing_ok=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True, help="JSON of a CrawlConfig, or @file.json")
    args = parser.parse_args(argv)
    text = args.config
    if text.startswith("@"):
        text = Path(text[1:]).read_text(encoding="utf-8")
    return run(CrawlConfig.model_validate_json(text))


if __name__ == "__main__":
    sys.exit(main())
