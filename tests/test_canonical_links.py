"""A page whose canonical link cannot be an address is stored with the reason, never lost (issue 27,
hostile H5): ``<link rel=canonical href="https://www.snopes.com:99999/...">`` or ``javascript:alert(1)``
made the record id raise, so a live crawl dropped the page (only "Error processing" in crawl.log, exit 0),
and ``--from-html`` (also with such a URL in ``index.json``) aborted the whole import with a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rwpost.crawl import CrawlConfig, run_crawl, run_import_html
from rwpost.io import read_records
from rwpost.records import CrawledArticle
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer
from rwpost.snopes.page import read_article

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
BAD = {
    "rollman-farms-sign": "https://www.snopes.com:99999/fact-check/rollman-farms-sign/",
    "riot-gear-violin-vigil-mcclain": "javascript:alert(1)",
}
"""Sample pages and the canonical link each gets instead of its own."""


def _page(slug: str, canonical: str | None = None) -> str:
    html = (SITE / "fact-check" / slug / "index.html").read_text(encoding="utf-8")
    return html.replace(f"https://www.snopes.com/fact-check/{slug}/", canonical) if canonical else html


def _records(store: Path) -> list[CrawledArticle]:
    return list(read_records(store / "articles.jsonl", CrawledArticle))


@pytest.mark.parametrize("canonical", [*BAD.values(), "http://[::1", "file:///etc/passwd"])
def test_a_bad_canonical_link_keeps_the_pages_own_url_and_says_why(canonical):
    url = "https://sample.rwpost.invalid/fact-check/rollman-farms-sign/"
    article = read_article(_page("rollman-farms-sign", canonical), url)
    assert article.canonical_url == url
    assert article.parse_error and article.parse_error.startswith("bad canonical link ")
    assert article.claim and article.rating  # the rest of the page is read as ever


@pytest.mark.slow
def test_a_live_crawl_stores_pages_with_bad_canonical_links_with_the_reason(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    for slug, canonical in BAD.items():
        (site / "fact-check" / slug / "index.html").write_text(_page(slug, canonical), encoding="utf-8")
    stores = {}
    for name, root in (("sample", SITE), ("bad", site)):
        with SampleServer(root) as server:
            config = CrawlConfig(
                start_url=f"{server.base_url}/fact-check/",
                out=tmp_path / name,
                since="any",
                throttle=False,
                allow_loopback=True,
                site_origin=HOSTILE_HOST,
            )
            report = run_crawl(config)
        stores[name] = _records(tmp_path / name)
    assert len(stores["bad"]) == len(stores["sample"]) == report["store"]["articles"]
    flagged = {r.url: r.parse_error for r in stores["bad"] if "bad canonical link" in (r.parse_error or "")}
    assert sorted(flagged) == sorted(f"{HOSTILE_HOST}/fact-check/{slug}/" for slug in BAD)
    assert report["store"]["parse_errors"] == 3 + len(BAD)  # the sample's own three, and these
    assert "Error processing" not in (tmp_path / "bad" / "crawl.log").read_text(encoding="utf-8")


def test_from_html_stores_bad_canonical_pages_and_reports_bad_index_urls(tmp_path):
    folder = tmp_path / "saved"
    folder.mkdir()
    for slug, canonical in BAD.items():
        (folder / f"{slug}.html").write_text(_page(slug, canonical), encoding="utf-8")
    named = ["1898-julia-richardson", "30-marines-killed-helicopter", "alaska-earthquake-road-repair"]
    for slug in named:  # no canonical link: the index gives the URL
        html = _page(slug).replace(f"https://www.snopes.com/fact-check/{slug}/", "")
        (folder / f"{slug}.html").write_text(html.replace('<link rel="canonical" href="">', ""), "utf-8")
    (folder / "good.html").write_text(_page("amazon-auschwitz-decorations"), encoding="utf-8")
    index = [
        {"file": f"{slug}.html", "url": url}
        for slug, url in zip(named, ["javascript:alert(1)", "file:///etc/passwd", "http://"], strict=True)
    ]
    (folder / "index.json").write_text(json.dumps(index), encoding="utf-8")
    counts = run_import_html(folder, tmp_path / "store")
    records = _records(tmp_path / "store")
    assert counts["files"] == len(records) == len(BAD) + len(named) + 1
    assert counts["index_problems"] == len(named)
    assert [line.split(": ")[2] for line in counts["index_problem_lines"]] == [
        "url 'javascript:alert(1)'",
        "url 'file:///etc/passwd'",
        "url 'http://'",
    ]
    reasons = [r.parse_error or "" for r in records]
    assert sum("bad canonical link" in reason for reason in reasons) == len(BAD)
    assert sum(reason.startswith("no URL: ") for reason in reasons) == len(BAD) + len(named)  # none usable
    assert reasons.count("") == 1
