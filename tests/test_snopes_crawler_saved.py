"""Saved pages into the crawl store (crawlers/snopes_crawler/saved.py)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from rwpost.ids import record_id
from tests.conftest import EARLY, FIXTURES, LATE, LATE_URL


def test_saved_pages_into_the_crawl_store(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "crawlers"))
    from snopes_crawler.saved import import_saved_pages

    saved = tmp_path / "saved"
    saved.mkdir()
    late = LATE.read_text(encoding="utf-8")
    stamp = "https://web.archive.org/web/20181129000000"
    wayback = (
        late.replace("https://www.snopes.com/", f"{stamp}/https://www.snopes.com/")
        .replace("https://www.snopes.com/tachyon", "https://www.snopes.com/tachyon")
        .replace("<body", "<!-- BEGIN WAYBACK TOOLBAR INSERT --><div>Wayback toolbar</div>"
                 '<a href="/web/2018/https://example.org/">x</a><!-- END WAYBACK TOOLBAR INSERT --><body', 1)
    )  # fmt: skip
    (saved / "capture.html").write_text(wayback, encoding="utf-8")
    (saved / "sub").mkdir()
    (saved / "sub" / "late.html.gz").write_bytes(gzip.compress(late.encode("utf-8")))
    early = EARLY[0]
    (saved / "early.html").write_text(
        (FIXTURES / early["file"]).read_text(encoding="utf-8"), encoding="utf-8"
    )
    (saved / "index.json").write_text(json.dumps([{"file": "early.html", "url": early["url"]}]))
    (saved / "nourl.html").write_text("<html><body><p>nothing</p></body></html>")
    counts = import_saved_pages(saved, tmp_path / "store")
    assert counts["files"] == 4 and counts["wayback"] == 1 and counts["duplicates"] == 1
    rows = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    by_url = {row["url"]: row for row in rows}
    late_row = by_url[LATE_URL]
    assert late_row["id"] == record_id(LATE_URL) and late_row["parse_error"] is None
    assert late_row["headline"].startswith("Did TBS Cancel")
    stored = gzip.decompress((tmp_path / "store" / late_row["html_path"]).read_bytes()).decode()
    assert "web.archive.org" not in stored and "Wayback toolbar" not in stored
    assert by_url[early["url"]]["rating"] == early["rating"]
    assert any(row["parse_error"] and row["parse_error"].startswith("no URL") for row in rows)
    assert sys.modules["snopes_crawler.saved"]
