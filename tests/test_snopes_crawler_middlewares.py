"""The crawler's middlewares (crawlers/snopes_crawler/middlewares.py): Retry-After."""

from __future__ import annotations

from snopes_crawler.middlewares import retry_after_seconds


def test_retry_after_reads_seconds_and_http_dates():
    from datetime import UTC, datetime

    assert retry_after_seconds("7") == 7.0
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("0.25") == 0.25  # a fraction, as the OpenAI API and some gateways send
    assert retry_after_seconds("-3") is None and retry_after_seconds("1e999") == float("inf")
