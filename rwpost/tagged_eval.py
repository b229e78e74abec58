"""Golden evaluation of :mod:`rwpost.tagged` (STYLE.md 12): precision / recall of body links.

A golden file lists, per real page, the links that must be tagged (kind and URL, in reading order)
and links and texts that must not appear. ``python -m rwpost.tagged_eval tests/fixtures/tagged/golden.json``
prints the figures; the tests assert them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rwpost.tagged import TaggedText, tag_html


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


def evaluate(golden_path: Path, fixtures: Path) -> list[PageScore]:
    """Score every page of a golden file."""
    golden = json.loads(golden_path.read_text(encoding="utf-8"))
    return [score_page(page, tag_html(load_page(page, fixtures), page["url"])) for page in golden["pages"]]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    golden = Path(args[0] if args else "tests/fixtures/tagged/golden.json")
    fixtures = Path(args[1] if len(args) > 1 else "tests/fixtures/snopes_html")
    scores = evaluate(golden, fixtures)
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
