"""Reformat throughput: rwpost.tagged.tag_article vs a plain trafilatura.extract of the same pages.

Pages: the 102 article pages of the bundled sample site plus the two whole real Snopes pages in
tests/fixtures/snopes_html/. Each parser runs over all pages ``ROUNDS`` times; the best round counts.
Goal (issue 29): tag_article takes <= 1.3x the time of plain trafilatura.extract in the same run (the
links-and-images variant of trafilatura, closer to what tag_article does, is printed beside it).

    python -m benchmarks.reformat [--smoke]
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from benchmarks import RESULTS, goal, load, no_options, save

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


def best_rate(fn, pages: list[tuple[str, str]], rounds: int = ROUNDS) -> float:
    """Pages per second of the fastest of ``rounds`` rounds."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for url, html in pages:
            fn(url, html)
        best = min(best, time.perf_counter() - started)
    return len(pages) / best


def main(argv: list[str] | None = None) -> dict:
    smoke = no_options(__doc__, argv).smoke
    import trafilatura

    from rwpost.tagged import tag_article

    before = load()
    pages = load_pages()[:5] if smoke else load_pages()
    rounds = 1 if smoke else ROUNDS
    best_rate(lambda url, html: trafilatura.extract(html, url=url), pages[:5], 1)  # warm imports and caches
    best_rate(lambda url, html: tag_article(html, url), pages[:5], 1)
    rates = {
        "trafilatura_extract": best_rate(lambda url, html: trafilatura.extract(html, url=url), pages, rounds),
        "rwpost_tag_article": best_rate(lambda url, html: tag_article(html, url), pages, rounds),
        "trafilatura_extract_links_images": best_rate(
            lambda url, html: trafilatura.extract(html, url=url, include_links=True, include_images=True),
            pages,
            rounds,
        ),
    }
    ratio = rates["trafilatura_extract"] / rates["rwpost_tag_article"]
    ratio_links = rates["trafilatura_extract_links_images"] / rates["rwpost_tag_article"]
    result = {
        "pages": len(pages),
        "rounds": rounds,
        "articles_per_s": {k: round(v, 1) for k, v in rates.items()},
        "tag_article_over_trafilatura": round(ratio, 2),
        "tag_article_over_trafilatura_links_images": round(ratio_links, 2),
        "note": "tag_article = the page model's parse, body tagging, link table with sentences, "
        "claim/rating/date from the page; trafilatura.extract = main text only",
        "machine": f"{platform.machine()} {platform.python_version()}, shared 2-core VM",
        "load_before": before,
        "load_after": load(),
    }
    for name, rate in result["articles_per_s"].items():
        print(f"{name:34} {rate:8.1f} articles/s")
    goal(
        f"tag_article takes {ratio:.2f}x the time of trafilatura.extract on the same {len(pages)} pages "
        f"(target <= 1.3x); {ratio_links:.2f}x trafilatura with links and images",
        before,
    )
    save(RESULTS / "reformat.json", result, smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
