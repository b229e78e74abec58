"""A loopback twin of Google's Fact Check Tools ``claims:search`` for tests: claims served a page at a time
(``pageSize``, ``nextPageToken``), filtered by ``reviewPublisherSiteFilter``, refused (403) without the
expected ``key``. ``requests`` records each request's query, the key left out."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rwpost.testing.server import LoopbackHandler, LoopbackServer

PATH = "/v1alpha1/claims:search"


class _Handler(LoopbackHandler):
    def do_GET(self) -> None:
        owner: FactCheckToolsServer = self.owner
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        owner.requests.append({k: v for k, v in query.items() if k != "key"})
        if parts.path != PATH:
            self.reply(404, {"Content-Type": "application/json"}, b'{"error": "not found"}')
            return
        if query.get("key") != owner.key:
            self.reply(403, {"Content-Type": "application/json"}, b'{"error": {"code": 403}}')
            return
        site = query.get("reviewPublisherSiteFilter", "")
        chosen = [
            c
            for c in owner.claims
            if any(r.get("publisher", {}).get("site") == site for r in c["claimReview"])
        ]
        size = int(query.get("pageSize", "10"))
        start = int(query.get("pageToken", "0"))
        body: dict[str, Any] = {"claims": chosen[start : start + size]}
        if start + size < len(chosen):
            body["nextPageToken"] = str(start + size)
        self.reply(200, {"Content-Type": "application/json"}, json.dumps(body).encode())


class FactCheckToolsServer(LoopbackServer):
    """``claims`` (Fact Check Tools claim objects) served to whoever sends ``key``."""

    handler = _Handler
    thread_name = "factcheck-tools"

    def __init__(self, claims: list[dict[str, Any]], key: str, port: int = 0) -> None:
        super().__init__(port)
        self.claims = claims
        self.key = key
        self.requests: list[dict[str, str]] = []

    @property
    def search_url(self) -> str:
        return f"{self.base_url}{PATH}"
