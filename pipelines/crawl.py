"""DVC stage `crawl`: the Scrapy crawl into data/work/crawl/ (the bundled sample site by default).

With ``crawl.start_url: null`` the stage serves ``data/sample/site/`` on a free 127.0.0.1 port for the
duration of the crawl, so the default ``dvc repro`` runs the real spider offline. Set ``start_url`` to
https://www.snopes.com/fact-check/ (and ``contact``) to crawl the live site.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.crawl import CrawlOptions, run_crawl
from rwpost.sample.serve import SampleServer


@contextlib.contextmanager
def start_url_for(cfg: dict[str, Any]) -> Iterator[tuple[str, bool]]:
    """The URL to crawl and whether loopback is allowed; serves the sample site when none is set."""
    if cfg.get("start_url"):
        yield cfg["start_url"], bool(cfg.get("allow_loopback", False))
        return
    with SampleServer(Path(cfg.get("sample_site") or "data/sample/site")) as server:
        yield f"{server.base_url}/fact-check/", True


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "crawl")
    out = Path(cfg.get("out") or "data/work/crawl")
    with start_url_for(cfg) as (start_url, allow_loopback):
        options = CrawlOptions(
            start_url=start_url,
            out_dir=str(out),
            since=cfg.get("since") or "any",
            until=cfg.get("until"),
            max_articles=int(cfg.get("max_articles") or 0),
            user_agent=cfg.get("user_agent"),
            contact=cfg.get("contact"),
            throttle=bool(cfg.get("throttle", True)),
            allow_loopback=allow_loopback,
            download_images=bool(cfg.get("download_images", True)),
            max_image_bytes=int(cfg.get("max_image_bytes") or 10 * 1024 * 1024),
        )
        report = run_crawl(options)
    store = report["store"]
    print(
        f"crawl: {store['articles']} articles in {out} ({store['parsed_ok']} parsed, {store['parse_errors']} "
        f"parse errors, {store['http_failures']} HTTP failures, {store['images']} images); "
        f"this run fetched {report['this_run']['fetched']} pages in {report['elapsed_s']} s"
    )


if __name__ == "__main__":
    stage_main(run, __doc__)
