"""Crawl throughput: the real Scrapy crawl of >= 1,000 generated pages of every layout on 127.0.0.1,
throttling off, with the page model and with the parsel page reader of ``fe878f5`` in the same run.

Serves the sample site plus N synthetic article pages, listed under /synthetic/: page i is page i mod M of
the page-model benchmark's set (``benchmarks.page_model.layout_pages``: the sample site's four layouts
and the real Snopes pages of ``tests/fixtures``, their off-site URLs pointed at the loopback server), so
the crawl reads every layout and fetches the pages' images. Each crawl runs ``rwpost.crawl.run_crawl``
(subprocess, as in production, images on). The baseline crawl swaps the spider's ``read_article`` for
``benchmarks._parsel_reader.read_article`` (a ``sitecustomize`` in the child only); nothing else differs.
The loopback server runs in this process, on the same cores, so each figure is client and server together.

Goal (issue 29): the page model's crawl at least as fast as the parsel reader's on the same pages (that
reader's crawl ran at 147-152 pages/s on this machine, on a quiet day, over 1,000 copies of one page).

    python -m benchmarks.crawl [--pages 1000] [--smoke]
"""

from __future__ import annotations

import os
import platform
import re
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.page_model import layout_pages
from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
READERS = ("parsel_reader_fe878f5", "page_model")
_SWAP_READER = (
    "import rwpost.snopes.page\n"
    "from benchmarks._parsel_reader import read_article\n"
    "rwpost.snopes.page.read_article = read_article  # before the spider imports it\n"
)
_OFF_SITE = re.compile(r"https?://(?!sample\.rwpost\.invalid)[A-Za-z0-9.-]+(?::\d+)?")


class MixedSite(SampleServer):
    """The sample site whose synthetic article pages cycle through pages of every layout."""

    def __init__(self, site_dir: Path, synthetic: int) -> None:
        self.templates = layout_pages()
        super().__init__(site_dir, synthetic=synthetic)

    def _synthetic(self, path: str) -> bytes | None:
        match = re.fullmatch(r"/fact-check/synthetic-(\d+)/", path)
        if not (match and int(match.group(1)) < self.synthetic):
            return super()._synthetic(path)
        number = int(match.group(1))
        url, html, _layout = self.templates[number % len(self.templates)]
        page = html.replace(url, f"{HOSTILE_HOST}/fact-check/synthetic-{number}/")
        return _OFF_SITE.sub(self.base_url, page).encode()


def crawl(pages: int, reader: str, images: bool = True) -> dict:
    """Crawl ``pages`` synthetic pages (plus the bundled sample's) once with ``reader``; the figures."""
    load_before = load()
    with (
        tempfile.TemporaryDirectory(prefix="rwpost-crawl-bench-") as tmp,
        MixedSite(SITE, synthetic=pages) as server,
    ):
        python_path = os.environ.get("PYTHONPATH")
        if reader != "page_model":
            (Path(tmp) / "swap").mkdir()
            (Path(tmp) / "swap" / "sitecustomize.py").write_text(_SWAP_READER, encoding="utf-8")
            paths = (f"{tmp}/swap", str(ROOT), python_path)
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        try:
            started = time.perf_counter()
            report = run_crawl(
                CrawlConfig(
                    start_url=f"{server.base_url}/synthetic/",
                    out=Path(tmp) / "store",
                    since="any",
                    throttle=False,
                    allow_loopback=True,
                    contact="benchmark@rwpost.invalid",
                    download_images=images,
                )
            )
            wall = time.perf_counter() - started
        finally:
            if python_path is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = python_path
        requests = len(server.requests)
    return {
        "article_pages_fetched": report["this_run"]["fetched"],
        "http_requests_served": requests,
        "articles_stored": report["store"]["articles"],
        "images_ok": report["this_run"].get("images_ok", 0),
        "images_failed": report["this_run"].get("images_failed", 0),
        "crawl_seconds": report["elapsed_s"],
        "wall_seconds_with_startup": round(wall, 2),
        "pages_per_second": report["pages_per_s"],
        "requests_per_second": round(requests / report["elapsed_s"], 1) if report["elapsed_s"] else None,
        "peak_rss_mb": report["peak_rss_mb"],
        "load_average_1m_before": load_before,
        "load_average_1m_after": load(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__)
    parser.add_argument("--pages", type=int, default=1000, help="synthetic article pages (default 1000)")
    parser.add_argument(
        "--no-images", action="store_true", help="crawl without downloading images (the readers alone)"
    )
    args = parser.parse_args(argv or [])
    if args.smoke:
        args.pages = 20
    before = load()
    runs = {reader: crawl(args.pages, reader, images=not args.no_images) for reader in READERS}
    for reader, run in runs.items():
        print(
            f"{reader:22} {run['article_pages_fetched']} article pages in {run['crawl_seconds']} s = "
            f"{run['pages_per_second']} pages/s ({run['requests_per_second']} requests/s), "
            f"peak RSS {run['peak_rss_mb']} MB, images {run['images_ok']} ok, {run['images_failed']} failed"
        )
    ours, theirs = (runs[reader]["pages_per_second"] for reader in ("page_model", "parsel_reader_fe878f5"))
    ratio = round(ours / theirs, 2) if theirs else None
    result = {
        "synthetic_pages": args.pages,
        "page_kinds": len(layout_pages()),
        "throttle": False,
        "images": not args.no_images,
        "runs": runs,
        "page_model_over_parsel_reader": ratio,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    goal(
        f"crawl with the page model {ours} pages/s = {ratio}x the parsel reader of fe878f5 on the same "
        f"{args.pages} pages of every layout ({theirs} pages/s; target >= 1x, and above the 147-152 pages/s "
        "that reader's crawl of one page copied reached on a quiet day)",
        before,
    )
    save(RESULTS / "crawl.json", result, args.smoke)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
