"""Golden evaluation on real Snopes pages (STYLE.md 12): page-model fields and tagged links, per era.

A golden file lists, per real page, its era, the facts the page shows (``fields``: headline, subtitle,
claim, rating, publication and update times, category, author; null where the saved page does not show
one), the links that must be tagged (kind and URL, in reading order) and links and texts that must not
appear.

    python -m benchmarks.tagged_eval [--golden tests/fixtures/tagged/golden.json]
                                     [--fixtures tests/fixtures/snopes_html]

prints field accuracy per era and field, then link precision / recall per page and per era; the tests
assert them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from rwpost.snopes.page import SnopesArticle, read_article
from rwpost.tagged import TaggedText, tag_html

FIELDS = ("headline", "subtitle", "claim", "rating", "date_published", "date_modified", "category", "author")
"""The page-model facts a golden page gives (``fields``)."""


@dataclass
class PageScore:
    """How one page's tagged text compares with its golden expectations."""

    name: str
    found: list[tuple[str, str]]
    missing: list[str]
    wrong_kind: list[str]
    extra: list[str]
    forbidden_found: list[str]
    in_order: bool
    texts_missing: list[str]
    texts_forbidden: list[str]
    era: str = ""
    """The Snopes theme of the page (``2017-18 microdata``, ``2018-late``, ``2019-21``, ``2022+``)."""

    @property
    def precision(self) -> float:
        return (len(self.found) - len(self.extra)) / len(self.found) if self.found else 1.0

    @property
    def recall(self) -> float:
        expected = len(self.found) - len(self.extra) + len(self.missing)
        return (len(self.found) - len(self.extra)) / expected if expected else 1.0


def load_page(page: dict, fixtures: Path) -> str:
    """The page's HTML: its saved slices joined in order (head slice then body slice)."""
    return "".join((fixtures / name).read_text(encoding="utf-8") for name in page["files"])


def score_page(page: dict, tagged: TaggedText) -> PageScore:
    """Compare one tagged page with its golden entry."""
    expected = [(kind, url) for kind, url in page["must_have"]]
    expected_urls = [url for _, url in expected]
    got = [(link.kind, link.url) for link in tagged.links]
    got_urls = [url for _, url in got]
    kinds = {url: kind for kind, url in got}
    got_in_expected = [url for url in got_urls if url in expected_urls]
    return PageScore(
        name=page["name"],
        era=page.get("era", ""),
        found=got,
        missing=[url for url in expected_urls if url not in kinds],
        wrong_kind=[url for kind, url in expected if url in kinds and kinds[url] != kind],
        extra=[url for url in got_urls if url not in expected_urls],
        forbidden_found=[url for url in page["must_not_have"] if url in kinds],
        in_order=got_in_expected == [url for url in expected_urls if url in kinds],
        texts_missing=[t for t in page.get("must_have_text", []) if t not in tagged.text],
        texts_forbidden=[t for t in page.get("must_not_have_text", []) if t in tagged.text],
    )


def golden_pages(golden_path: Path, fixtures: Path) -> list[tuple[dict, str]]:
    """Every page of a golden file with its HTML, read once."""
    golden = json.loads(golden_path.read_text(encoding="utf-8"))
    return [(page, load_page(page, fixtures)) for page in golden["pages"]]


def evaluate(golden_path: Path, fixtures: Path) -> list[PageScore]:
    """Score the tagged links of every page of a golden file."""
    return links_of(golden_pages(golden_path, fixtures))


def links_of(pages: list[tuple[dict, str]]) -> list[PageScore]:
    """Score the tagged links of pages read by :func:`golden_pages`."""
    return [score_page(page, tag_html(html, page["url"])) for page, html in pages]


def _same(field: str, expected: str | None, got: object) -> bool:
    """Whether the page model's value is the golden one: times as instants (a golden date alone, for a page
    that gives no time, compares dates), text exactly."""
    if expected is None or got is None:
        return expected is None and got is None
    if field in ("date_published", "date_modified"):
        if not isinstance(got, datetime):
            return False
        if len(expected) == 10:
            return got.date() == date.fromisoformat(expected)
        return got == datetime.fromisoformat(expected)
    return got == expected


@dataclass
class FieldScore:
    """One page's page-model fields against its golden ``fields``."""

    name: str
    era: str
    right: dict[str, bool]
    got: dict[str, object]


def score_fields(page: dict, article: SnopesArticle) -> FieldScore:
    """Compare the page model read from one page with the golden facts of that page."""
    expected = page["fields"]
    got = {field: getattr(article, field) for field in FIELDS}
    right = {field: _same(field, expected[field], got[field]) for field in FIELDS}
    return FieldScore(name=page["name"], era=page.get("era", ""), right=right, got=got)


