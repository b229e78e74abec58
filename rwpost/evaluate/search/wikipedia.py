"""Wikipedia through the MediaWiki API (T2Agent's ``Wikipedia[entity]`` tool), and its loopback twin.

One ``GET /w/api.php`` per query: ``generator=search`` finds the pages, ``prop=extracts`` with ``exintro``
and ``explaintext`` gives each page's lead section as plain text and ``prop=info`` its URL, in the
engine's relevance order::

    {"query": {"pages": [{"title": "...", "index": 1, "extract": "...", "fullurl": "..."}]}}

Each page becomes a :class:`~rwpost.evaluate.leakage.SearchResult` (URL, title, first paragraph as the
snippet). Wikipedia serves today's article, not the one of the claim's day, and pages carry no date: the
results go through the leakage guard like any other (fact-checking domains are dropped) and are counted
as undated. No key; Wikimedia asks API clients for a descriptive ``User-Agent``.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from rwpost.evaluate.leakage import SearchResult
from rwpost.evaluate.search.http import JsonApi, SearchError

WIKIPEDIA_URL = "https://en.wikipedia.org"
USER_AGENT = "rwpost-evaluate/1 (https://github.com/rwpost; T2Agent Wikipedia tool)"
API_PATH = "/w/api.php"


def pages_of(data: dict[str, Any], base_url: str, limit: int) -> list[SearchResult]:
    """The pages of a ``generator=search`` answer in relevance order, as search results."""
    pages = ((data.get("query") or {}).get("pages")) or []
    if isinstance(pages, dict):  # formatversion=1 keys pages by id
        pages = list(pages.values())
    rows = [p for p in pages if isinstance(p, dict) and p.get("title")]
    rows.sort(key=lambda p: int(p.get("index") or 0))
    out = []
    for page in rows[:limit]:
        title = str(page["title"])
        url = str(page.get("fullurl") or f"{base_url}/wiki/{title.replace(' ', '_')}")
        first = str(page.get("extract") or "").strip().split("\n")[0].strip()
        out.append(SearchResult(url=url, title=title, snippet=first))
    return out


class _GetApi(JsonApi):
    """:class:`JsonApi` whose GET answers carry MediaWiki's ``error`` object on failure."""

    async def get(self, params: dict[str, Any]) -> dict[str, Any]:
        data = await super().get(params)
        if "error" in data:
            info = (data["error"] or {}).get("info") if isinstance(data["error"], dict) else data["error"]
            raise SearchError(f"{self.url}: {info}")
        return data


class WikipediaSearch:
    """Wikipedia page search (a :class:`~rwpost.evaluate.search.TextSearch`): lead paragraphs of the
    best-matching pages."""

    name = "wikipedia"

    def __init__(
        self,
        base_url: str = WIKIPEDIA_URL,
        timeout_s: float = 20.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api = _GetApi(
            f"{self.base_url}{API_PATH}",
            key_header="User-Agent",
            key=user_agent,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    def identity(self) -> dict[str, Any]:
        """What makes two searches comparable (enters the tool cache key)."""
        return {"backend": self.name, "base_url": self.base_url}

    async def search(self, query: str, *, limit: int = 5, before: date | None = None) -> list[SearchResult]:
        """The lead paragraphs of the pages best matching ``query`` (``before`` cannot be asked of the
        API: the leakage guard is the only date check)."""
        params = {
            "action": "query",
            "format": "json",
            "formatversion": "2",
            "generator": "search",
            "gsrsearch": query,
            "gsrlimit": str(limit),
            "prop": "extracts|info",
            "exintro": "1",
            "explaintext": "1",
            "exlimit": "max",
            "inprop": "url",
            "redirects": "1",
        }
        return pages_of(await self.api.get(params), self.base_url, limit)

    async def aclose(self) -> None:
        await self.api.aclose()


class LoopbackWikipedia(WikipediaSearch):
    """The MediaWiki wire format against a local scripted server
    (:class:`rwpost.testing.search.SearchServer`, ``wiki=``): short timeouts."""

    name = "loopback-wikipedia"

    def __init__(self, base_url: str, timeout_s: float = 5.0, max_retries: int = 1, backoff_s: float = 0.01):
        super().__init__(base_url, timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s)


__all__ = ["LoopbackWikipedia", "WikipediaSearch", "pages_of"]
