"""Reading a search result's page, as the authors' retrieval does before it summarises (``scrape_pages``).

Their ``scraper`` (newspaper3k) keeps ``"publish date: <date>\\n\\n<article text>"`` cut to 2,000 characters
and falls back to the search snippet when that is shorter than 100 characters or than the snippet; their
reverse-image pages keep the title and the first 1,000 characters of the ``<p>`` text. Here trafilatura
reads the article (it is the project's extractor; newspaper3k is not a dependency), pages are fetched once
per run (the search cache keeps them) and a page that does not answer gives the snippet, as theirs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

USER_AGENT = "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:91.0) Gecko/20100101 Firefox/91.0"
"""One of the browser strings their ``extract_page_content_and_map_image`` sends."""


@dataclass(frozen=True)
class Page:
    """A fetched page: title, article text and publication date (empty when unknown)."""

    title: str = ""
    text: str = ""
    published: str = ""


def parse_page(html: str) -> Page:
    """Title, main text and date of an HTML page (trafilatura), or the ``<p>`` text when it finds none."""
    import trafilatura

    meta = trafilatura.extract_metadata(html)
    text = trafilatura.extract(html, include_comments=False, include_tables=False) or ""
    if not text:
        paragraphs = re.findall(r"<p[^>]*>(.*?)</p>", html, re.DOTALL | re.IGNORECASE)
        text = "\n".join(t for t in (re.sub(r"<[^>]+>", "", p).strip() for p in paragraphs) if t)
    title = (meta.title if meta and meta.title else "") or ""
    return Page(title=title, text=text, published=(meta.date if meta and meta.date else "") or "")


class PageReader:
    """Fetches pages with one HTTP client (``timeout_s`` as their scraper's 5 s); None when a page fails."""

    def __init__(self, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self._client: httpx.AsyncClient | None = None

    async def read(self, url: str) -> Page | None:
        if not url.startswith(("http://", "https://")):
            return None
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout_s, follow_redirects=True, headers={"User-Agent": USER_AGENT}
            )
        try:
            response = await self._client.get(url)
            response.raise_for_status()
        except httpx.HTTPError:
            return None
        return parse_page(response.text)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def article_text(page: Page | None, snippet: str, chars: int) -> str:
    """The document their summariser gets: the page (``publish date: ...`` first) cut to ``chars``, or the
    snippet when the page gives less than 100 characters or less than the snippet."""
    if page is None:
        return snippet
    full = f"publish date: {page.published}\n\n{page.text}"[:chars]
    return snippet if len(full) < 100 or len(full) < len(snippet) else full


__all__ = ["Page", "PageReader", "article_text", "parse_page"]
