"""The LLM client's HTTP: the chat completions POST spoken with aiohttp directly, retried and reported as the
``openai`` SDK does.

The SDK built an httpx request and response around each aiohttp exchange (headers normalised several
times over, options deep-copied, the URL joined again): two fifths of a call's CPU, and a private override
or two to trim it (``benchmarks/llm_cpu.py``). :meth:`Connections.post_json` sends the same JSON body over one
:class:`aiohttp.ClientSession` per event loop, and keeps what the SDK gave:

- its retry policy (:func:`retry_wait`): 408, 409, 429 and 5xx, timeouts and connection errors are
  retried up to ``max_retries`` times, waiting the server's ``retry-after-ms`` / ``Retry-After`` (seconds
  or an HTTP date) when above 0 and at most :data:`MAX_RETRY_AFTER_S`, else 0.5 s doubling up to 8 s, less
  up to a quarter of jitter; ``x-should-retry: true|false`` overrides the status;
- its errors, the ``openai`` exception classes themselves (``APIConnectionError``, ``APITimeoutError``,
  ``RateLimitError``, ``InternalServerError``, ...) with the SDK's messages (``Error code: 503 - <the
  server's message>``), which the client's failures are named after;
- its timeout: ``timeout_s`` for each of connecting, waiting for a free connection and each read;
- its redirects (followed), its proxy (the environment's ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``ALL_PROXY``
  unless ``NO_PROXY`` names the host, read when the session starts, as httpx reads it when its client
  starts) and its credentials: ``Authorization: Bearer <key>``, or the Basic header of a base URL's own
  ``user:password`` (UTF-8, as httpx makes it), that URL then sent without them.

A hang-up without an answer and a reply that is no HTTP are connection errors (retried, then
``APIConnectionError``), never a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Any

import aiohttp
import httpx2
import openai
from yarl import URL

from rwpost.http import retry_after_seconds

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""The server of ``base_url=None`` (the SDK's default; the environment is read at the edges only,
:func:`rwpost.llm.config.settings_from_env`)."""

MAX_RETRY_AFTER_S = 120.0
"""The longest ``Retry-After`` waited; a reply asking for longer is not retried (the SDK's bound)."""

INITIAL_RETRY_S, MAX_RETRY_S = 0.5, 8.0
"""The backoff without a server's ``Retry-After``: 0.5 s doubling at each retry, at most 8 s."""

_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The wait a reply asks for, in seconds: its ``retry-after-ms``, else its ``Retry-After``
    (:func:`rwpost.http.retry_after_seconds`); None where it asks for none that can be read."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"))


def retry_wait(retries_taken: int, status: int | None, headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait before asking again after attempt ``retries_taken + 1``, or None: no retry.

    ``status`` and ``headers`` are the reply's; both None for a timeout or a connection error (always
    retried). The caller counts the retries left."""
    after = retry_after_s(headers) if headers is not None else None
    if status is not None and headers is not None:
        if after is not None and after > MAX_RETRY_AFTER_S:
            return None
        should = headers.get("x-should-retry")
        if should == "false" or (should != "true" and status not in (408, 409, 429) and status < 500):
            return None
    if after is not None and 0 < after <= MAX_RETRY_AFTER_S:
        return after
    backoff = min(INITIAL_RETRY_S * 2.0 ** min(retries_taken, 1000), MAX_RETRY_S)
    return backoff * (1 - 0.25 * random.random())


def _status_error(status: int, headers: Mapping[str, str], content: bytes, url: URL) -> openai.APIStatusError:
    """The SDK's error of a final error reply: its class by status, its message, the body it keeps."""
    text = content.decode("utf-8", "replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    data = body.get("error", body) if isinstance(body, dict) else body
    said = data.get("message") if isinstance(data, dict) else None
    message = f"Error code: {status}" + (f" - {said}" if isinstance(said, str) and said else "")
    response = httpx2.Response(status, headers=list(headers.items()), content=content, request=_request(url))
    kind = _STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return kind(message, response=response, body=data)


def _request(url: URL) -> httpx2.Request:
    """The request an ``openai`` error names (its method and URL, never its headers)."""
    return httpx2.Request("POST", str(url))


def _proxy(url: URL) -> str | None:
    """The proxy the environment names for ``url`` (its scheme's, else ``ALL_PROXY``), None where there is
    none or ``NO_PROXY`` names the host."""
    proxies = urllib.request.getproxies()
    if not proxies or (url.host and urllib.request.proxy_bypass(url.host)):
        return None
    return proxies.get(url.scheme) or proxies.get("all") or None


class Connections:
    """The connections of one event loop to one OpenAI-compatible server, and its chat completions POST."""

    def __init__(
        self, *, base_url: str | None, api_key: str, timeout_s: float, max_retries: int, tls: ssl.SSLContext
    ) -> None:
        base = URL((base_url or DEFAULT_BASE_URL).rstrip("/"))
        if base.user is not None or base.password is not None:  # httpx's auth flow: the Basic header
            pair = f"{base.user or ''}:{base.password or ''}".encode()
            authorization = f"Basic {base64.b64encode(pair).decode()}"
            base = base.with_user(None)
        else:
            authorization = f"Bearer {api_key}"
        self._headers = {
            "Authorization": authorization,
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        self.base_url = base
        self.max_retries = max_retries
        self._proxy = _proxy(base)
        self._urls: dict[str, URL] = {}
        timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout_s, sock_connect=timeout_s, sock_read=timeout_s
        )
        connector = aiohttp.TCPConnector(ssl=tls, limit=1000, keepalive_timeout=5.0)
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout)

    def is_closed(self) -> bool:
        return self._session.closed

    async def close(self) -> None:
        await self._session.close()

    async def post_json(self, path: str, body: dict[str, Any], attempts: list[int]) -> bytes:
        """The body of the 2xx reply to ``body`` POSTed as JSON to ``path`` under the base URL, after the
        SDK's retries (:func:`retry_wait`); ``attempts[0]`` counts each HTTP attempt. Raises the ``openai``
        error of the last attempt once the retries are spent or the status is final."""
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = self.base_url / path.lstrip("/")
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        headers, retries_taken = self._headers, 0
        while True:
            attempts[0] += 1
            try:
                async with self._session.post(url, data=data, headers=headers, proxy=self._proxy) as response:
                    content = await response.read()
                    status, got = response.status, response.headers
            # aiohttp's connect, pool and read timeouts; refused, reset, a hang-up, a reply that is no HTTP
            except (TimeoutError, aiohttp.ClientError) as exc:
                if retries_taken >= self.max_retries:
                    timed_out = isinstance(exc, TimeoutError)
                    kind = openai.APITimeoutError if timed_out else openai.APIConnectionError
                    raise kind(request=_request(url)) from exc
                wait = retry_wait(retries_taken, None, None)
            else:
                if 200 <= status < 300:
                    return content
                wait = retry_wait(retries_taken, status, got)
                if wait is None or retries_taken >= self.max_retries:
                    raise _status_error(status, got, content, url) from None
            await asyncio.sleep(wait or 0.0)
            retries_taken += 1
