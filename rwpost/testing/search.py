"""A scripted search server on 127.0.0.1 speaking Serper's and Cloud Vision's wire formats, for tests.

``POST /search`` (Serper: ``{"q": ...}``) answers ``{"organic": [...]}`` from ``text``: a dict from query
to results, or a function of the query; an unknown query gets no results. ``POST /v1/images:annotate``
(Cloud Vision web detection) answers from ``pages``, a list of matching pages (or a function of the image
bytes). ``GET /images/<name>`` serves the bytes of ``images[name]``, so matched images can be fetched.
``GET /w/api.php`` (MediaWiki, ``gsrsearch=``) answers from ``wiki``: a dict from query to pages
(:func:`wiki_page`) or a function of the query. Setting ``failures = n`` answers the next ``n`` POST (and
MediaWiki) requests with HTTP 503 (an outage).
Each result is a dict ``{"link", "title", "snippet", "date"}`` as Serper sends it; :func:`result` builds
one. The server records every query and request::

    with SearchServer({"moon landing 1969": [result("https://example.org/a", "A", "...")]}) as server:
        LoopbackSearch(base_url=server.base_url)
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from rwpost.testing.server import LoopbackHandler, LoopbackServer
from rwpost.urls import url_parts

TextScript = Mapping[str, Sequence[dict[str, Any]]] | Callable[[str], Sequence[dict[str, Any]]]
PageScript = Sequence[dict[str, Any]] | Callable[[bytes], Sequence[dict[str, Any]]]


def result(link: str, title: str = "", snippet: str = "", date: str | None = None) -> dict[str, Any]:
    """One organic result as Serper sends it."""
    row = {"link": link, "title": title, "snippet": snippet}
    if date:
        row["date"] = date
    return row


def wiki_page(title: str, extract: str = "") -> dict[str, Any]:
    """One page of a MediaWiki ``generator=search`` answer (its URL is built from the title)."""
    return {"title": title, "extract": extract}


def page(url: str, title: str = "", image_url: str | None = None, full: bool = True) -> dict[str, Any]:
    """One page with a matching image as Cloud Vision web detection sends it."""
    row: dict[str, Any] = {"url": url, "pageTitle": title}
    if image_url:
        row["fullMatchingImages" if full else "partialMatchingImages"] = [{"url": image_url}]
    return row


class _SearchHandler(LoopbackHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server: SearchServer = self.owner
        if self.path.startswith("/w/api.php"):
            self._wiki(server)
            return
        name = self.path.split("?")[0].removeprefix("/images/")
        data = server.images.get(name) if self.path.startswith("/images/") else None
        if data is None:
            self.reply(404, {"Content-Type": "text/plain"}, b"not found")
        else:
            self.reply(200, {"Content-Type": "image/png"}, data)

    def do_POST(self) -> None:  # noqa: N802
        server: SearchServer = self.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._json(400, {"error": "body is not JSON"})
            return
        route = self.path.split("?")[0].rstrip("/")
        with server._lock:
            server.requests.append({"path": route, "body": body, "headers": dict(self.headers)})
            failing = server.failures > 0
            server.failures -= int(failing)
        if failing:
            retry_after = {} if server.retry_after is None else {"Retry-After": server.retry_after}
            self._json(503, {"error": "unavailable (scripted)"}, retry_after)
            return
        if route == "/search":
            query = str(body.get("q", ""))
            with server._lock:
                server.queries.append(query)
            text = server.text
            rows = text(query) if callable(text) else text.get(query, [])
            self._json(200, {"searchParameters": {"q": query}, "organic": list(rows)})
        elif route == "/v1/images:annotate":
            image = base64.b64decode(body["requests"][0]["image"]["content"])
            with server._lock:
                server.image_queries += 1
            rows = server.pages(image) if callable(server.pages) else server.pages
            self._json(200, {"responses": [{"webDetection": {"pagesWithMatchingImages": list(rows)}}]})
        else:
            self._json(404, {"error": f"no route {route}"})

    def _wiki(self, server: SearchServer) -> None:
        query = (parse_qs(url_parts(self.path).query).get("gsrsearch") or [""])[0]
        with server._lock:
            server.wiki_queries.append(query)
            failing = server.failures > 0
            server.failures -= int(failing)
        if failing:
            self._json(503, {"error": "unavailable (scripted)"})
            return
        rows = server.wiki(query) if callable(server.wiki) else server.wiki.get(query, [])
        pages = [{"index": i, **row} for i, row in enumerate(rows, start=1)]
        self._json(200, {"batchcomplete": True, "query": {"pages": pages}} if pages else {})

    def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.reply(status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(data).encode())


class SearchServer(LoopbackServer):
    """Scripted text and reverse image search over HTTP on 127.0.0.1 (a context manager)."""

    handler = _SearchHandler
    thread_name = "fake-search"

    def __init__(
        self,
        text: TextScript | None = None,
        pages: PageScript | None = None,
        images: Mapping[str, bytes] | None = None,
        wiki: TextScript | None = None,
        *,
        port: int = 0,
    ) -> None:
        self.text: TextScript = text if text is not None else {}
        self.pages: PageScript = pages if pages is not None else []
        self.images = dict(images or {})
        self.wiki: TextScript = wiki if wiki is not None else {}
        self.wiki_queries: list[str] = []
        self.queries: list[str] = []
        self.image_queries = 0
        self.requests: list[dict[str, Any]] = []
        self.failures = 0
        """The next this many POST requests get HTTP 503 (an outage)."""
        self.retry_after: str | None = None
        """The ``Retry-After`` header of those 503s (none by default)."""
        self._lock = threading.Lock()
        super().__init__(port)

    def image_url(self, name: str) -> str:
        """Where ``images[name]`` is served."""
        return f"{self.base_url}/images/{name}"
