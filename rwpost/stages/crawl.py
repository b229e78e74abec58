"""Stage ``crawl``: the Scrapy crawl into ``out`` (the bundled sample site by default).

With ``start_url: null`` the stage serves ``sample_site`` on a free 127.0.0.1 port for the duration of
the crawl, so the default ``dvc repro`` runs the real spider offline. Set ``start_url`` to
https://www.snopes.com/fact-check/ (and ``contact``, ``throttle: true``) to crawl the live site. The store
is sorted by id once the crawl returns (same input, same bytes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.io import sort_jsonl_by_id
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer
from rwpost.stages.base import StageParams, StageReport


class Params(StageParams, CrawlConfig):
    """The ``crawl:`` section of params.yaml: :class:`rwpost.crawl.CrawlConfig` and the sample site."""

    section = "crawl"
    reads = ("sample_site",)
    writes = ("out",)

    sample_site: Path = Path("data/sample/site")
    """Served on 127.0.0.1 and crawled when ``start_url`` is None."""


@contextlib.contextmanager
def crawl_config(params: Params) -> Iterator[CrawlConfig]:
    """The crawl to run: ``params`` as they are, or, with no start URL, the sample site served on 127.0.0.1
    (stored under its fixed origin, so no port enters the store) for as long as the block runs."""
    if params.start_url or params.feed:
        yield params
        return
    with SampleServer(params.sample_site) as server:
        yield params.model_copy(
            update={
                "start_url": f"{server.base_url}/fact-check/",
                "allow_loopback": True,
                "site_origin": params.site_origin or HOSTILE_HOST,
            }
        )


def run(
    params: Params,
    *,
    crawlers_dir: Path | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> StageReport:
    """The stage; ``on_event`` gets the crawl's progress events (the CLI's live line)."""
    with crawl_config(params) as config:
        report = run_crawl(config, crawlers_dir=crawlers_dir, on_event=on_event)
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
