"""The crawler's store (crawlers/snopes_crawler/store.py): torn lines, one line per id."""

from __future__ import annotations

import gzip
import json

from snopes_crawler.store import ArticleStore

from rwpost.ids import record_id
from rwpost.records import CrawledArticle


def test_store_drops_a_torn_last_line_and_keeps_one_line_per_id(tmp_path):
    def record(url: str, claim: str) -> str:
        return CrawledArticle(
            id=record_id(url), url=url, http_status=200, fetched_at="2026-01-01T00:00:00Z", claim=claim
        ).model_dump_json()

    url = "https://www.snopes.com/fact-check/a/"
    lines = [record(url, "old"), record(url, "new"), record("https://www.snopes.com/fact-check/b/", "b")]
    (tmp_path / "articles.jsonl").write_text("\n".join(lines) + '\n{"id": "rw-torn', encoding="utf-8")
    store = ArticleStore(tmp_path)
    assert store.torn_lines == 1
    rows = [json.loads(line) for line in (tmp_path / "articles.jsonl").read_text().splitlines()]
    # one line per id (the last one wins), sorted by id (issue 16: deterministic store)
    expected = sorted([(record_id(url), "new"), (record_id("https://www.snopes.com/fact-check/b/"), "b")])
    assert [(r["id"], r["claim"]) for r in rows] == expected
    assert store.get_by_url("http://127.0.0.1:9/fact-check/a/").claim == "new"
    sha, path = store.save_html(b"<html>x</html>")
    assert gzip.decompress((tmp_path / path).read_bytes()) == b"<html>x</html>" and sha in path
