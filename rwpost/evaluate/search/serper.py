"""Google results through the Serper API (serper.dev), as in the paper (section V-B), and its loopback twin.

Serper answers ``POST /search`` with ``{"q": ..., "num": ...}`` (key in the ``X-API-KEY`` header) by
``{"organic": [{"title", "link", "snippet", "date"}, ...]}``. ``before`` becomes Google's custom date
range (``tbs=cdr:1,cd_max:M/D/YYYY``), so pages after the claim are asked away at the source as well as
dropped by the leakage guard.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from rwpost.evaluate.leakage import SearchResult
from rwpost.evaluate.search.dates import parse_result_date
from rwpost.evaluate.search.http import ApiBackend

SERPER_URL = "https://google.serper.dev"
KEY_VARIABLE = "SERPER_API_KEY"


def results_of(data: Mapping[str, Any], limit: int, today: date | None = None) -> list[SearchResult]:
    """The organic results of a Serper answer as :class:`SearchResult` items (relative dates placed
    back from ``today``, the day of the search)."""
    out = []
    for row in (data.get("organic") or [])[:limit]:
        if isinstance(row, dict) and row.get("link"):
            out.append(
                SearchResult(
                    url=str(row["link"]),
                    title=str(row.get("title") or ""),
                    snippet=str(row.get("snippet") or ""),
                    published=parse_result_date(row.get("date"), today),
                )
            )
    return out


class SerperSearch(ApiBackend):
    """Text search through Serper; the key comes from ``SERPER_API_KEY`` only."""

    name = "serper"
    key_variable = KEY_VARIABLE
    key_header = "X-API-KEY"
    path = "/search"

    def __init__(
        self,
        base_url: str = SERPER_URL,
        timeout_s: float = 20.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        gl: str | None = None,
        hl: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._connect(
            base_url, timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s, environ=environ
        )
        self.gl, self.hl = gl, hl

    def identity(self) -> dict[str, Any]:
        """What makes two searches comparable (enters the search cache key; no key)."""
        return {"backend": self.name, "base_url": self.base_url, "gl": self.gl, "hl": self.hl}

    async def search(self, query: str, *, limit: int = 10, before: date | None = None) -> list[SearchResult]:
        payload: dict[str, Any] = {"q": query, "num": limit}
        if before is not None:
            payload["tbs"] = f"cdr:1,cd_max:{before.month}/{before.day}/{before.year}"
        payload.update({k: v for k, v in (("gl", self.gl), ("hl", self.hl)) if v})
        return results_of(await self.api.post(payload), limit, today=date.today())


class LoopbackSearch(SerperSearch):
    """Serper's wire format against a local scripted server (:class:`rwpost.testing.search.SearchServer`):
    no key, short timeouts."""

    name = "loopback"
    key_required = False

    def __init__(self, base_url: str, timeout_s: float = 5.0, max_retries: int = 1, backoff_s: float = 0.01):
        super().__init__(base_url, timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s)
