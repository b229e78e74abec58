"""Reformat (rwpost.reformat): stored pages to tagged articles, the rest set aside with a reason."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from rwpost.io import iter_jsonl, sort_jsonl_by_id, write_jsonl
from rwpost.records import TaggedArticle
from rwpost.reformat import reformat_store
from tests.conftest import crawl_store


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_gzip_of_garbage_is_named(self, tmp_path):
        # the reader under reformat: a .gz that is not gzip at all
        from rwpost.errors import RecordError
        from rwpost.records import CrawledArticle
        from rwpost.reformat import _read_html

        (tmp_path / "html").mkdir()
        (tmp_path / "html" / "x.html.gz").write_bytes(b"not gzip")
        article = CrawledArticle(
            id="rw-x",
            url="https://www.snopes.com/fact-check/x/",
            http_status=200,
            fetched_at=datetime(2026, 5, 3, tzinfo=UTC),
            html_path="html/x.html.gz",
        )
        with pytest.raises(RecordError, match=r"record rw-x, field 'html_path'.*x\.html\.gz unreadable"):
            _read_html(tmp_path, article)


def test_reformat_stage_tags_stored_pages_and_rejects_the_rest(tmp_path):
    store = crawl_store(tmp_path / "crawl")
    report = reformat_store(store, tmp_path / "tagged", min_words=1)
    assert report["kept"] == 2 and sum(report["rejected"].values()) == 2
    tagged = [
        TaggedArticle.model_validate(row) for _, row in iter_jsonl(tmp_path / "tagged" / "articles.jsonl")
    ]
    assert {t.rating for t in tagged} == {"Miscaptioned", "Mostly True"}
    assert all(t.links and t.word_count > 200 for t in tagged)
    reasons = [row["reason"] for _, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
    assert any("HTML not found" in r for r in reasons) and any("no claim found" in r for r in reasons)


@pytest.mark.parametrize(
    ("rating", "kept_label", "reason"),
    [
        ("Incorrect Attribution", "False", None),
        ("Unproven (retired)", "Unproven", None),
        ("No Rating", None, "unrated"),
        ("Sorta Kinda", None, "unknown-rating: Sorta Kinda"),
    ],
)
def test_rating_words_flow_through_reformat_to_a_counted_reason_never_an_exception(
    tmp_path, rating, kept_label, reason
):
    store = crawl_store(tmp_path / "crawl")
    rows = [row for _, row in iter_jsonl(store / "articles.jsonl")]
    for row in rows:
        if row.get("html_sha256"):
            row["rating"] = rating
    write_jsonl(store / "articles.jsonl", rows)
    report = reformat_store(store, tmp_path / "tagged", min_words=1)
    tagged = [row for _, row in iter_jsonl(tmp_path / "tagged" / "articles.jsonl")]
    if reason is None:
        assert report["kept"] == 2 and {t["label"] for t in tagged} == {kept_label}
    else:
        assert report["kept"] == 0 and report["rejected"][reason] == 2
        reasons = [row["reason"] for _, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
        assert sum(reason in r for r in reasons) == 2


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
