"""Crawl throughput: the real Scrapy crawl of >= 1,000 generated pages of every layout on 127.0.0.1,
throttling off, with the page model and with the parsel page reader of ``fe878f5`` in the same run.

Serves the sample site plus N synthetic article pages, listed under /synthetic/: page i is page i mod M of
the page-model benchmark's set (``benchmarks.page_model.layout_pages``: the sample site's four layouts
and the real Snopes pages of ``tests/fixtures``, their off-site URLs pointed at the loopback server), so
the crawl reads every layout. Each crawl runs ``rwpost.crawl.run_crawl`` (subprocess, as in production).
The baseline crawl swaps the spider's ``read_article`` for ``benchmarks._parsel_reader.read_article`` (a
``sitecustomize`` in the child only); nothing else differs. The loopback server runs in this process, on
the same cores, so each figure is client and server together.

The goal compares the readers on the same work: ``--repeats`` crawls each with image downloads off (the
same requests either way), the two readers taking turns and alternating which goes first; the median
and the fastest of each. Then one crawl each with images on, printed beside: the page model knows all
four layouts, the parsel reader two, so the page model finds more images and its full crawl fetches
more (its requests/s is the figure to compare there).

Goal (issue 29): the page model's crawl at least as fast as the parsel reader's on the same pages (that
reader's crawl ran at 147-152 pages/s on this machine, on a quiet day, over 1,000 copies of one page).

    python -m benchmarks.crawl [--pages 1000] [--repeats 3] [--no-images] [--smoke]
"""

from __future__ import annotations

import os
import platform
import re
import statistics
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
    parser.add_argument("--repeats", type=int, default=3, help="crawls per reader for the goal (default 3)")
    parser.add_argument("--no-images", action="store_true", help="skip the crawls with images on")
    args = parser.parse_args(argv or [])
    if args.smoke:
        args.pages, args.repeats = 20, 1
    before = load()
    same_work: dict[str, list[dict]] = {reader: [] for reader in READERS}
    for repeat in range(args.repeats):
        for reader in READERS if repeat % 2 == 0 else READERS[::-1]:
            same_work[reader].append(crawl(args.pages, reader, images=False))
    rates = {reader: sorted(run["pages_per_second"] for run in runs) for reader, runs in same_work.items()}
    summary = {
        reader: {
            "fastest": rates[reader][-1],
            "median": statistics.median(rates[reader]),
            "runs": rates[reader],
        }
        for reader in READERS
    }
    for reader in READERS:
        loads = [run["load_average_1m_before"] for run in same_work[reader]]
        print(
            f"{reader:22} images off: {summary[reader]['median']} pages/s median, "
            f"{summary[reader]['fastest']} fastest of {args.repeats} "
            f"({same_work[reader][0]['http_requests_served']} requests each; load {loads})"
        )
    with_images = {} if args.no_images else {reader: crawl(args.pages, reader) for reader in READERS}
    for reader, run in with_images.items():
        print(
            f"{reader:22} images on: {run['article_pages_fetched']} article pages in "
            f"{run['crawl_seconds']} s = {run['pages_per_second']} pages/s, "
            f"{run['requests_per_second']} requests/s "
            f"({run['http_requests_served']} requests: images {run['images_ok']} ok, "
            f"{run['images_failed']} failed), peak RSS {run['peak_rss_mb']} MB"
        )
    ours, theirs = summary["page_model"], summary["parsel_reader_fe878f5"]
    ratio = {
        "median": round(ours["median"] / theirs["median"], 2) if theirs["median"] else None,
        "fastest": round(ours["fastest"] / theirs["fastest"], 2) if theirs["fastest"] else None,
    }
    result = {
        "synthetic_pages": args.pages,
        "page_kinds": len(layout_pages()),
        "throttle": False,
        "repeats": args.repeats,
        "images_off": {"runs": same_work, "pages_per_second": summary},
        "images_on": with_images,
        "page_model_over_parsel_reader": ratio,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    goal(
        f"crawl with the page model {ours['median']} pages/s = {ratio['median']}x the parsel reader of "
        f"fe878f5 (median of {args.repeats}; fastest runs {ratio['fastest']}x) on the same {args.pages} "
        f"pages of every layout, images off ({theirs['median']} pages/s; target >= 1x, and above the "
        "147-152 pages/s that reader's crawl of one page copied reached on a quiet day)",
        before,
    )
    save(RESULTS / "crawl.json", result, args.smoke)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
