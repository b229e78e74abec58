"""Small HTTP helpers shared by rwpost's own clients (the crawler's middlewares, the search backends, the
LLM client's ``Retry-After``; the LLM client's retry policy is the ``openai`` SDK's,
:func:`rwpost.llm.connections.retry_wait`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from rwpost.errors import RwpostError

if TYPE_CHECKING:  # httpx is imported by send_with_retries: the crawler and the LLM client read only
    import httpx  # retry_after_seconds, and httpx's import (its CLI's click, Rich, Pygments) is 0.4 s cold

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Statuses worth asking again: timeouts, conflicts, rate limits and server errors."""

MAX_RETRY_WAIT_S = 60.0
"""The longest wait between two attempts; a server asking for longer is waited this long."""


class RetriesSpent(RwpostError):
    """Every attempt of a request failed with a transport error or a :data:`RETRY_STATUS`."""


def retry_after_seconds(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value (delta-seconds, a fraction allowed as some servers
    send, or an HTTP-date), None if absent, negative or unreadable."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if not text:
        return None
    try:
        seconds = float(text)  # an overflowing number is infinite: a wait longer than any bound
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 else None  # NaN too
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


async def send_with_retries(
    send: Callable[[], Awaitable[httpx.Response]], *, max_retries: int, backoff_s: float
) -> httpx.Response:
    """The first response of ``send()`` whose status is not in :data:`RETRY_STATUS`.

    Transport errors and those statuses are tried again up to ``max_retries`` times, waiting the server's
    ``Retry-After`` when it gives one, else ``backoff_s`` doubling (both at most :data:`MAX_RETRY_WAIT_S`).
    Raises :class:`RetriesSpent` naming the last problem and the number of attempts.
    """
    import httpx

    problem, wait = "", 0.0
    for attempt in range(max_retries + 1):
        if attempt:
            await asyncio.sleep(min(wait, MAX_RETRY_WAIT_S))
        wait = backoff_s * 2**attempt
        try:
            response = await send()
        except httpx.HTTPError as exc:
            problem = type(exc).__name__
            continue
        if response.status_code not in RETRY_STATUS:
            return response
        problem = f"HTTP {response.status_code}"
        asked = retry_after_seconds(response.headers.get("Retry-After"))
        wait = wait if asked is None else asked
    raise RetriesSpent(f"{problem} after {max_retries + 1} attempt(s)")
