"""Crawl throughput: the real Scrapy crawl against >= 1,000 generated pages on 127.0.0.1, throttling off.

Serves the sample site plus N synthetic article pages (copies of a 2020s-layout page under new URLs,
listed under /synthetic/ and in the sitemap), crawls them with ``rwpost.crawl.run_crawl`` (subprocess,
as in production, images on), and writes pages/second and the crawler's peak memory (max RSS of the
Scrapy process) to ``benchmarks/results/crawl.json``.

    python -m benchmarks.crawl [--pages 1000]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.io import write_json
from rwpost.sample.serve import SampleServer

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
RESULTS = ROOT / "benchmarks" / "results" / "crawl.json"


def measure(pages: int) -> dict:
    """Crawl ``pages`` synthetic pages (plus the bundled sample's) once; returns the figures."""
    load_before = round(os.getloadavg()[0], 2)  # the machine may be shared: record how busy it was
    with (
        tempfile.TemporaryDirectory(prefix="rwpost-crawl-bench-") as tmp,
        SampleServer(SITE, synthetic=pages) as server,
    ):
        started = time.perf_counter()
        report = run_crawl(
            CrawlConfig(
                start_url=f"{server.base_url}/synthetic/",
                out=Path(tmp),
                since="any",
                throttle=False,
                allow_loopback=True,
                contact="benchmark@rwpost.invalid",
            )
        )
        wall = time.perf_counter() - started
        requests = len(server.requests)
    fetched = report["this_run"]["fetched"]
    return {
        "synthetic_pages": pages,
        "article_pages_fetched": fetched,
        "http_requests_served": requests,
        "articles_stored": report["store"]["articles"],
        "crawl_seconds": report["elapsed_s"],
        "wall_seconds_with_startup": round(wall, 2),
        "pages_per_second": report["pages_per_s"],
        "requests_per_second": round(requests / report["elapsed_s"], 1) if report["elapsed_s"] else None,
        "peak_rss_mb": report["peak_rss_mb"],
        "throttle": False,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1m_before": load_before,
            "load_average_1m_after": round(os.getloadavg()[0], 2),
            "platform": platform.platform(),
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=1000, help="synthetic article pages (default 1000)")
    args = parser.parse_args(argv or [])
    result = measure(args.pages)
    write_json(RESULTS, result)
    print(
        f"crawl: {result['article_pages_fetched']} article pages in {result['crawl_seconds']} s = "
        f"{result['pages_per_second']} pages/s ({result['requests_per_second']} requests/s), "
        f"peak RSS {result['peak_rss_mb']} MB -> {RESULTS}"
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
