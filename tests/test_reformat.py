"""Reformat (rwpost.reformat): stored pages to tagged articles, the rest set aside with a reason."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest


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
