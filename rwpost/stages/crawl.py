"""Stage ``crawl``: the Scrapy crawl into ``out`` (the bundled sample site by default).

With ``start_url: null`` the stage serves ``sample_site`` on a free 127.0.0.1 port for the duration of
the crawl, so the default ``dvc repro`` runs the real spider offline. Set ``start_url`` to
https://www.snopes.com/fact-check/ (and ``contact``, ``throttle: true``) to crawl the live site.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from pydantic import NonNegativeInt, PositiveInt

from rwpost.crawl import CrawlOptions, run_crawl
from rwpost.io import sort_jsonl_by_id
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer
from rwpost.stages.base import StageParams, StageReport


class Params(StageParams):
    """The ``crawl:`` section of params.yaml (unset values fall back to :class:`CrawlOptions`' defaults)."""

    section = "crawl"

    start_url: str | None = None
    """None: serve ``sample_site`` on 127.0.0.1 and crawl it."""
    sample_site: Path = Path("data/sample/site")
    out: Path = Path("data/work/crawl")
    since: date | None = None
    """None: no lower bound."""
    until: date | None = None
    """None: today."""
    max_articles: NonNegativeInt = CrawlOptions.max_articles
    """0: no limit."""
    user_agent: str | None = None
    contact: str | None = None
    throttle: bool = CrawlOptions.throttle
    allow_loopback: bool = CrawlOptions.allow_loopback
    download_images: bool = CrawlOptions.download_images
    max_image_bytes: PositiveInt = CrawlOptions.max_image_bytes
    site_origin: str | None = None
    """Store fetched URLs under this origin (a mirror of the site); the sample site uses its fixed host."""


@contextlib.contextmanager
def start_url_for(params: Params) -> Iterator[tuple[str, bool, str | None]]:
    """The URL to crawl, whether loopback is allowed and the site origin URLs are stored under; serves
    the sample site when no start URL is set (stored under its fixed origin, so no port enters the store)."""
    if params.start_url:
        yield params.start_url, params.allow_loopback, params.site_origin
        return
    with SampleServer(params.sample_site) as server:
        yield f"{server.base_url}/fact-check/", True, params.site_origin or HOSTILE_HOST


def run(params: Params) -> StageReport:
    with start_url_for(params) as (start_url, allow_loopback, site_origin):
        options = CrawlOptions(
            site_origin=site_origin,
            start_url=start_url,
            out_dir=str(params.out),
            since=params.since.isoformat() if params.since else "any",
            until=params.until.isoformat() if params.until else None,
            max_articles=params.max_articles,
            user_agent=params.user_agent,
            contact=params.contact,
            throttle=params.throttle,
            allow_loopback=allow_loopback,
            download_images=params.download_images,
            max_image_bytes=params.max_image_bytes,
        )
        report = run_crawl(options)
    # The spider appends in completion order; the stage's output is in id order (same input, same bytes).
    sort_jsonl_by_id(params.out / "articles.jsonl")
    sort_jsonl_by_id(params.out / "aliases.jsonl", ("id", "path"))
    store = report["store"]
    return StageReport(
        stage="crawl",
        counts=report,
        message=(
            f"crawl: {store['articles']} articles in {params.out} ({store['parsed_ok']} parsed, "
            f"{store['parse_errors']} parse errors, {store['http_failures']} HTTP failures, "
            f"{store['images']} images); this run fetched {report['this_run']['fetched']} pages in "
            f"{report['elapsed_s']} s"
        ),
    )
