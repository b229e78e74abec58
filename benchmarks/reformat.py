"""Reformat throughput: rwpost.tagged.tag_article vs a plain trafilatura.extract of the same pages.

Pages: the 102 article pages of the bundled sample site plus the two whole real Snopes pages in
tests/fixtures/snopes_html/. Each parser runs over all pages ``ROUNDS`` times; the best round counts.

    python -m benchmarks.reformat
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from benchmarks import no_options
from rwpost.io import write_json

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3


def load_pages() -> list[tuple[str, str]]:
    """(url, html) of every sample-site article and the two whole real Snopes pages."""
    site = ROOT / "data" / "sample" / "site"
    pages = []
    for line in (site / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pages.append(
            (row["news_url"], (site / row["page"].strip("/") / "index.html").read_text(encoding="utf-8"))
        )
    fixtures = ROOT / "tests" / "fixtures" / "snopes_html"
    for name in ("robert-de-niro-trump-oscars", "house-resolution-piker-antisemitism"):
        html = (fixtures / f"{name}.head.html").read_text(encoding="utf-8")
        html += (fixtures / f"{name}.html").read_text(encoding="utf-8")
        pages.append((f"https://www.snopes.com/fact-check/{name}/", html))
    return pages


def best_rate(fn, pages: list[tuple[str, str]]) -> float:
    """Pages per second of the fastest of ``ROUNDS`` rounds."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for url, html in pages:
            fn(url, html)
        best = min(best, time.perf_counter() - started)
    return len(pages) / best


def main(argv: list[str] | None = None) -> dict:
    no_options(__doc__, argv)
    import trafilatura

    from rwpost.tagged import tag_article

    pages = load_pages()
    best_rate(lambda url, html: trafilatura.extract(html, url=url), pages[:5])  # warm imports and caches
    best_rate(lambda url, html: tag_article(html, url), pages[:5])
    rates = {
        "trafilatura_extract": best_rate(lambda url, html: trafilatura.extract(html, url=url), pages),
        "rwpost_tag_article": best_rate(lambda url, html: tag_article(html, url), pages),
        "trafilatura_extract_links_images": best_rate(
            lambda url, html: trafilatura.extract(html, url=url, include_links=True, include_images=True),
            pages,
        ),
    }
    result = {
        "pages": len(pages),
        "rounds": ROUNDS,
        "articles_per_s": {k: round(v, 1) for k, v in rates.items()},
        "note": "tag_article = one lxml parse, body tagging, link table with sentences, claim/rating/date "
        "from the page; trafilatura.extract = main text only",
        "machine": f"{platform.machine()} {platform.python_version()}, shared 2-core VM",
    }
    write_json(ROOT / "benchmarks" / "results" / "reformat.json", result)
    for name, rate in result["articles_per_s"].items():
        print(f"{name:34} {rate:8.1f} articles/s")
    return result


if __name__ == "__main__":
    main()
