"""Downloader middlewares: retries with exponential backoff that honour ``Retry-After``, and robots.txt
obeyed by every request (:class:`RobotsTxtMiddleware`).

Scrapy's RetryMiddleware re-queues a failed request at once. For a site under load (429) or failing
(5xx) that is impolite, so this subclass attaches a delay to the retried request: the server's
``Retry-After`` (seconds or an HTTP date, read by :func:`rwpost.http.retry_after_seconds`) when
given, else ``RETRY_BACKOFF_BASE * 2**attempt``, capped by ``RETRY_BACKOFF_MAX``.
:class:`DelayMiddleware` then waits that long before sending it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares import robotstxt as scrapy_robots
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.response import response_status_message
from twisted.internet.defer import Deferred

from rwpost.http import retry_after_seconds

logger = logging.getLogger(__name__)

DELAY_META = "rwpost_delay"


class BackoffRetryMiddleware(RetryMiddleware):
    """RetryMiddleware whose retries wait (Retry-After, else exponential backoff) before going out."""

    def __init__(self, settings) -> None:  # type: ignore[no-untyped-def]
        super().__init__(settings)
        self.backoff_base = settings.getfloat("RETRY_BACKOFF_BASE", 1.0)
        self.backoff_max = settings.getfloat("RETRY_BACKOFF_MAX", 60.0)

    def _delay(self, request: Request, retry_after: float | None) -> float:
        attempt = request.meta.get("retry_times", 0)
        backoff = self.backoff_base * (2**attempt)
        return min(self.backoff_max, max(backoff, retry_after or 0.0))

    def process_response(self, request: Request, response: Response, spider=None):  # type: ignore[no-untyped-def]
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        delay = self._delay(request, retry_after)
        new_request = self._retry(request, response_status_message(response.status))
        if new_request is None:
            return response
        new_request.meta[DELAY_META] = delay
        self.crawler.stats.inc_value("rwpost/retries")
        if retry_after is not None:
            self.crawler.stats.inc_value("rwpost/retry_after_honoured")
        logger.info("retrying %s in %.1fs (HTTP %d)", request.url, delay, response.status)
        return new_request

    def process_exception(self, request: Request, exception: Exception, spider=None):  # type: ignore[no-untyped-def]
        new_request = super().process_exception(request, exception)
        if isinstance(new_request, Request):
            new_request.meta[DELAY_META] = self._delay(request, None)
            self.crawler.stats.inc_value("rwpost/retries")
        return new_request


class DelayMiddleware:
    """Waits the delay a retried request carries before it goes to the downloader."""

    async def process_request(self, request: Request, spider=None) -> None:  # type: ignore[no-untyped-def]
        delay = request.meta.pop(DELAY_META, None)
        if delay:
            await asyncio.sleep(float(delay))
        return None


class RobotsTxtMiddleware(scrapy_robots.RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware, obeyed by every request that waited for a site's robots.txt.

    Scrapy (2.13+) makes the requests to a host that arrive before its robots.txt is parsed await one
    Twisted Deferred; the first awaiter takes the parser and the others get None, which Scrapy reads as
    "no robots.txt", so they are let through (a feed's many pages of one site arrive together). Here
    such a request takes the parser cached by then.
    """

    async def robot_parser(self, request: Request) -> Any:
        parser = await super().robot_parser(request)
        if parser is None:
            cached = self._parsers.get(urlparse_cached(request).netloc)
            if cached is not None and not isinstance(cached, Deferred):
                return cached
        return parser
