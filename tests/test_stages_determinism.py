"""Stage outputs are written in id order, so the same records give the same bytes whatever order the crawl
(or a resumed, concurrent extraction) produced them in: a rebuild leaves dvc.lock unchanged."""

from __future__ import annotations

import random

from rwpost.io import sort_jsonl_by_id
from rwpost.reformat import reformat_store
from tests.conftest import crawl_store


def test_reformat_output_does_not_depend_on_crawl_order(tmp_path):
    store = crawl_store(tmp_path / "crawl")
    reformat_store(store, tmp_path / "first", min_words=1)
    articles = store / "articles.jsonl"
    lines = articles.read_bytes().splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    articles.write_bytes(b"".join(lines))
    sort_jsonl_by_id(articles)  # what the crawl stage does once the crawl returns
    reformat_store(store, tmp_path / "second", min_words=1)
    for name in ("articles.jsonl", "rejects.jsonl", "report.json"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name


def test_sort_jsonl_by_id_keeps_lines_byte_for_byte_and_later_duplicates_last(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"id": "b", "v": 1}\n{"id": "a",  "v": 2}\n{"id": "b", "v": 3}')
    sort_jsonl_by_id(path)
    assert path.read_bytes() == b'{"id": "a",  "v": 2}\n{"id": "b", "v": 1}\n{"id": "b", "v": 3}\n'
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"id": "b"}\n{"id": "a"')  # a write cut short: left for the reader to report
    sort_jsonl_by_id(torn)
    assert torn.read_bytes() == b'{"id": "b"}\n{"id": "a"'
