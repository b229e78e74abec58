"""Multi-site reader speed: ``rwpost.sites.reader.read_page`` against a bare lxml parse of the same pages.

Pages: the 42 real pages of 20 fact-checkers in ``tests/fixtures/multisite/pages`` (Meedan's fetch
fixtures, 30 KB to 1.2 MB) and the bundled multi-site sample's pages. The reader does everything a crawl
record needs: ClaimReview from JSON-LD (with repair), microdata and RDFa (extruct, when the markup names
the type), the Article fallback, trafilatura's main content as tagged text, and the body's language
(py3langid). The readers take turns within a round (the machine is shared); each one's fastest of
``--rounds`` rounds counts. Also shown: the share of each piece (trafilatura, the language, extruct's
microdata/RDFa pass on every page) as multiples of the parse.

    python -m benchmarks.multisite_reader [--rounds 3] [--smoke]
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.page_model import best_seconds

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "multisite"
SAMPLE = ROOT / "data" / "sample" / "multisite"
ROUNDS = 3


def pages() -> list[tuple[str, str, str]]:
    """(url, html, kind) of every real page and every sample page."""
    out = []
    for line in (REAL / "index.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append((row["url"], (REAL / row["file"]).read_text(encoding="utf-8"), "real"))
    for row in json.loads((SAMPLE / "gold.json").read_text(encoding="utf-8")):
        out.append((row["url"], (SAMPLE / row["path"]).read_text(encoding="utf-8"), "sample"))
    return out


def measure(chosen: list[tuple[str, str, str]], rounds: int) -> dict:
    import extruct
    import lxml.html

    from rwpost.sites.language import detect_language
    from rwpost.sites.reader import read_page
    from rwpost.snopes.body import trafilatura_body

    readers = {"lxml_parse": lambda html, url: lxml.html.fromstring(html), "read_page": read_page}
    best_seconds(readers, chosen[:2], 1)  # warm up: imports, the language model
    seconds = best_seconds(readers, chosen, rounds)
    pieces = {
        "trafilatura_body": lambda html, url: trafilatura_body(html),
        "detect_language_on_6k_chars": lambda html, url: detect_language(
            lxml.html.fromstring(html).text_content()
        ),
        "extruct_microdata_rdfa_always": lambda html, url: extruct.extract(
            html, base_url=url, syntaxes=["microdata", "rdfa"], uniform=True, errors="ignore"
        ),
    }
    piece = best_seconds(pieces, chosen, 1)
    floor = seconds["lxml_parse"]
    return {
        "pages": len(chosen),
        "bytes": sum(len(html) for _u, html, _k in chosen),
        "rounds": rounds,
        "seconds": {name: round(s, 4) for name, s in seconds.items()},
        "pages_per_s": {name: round(len(chosen) / s, 1) for name, s in seconds.items()},
        "read_page_over_lxml": round(seconds["read_page"] / floor, 2),
        "pieces_over_lxml": {name: round(s / floor, 2) for name, s in piece.items()},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = arguments(__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds per reader (default {ROUNDS})")
    args = parser.parse_args(argv or [])
    before = load()
    chosen = pages()
    if args.smoke:
        chosen, args.rounds = chosen[::12], 1
    result = measure(chosen, args.rounds)
    result["machine"] = f"{platform.machine()} {platform.python_version()}, shared 2-core VM"
    result["load_before"], result["load_after"] = before, load()
    for name, rate in result["pages_per_s"].items():
        print(f"{name:12} {rate:8.1f} pages/s")
    print("pieces, x the parse: " + ", ".join(f"{k} {v}" for k, v in result["pieces_over_lxml"].items()))
    goal(
        f"read_page reads {result['pages_per_s']['read_page']} pages/s, {result['read_page_over_lxml']}x the "
        f"time of a bare lxml parse of the same {result['pages']} pages (ClaimReview, language, tagged body)",
        before,
    )
    save(RESULTS / "multisite_reader.json", result, args.smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
