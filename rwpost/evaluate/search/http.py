"""The HTTP part shared by the search backends: an ``httpx.AsyncClient`` with retries and a key header."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

import httpx

from rwpost.errors import ConfigError, RwpostError
from rwpost.http import RetriesSpent, send_with_retries


class SearchError(RwpostError):
    """A search request that failed after every retry (the detector records it and goes on)."""


def key_from_env(variable: str, backend: str, environ: Mapping[str, str] | None = None) -> str:
    """The API key in ``variable``; a missing key is a :class:`ConfigError` naming the variable only."""
    value = (os.environ if environ is None else environ).get(variable, "").strip()
    if not value:
        raise ConfigError(
            f"search backend {backend!r} needs an API key in the environment variable {variable}"
        )
    return value


class JsonApi:
    """POSTs JSON to one endpoint with the key in a header (never in the URL, so never in a log line);
    408/409/429/5xx and transport errors are retried ``max_retries`` times
    (:func:`rwpost.http.send_with_retries`: the server's ``Retry-After``, else doubling waits)."""

    def __init__(
        self,
        url: str,
        *,
        key_header: str,
        key: str,
        timeout_s: float = 20.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
    ) -> None:
        self.url = url
        self._headers = {key_header: key, "Content-Type": "application/json"}
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"JsonApi({self.url!r})"

    def _bound(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.timeout_s, headers=self._headers)
            self._loop = loop
        return self._client

    async def post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer to ``payload``, or :class:`SearchError` once the retries are spent."""
        return await self.request("POST", json=payload)

    async def get(self, params: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer to a GET with query ``params``, or :class:`SearchError`."""
        return await self.request("GET", params=params)

    async def request(self, method: str, **kwargs: Any) -> dict[str, Any]:
        """One request with the retries: its JSON object, or :class:`SearchError` naming the URL."""
        client = self._bound()
        try:
            response = await send_with_retries(
                lambda: client.request(method, self.url, **kwargs),
                max_retries=self.max_retries,
                backoff_s=self.backoff_s,
            )
        except RetriesSpent as exc:
            raise SearchError(f"{self.url}: {exc}") from None
        if response.status_code >= 400:
            raise SearchError(f"{self.url}: HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError as exc:
            raise SearchError(f"{self.url}: the answer is not JSON") from exc
        if not isinstance(data, dict):
            raise SearchError(f"{self.url}: expected a JSON object")
        return data

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self._client, self._loop = None, None


class ApiBackend:
    """What the HTTP search backends share: the key from one environment variable (loopback twins need
    none), one :class:`JsonApi` endpoint with the key in a header, a ``repr`` without the key."""

    name: str
    key_required = True
    key_variable: str
    key_header: str
    path: str

    def _connect(
        self,
        base_url: str,
        *,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        key = key_from_env(self.key_variable, self.name, environ) if self.key_required else "loopback"
        self.base_url = base_url.rstrip("/")
        self.api = JsonApi(
            f"{self.base_url}{self.path}",
            key_header=self.key_header,
            key=key,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    async def aclose(self) -> None:
        await self.api.aclose()