def evaluate_fields(golden_path: Path, fixtures: Path) -> list[FieldScore]:
    """Read every page of a golden file with :func:`~rwpost.snopes.page.read_article` and score its fields."""
    return fields_of(golden_pages(golden_path, fixtures))


def fields_of(pages: list[tuple[dict, str]]) -> list[FieldScore]:
    """Score the page-model fields of pages read by :func:`golden_pages`."""
    return [score_fields(page, read_article(html, page["url"])) for page, html in pages]


def field_accuracy(scores: Iterable[FieldScore]) -> dict[str, dict[str, float]]:
    """Accuracy per era and field (and ``all``), over pages: a field the page does not show counts as right
    only when the page model gives nothing for it."""
    scores = list(scores)
    table: dict[str, dict[str, float]] = {}
    for era in [*sorted({s.era for s in scores}), "all"]:
        chosen = [s for s in scores if era in ("all", s.era)]
        table[era] = {f: sum(s.right[f] for s in chosen) / len(chosen) for f in FIELDS}
        table[era]["pages"] = len(chosen)
    return table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.tagged_eval",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--golden", type=Path, default=Path("tests/fixtures/tagged/golden.json"))
    parser.add_argument(
        "--fixtures", type=Path, default=Path("tests/fixtures/snopes_html"), help="folder of the saved pages"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="the same run (it takes a second); writes nothing"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    from benchmarks import goal, load

    before = load()
    args = _parser().parse_args(argv)
    for path, what in ((args.golden, "golden file"), (args.fixtures, "fixtures folder")):
        if not path.exists():
            print(f"error: {path}: no such {what}", file=sys.stderr)
            return 2
    try:
        pages = golden_pages(args.golden, args.fixtures)  # each page read once, scored both ways
        fields, scores = fields_of(pages), links_of(pages)
    except (OSError, ValueError, KeyError, TypeError) as err:  # a page file missing, a malformed entry
        print(f"error: {args.golden}: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    print(f"{'field accuracy by era':24} {'pages':>5} " + " ".join(f"{f[:14]:>14}" for f in FIELDS))
    for era, row in field_accuracy(fields).items():
        print(f"{era:24} {int(row['pages']):5d} " + " ".join(f"{row[f]:14.3f}" for f in FIELDS))
    for s in fields:
        wrong = [f"{f}={s.got[f]!r}" for f in FIELDS if not s.right[f]]
        if wrong:
            print(f"  wrong on {s.name}: " + "; ".join(wrong))
    print()
    print(f"{'page':42} {'links':>5} {'P':>6} {'R':>6} kind-ok order forbidden texts-ok")
    for s in scores:
        texts_ok = not s.texts_missing and not s.texts_forbidden
        print(
            f"{s.name:42} {len(s.found):5d} {s.precision:6.3f} {s.recall:6.3f} {not s.wrong_kind!s:7} "
            f"{s.in_order!s:5} {len(s.forbidden_found):9d} {texts_ok!s}"
        )
    for era in sorted({s.era for s in scores if s.era}):
        _print_micro(f"era {era}", [s for s in scores if s.era == era])
    _print_micro("ALL (micro)", scores)
    m = micro(scores)
    goal(
        f"tagged links on {m['pages']} real Snopes pages: precision {m['precision']:.3f}, recall "
        f"{m['recall']:.3f}, pages with every check right {m['pages_clean']:.3f} (target: the golden checks "
        "tests/test_tagged.py pins)",
        before,
    )
    return 0


def micro(scores: list[PageScore]) -> dict[str, float]:
    """Micro precision, recall and F1 of tagged links over pages, with the share of pages whose kinds,
    order, forbidden links and texts are all right."""
    tp = sum(len(s.found) - len(s.extra) for s in scores)
    found = sum(len(s.found) for s in scores)
    expected = tp + sum(len(s.missing) for s in scores)
    precision = tp / found if found else 1.0
    recall = tp / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    clean = [
        not s.wrong_kind
        and s.in_order
        and not s.forbidden_found
        and not s.texts_missing
        and not s.texts_forbidden
        for s in scores
    ]
    return {
        "pages": len(scores),
        "links": found,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "pages_clean": sum(clean) / len(clean) if clean else 1.0,
    }


def _print_micro(label: str, scores: list[PageScore]) -> None:
    m = micro(scores)
    print(
        f"{label:42} {m['links']:5d} {m['precision']:6.3f} {m['recall']:6.3f}  F1 {m['f1']:.3f}  "
        f"pages {m['pages']} all-checks-ok {m['pages_clean']:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
