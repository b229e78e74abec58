"""Page model speed: ``rwpost.snopes.page.read_article`` against a bare lxml parse of the same pages.

Pages: the bundled sample site's articles (the four Snopes layouts: 2020s, WordPress 2019-2021, late-2018
cards, 2017-18 microdata) and every real Snopes page in ``tests/fixtures/snopes_html`` (2018 fragments, a
late-2018 page, whole 2020s pages). Each reader runs over all pages once per round, the readers take turns
within a round (the machine is shared), and each one's fastest of ``--rounds`` rounds counts.

Goal: ``read_article`` (parse included) no slower than the parsel page reader of ``fe878f5``
(``benchmarks/_parsel_reader.py``, which knew two of the four layouts) on the same pages, each as a
multiple of ``lxml.html.fromstring`` alone, the floor. Issue 29 first asked for <= 1.5x the floor; the
benchmark also prints what the pieces any reader needs cost over already-parsed pages, as shares of the
parse: one CSS query run by libxml2's XPath, one Python pass over every element reading its class, and the
text of every paragraph. They show why 1.5x is out of reach of a reader in Python over lxml (the 0.5x left
for extraction pays for a few queries, or one pass, not the 15 facts of a record).

    python -m benchmarks.page_model [--rounds 5] [--smoke]
"""

from __future__ import annotations

import json
import platform
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
FIXTURES = ROOT / "tests" / "fixtures" / "snopes_html"
ROUNDS = 5


def sample_pages() -> list[tuple[str, str, str]]:
    """(url, html, layout) of every article page of the bundled sample site."""
    pages = []
    for line in (SITE / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        html = (SITE / row["page"].strip("/") / "index.html").read_text(encoding="utf-8")
        pages.append((row["news_url"], html, row["layout"]))
    return pages


def real_pages() -> list[tuple[str, str, str]]:
    """(url, html, "real") of every saved real Snopes page (a page saved in two parts joined again)."""
    pages = []
    for path in sorted(FIXTURES.rglob("*.html")):
        if path.name.endswith(".head.html"):
            continue
        slug = path.name.split(".")[0]
        head = path.with_name(f"{slug}.head.html")
        html = (head.read_text(encoding="utf-8") if head.exists() else "") + path.read_text(encoding="utf-8")
        pages.append((f"https://www.snopes.com/fact-check/{slug.split('_', 1)[-1]}/", html, "real"))
    return pages


def layout_pages() -> list[tuple[str, str, str]]:
    """The page set of the page-model and crawl benchmarks: every layout, sample and real pages."""
    return sample_pages() + real_pages()


def best_seconds(
    readers: dict[str, Callable[[str, str], object]], pages: list[tuple[str, str, str]], rounds: int
) -> dict[str, float]:
    """Each reader's fastest round over ``pages``; the readers take turns within each round."""
    best = dict.fromkeys(readers, float("inf"))
    for _ in range(rounds):
        for name, read in readers.items():
            started = time.perf_counter()
            for url, html, _layout in pages:
                read(html, url)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def measure(pages: list[tuple[str, str, str]], rounds: int) -> dict:
    """Seconds of the fastest round of a bare lxml parse, ``read_article`` and the parsel reader."""
    import lxml.html

    from benchmarks import _parsel_reader
    from rwpost.snopes.page import read_article

    readers = {
        "lxml_parse": lambda html, url: lxml.html.fromstring(html),
        "read_article": read_article,
        "parsel_reader_fe878f5": _parsel_reader.read_article,
    }
    best_seconds(readers, pages[:3], 1)  # warm up: imports, compiled selectors
    seconds = best_seconds(readers, pages, rounds)
    floor = seconds["lxml_parse"]
    return {
        "pages": len(pages),
        "layouts": dict(sorted(Counter(layout for _url, _html, layout in pages).items())),
        "bytes": sum(len(html) for _url, html, _layout in pages),
        "rounds": rounds,
        "seconds": {name: round(s, 4) for name, s in seconds.items()},
        "pages_per_s": {name: round(len(pages) / s, 1) for name, s in seconds.items()},
        "read_article_over_lxml": round(seconds["read_article"] / floor, 2),
        "parsel_reader_over_lxml": round(seconds["parsel_reader_fe878f5"] / floor, 2),
        "read_article_over_parsel_reader": round(
            seconds["read_article"] / seconds["parsel_reader_fe878f5"], 2
        ),
        "pieces_over_lxml": {name: round(s / floor, 3) for name, s in piece_seconds(pages, rounds).items()},
    }


def piece_seconds(pages: list[tuple[str, str, str]], rounds: int) -> dict[str, float]:
    """The fastest round of each piece any reader of a record needs, over the pages already parsed: one
    CSS query (the 2020s claim, ``.claim_cont``) run by libxml2's XPath as parsel runs it, one Python
    pass over every element reading its class, and every paragraph's whitespace-collapsed text."""
    from cssselect import HTMLTranslator
    from lxml import etree

    from rwpost.snopes.select import parse_html

    trees = [(url, parse_html(html), layout) for url, html, layout in pages]
    query = etree.XPath(HTMLTranslator().css_to_xpath(".claim_cont"), smart_strings=False)

    def one_pass(page: etree._Element) -> None:
        for node in page.iter():
            node.get("class")

    def paragraphs(page: etree._Element) -> None:
        for node in page.iter("p"):
            " ".join(" ".join(node.itertext()).split())

    pieces = {
        "one_css_query": lambda page, url: query(page),
        "one_pass_over_elements": lambda page, url: one_pass(page),
        "paragraph_text": lambda page, url: paragraphs(page),
    }
    return best_seconds(pieces, trees, rounds)


def main(argv: list[str] | None = None) -> dict:
    parser = arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds per reader (default {ROUNDS})")
    args = parser.parse_args(argv or [])
    before = load()
    pages = layout_pages()
    if args.smoke:
        pages, args.rounds = pages[::20], 1
    result = measure(pages, args.rounds)
    result["machine"] = f"{platform.machine()} {platform.python_version()}, shared 2-core VM"
    result["load_before"], result["load_after"] = before, load()
    for name, rate in result["pages_per_s"].items():
        print(f"{name:24} {rate:8.1f} pages/s")
    pieces = result["pieces_over_lxml"]
    print(
        "pieces over parsed pages, x the parse: "
        + ", ".join(f"{name} {share}" for name, share in pieces.items())
        + " (issue 29's 1.5x leaves 0.5x for all extraction)"
    )
    goal(
        f"read_article takes {result['read_article_over_parsel_reader']}x the time of the parsel reader of "
        f"fe878f5 (target <= 1x) on the same {result['pages']} pages of {len(result['layouts'])} kinds: "
        f"{result['read_article_over_lxml']}x and {result['parsel_reader_over_lxml']}x a bare lxml parse",
        before,
    )
    save(RESULTS / "page_model.json", result, args.smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
