"""Run one crawl in this process: ``python -m snopes_crawler.run --config '<json>'`` (from ``crawlers/``).

``rwpost crawl`` and ``pipelines/crawl.py`` start this module in a subprocess, because Twisted's reactor
cannot be restarted in a process. The config keys mirror ``rwpost crawl``'s options (see
:func:`crawl_settings`). A marker file in the Scrapy JOBDIR tells whether the last run ended cleanly;
if it did not (a hard kill), the on-disk request queue may be torn, so it is discarded and the crawl
rediscovers its work from the listings, skipping everything the store already holds.

The run holds the store's lock (:func:`snopes_crawler.store.store_lock`) from start to end: a second
crawl into the same folder ends at once with an ``{"event": "error"}`` line naming the holder's PID.
SIGINT and SIGTERM stop the crawl gracefully (Scrapy's shutdown: the JOBDIR keeps the pending queue);
the ``rwpost crawl`` parent forwards its own signals here and arranges that this process receives
SIGTERM if the parent dies.
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

from rwpost.images import MAX_IMAGE_BYTES
from snopes_crawler.settings import USER_AGENT as DEFAULT_USER_AGENT
from snopes_crawler.spiders.snopes import SnopesSpider
from snopes_crawler.store import JOB_DIR, REPORT_FILE, StoreBusy, store_lock

RUNNING_MARKER = "RUNNING"


def user_agent(base: str | None, contact: str | None) -> str:
    """The User-Agent: the project's crawler name plus the operator's contact."""
    agent = base or DEFAULT_USER_AGENT
    return f"{agent} contact: {contact}" if contact and contact not in agent else agent


def crawl_settings(config: dict[str, Any]) -> Settings:
    """Scrapy settings for one run: the project defaults plus this run's choices."""
    settings = Settings()
    settings.setmodule("snopes_crawler.settings", priority="project")
    out_dir = Path(config["out_dir"])
    overrides: dict[str, Any] = {
        "JOBDIR": str(out_dir / JOB_DIR),
        "LOG_FILE": str(out_dir / "crawl.log"),
        "LOG_FILE_APPEND": True,
        "USER_AGENT": user_agent(config.get("user_agent"), config.get("contact")),
        "RWPOST_ALLOW_LOOPBACK": bool(config.get("allow_loopback", False)),
        "RWPOST_DOWNLOAD_IMAGES": bool(config.get("download_images", True)),
        "RWPOST_MAX_IMAGE_BYTES": int(config.get("max_image_bytes") or MAX_IMAGE_BYTES),
        "RWPOST_PROGRESS_INTERVAL": float(config.get("progress_interval", 2.0)),
    }
    if config.get("sitemap_hosts"):
        overrides["RWPOST_SITEMAP_HOSTS"] = [
            *settings.getlist("RWPOST_SITEMAP_HOSTS"),
            *(h.lower() for h in config["sitemap_hosts"]),
        ]
    if not config.get("throttle", True):
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
    for key, value in (config.get("settings") or {}).items():
        overrides[key] = value
    settings.setdict(overrides, priority="cmdline")
    return settings


def prepare_jobdir(out_dir: Path, resume: bool) -> bool:
    """Make the JOBDIR usable; returns True when a torn queue from a killed run was discarded."""
    jobdir = out_dir / JOB_DIR
    marker = jobdir / RUNNING_MARKER
    killed = marker.exists()
    if jobdir.exists() and (killed or not resume):
        shutil.rmtree(jobdir)
    jobdir.mkdir(parents=True, exist_ok=True)
    marker.write_text("a crawl is running or was killed\n", encoding="utf-8")
    return killed


EXIT_BUSY = 75
"""Exit code when another crawl holds the store (EX_TEMPFAIL)."""


def run(config: dict[str, Any]) -> int:
    """Run the crawl described by ``config`` under the store's lock; returns the process exit code."""
    out_dir = Path(config["out_dir"])
    try:
        with store_lock(out_dir):
            return _run_locked(config, out_dir)
    except StoreBusy as exc:
        print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
        return EXIT_BUSY


def _run_locked(config: dict[str, Any], out_dir: Path) -> int:
    discarded = prepare_jobdir(out_dir, bool(config.get("resume", True)))
    if discarded:
        print(json.dumps({"event": "notice", "message": "previous run was killed: request queue discarded"}))
    process = CrawlerProcess(crawl_settings(config))
    process.crawl(
        SnopesSpider,
        start_url=config["start_url"],
        out_dir=str(out_dir),
        since=config.get("since"),
        until=config.get("until"),
        max_articles=config.get("max_articles") or 0,
        retry_failed=bool(config.get("retry_failed", False)),
        use_sitemap=bool(config.get("use_sitemap", True)),
        follow_categories=bool(config.get("follow_categories", True)),
        sitemaps_only=bool(config.get("sitemaps", False)),
        sitemap_urls=",".join(config.get("sitemap_urls") or []),
        sitemap_base=config.get("sitemap_base") or "",
        site_origin=config.get("site_origin") or "",
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
    parser.add_argument("--config", required=True, help="JSON object of crawl options, or @file.json")
    args = parser.parse_args(argv)
    text = args.config
    if text.startswith("@"):
        text = Path(text[1:]).read_text(encoding="utf-8")
    return run(json.loads(text))


if __name__ == "__main__":
    sys.exit(main())
