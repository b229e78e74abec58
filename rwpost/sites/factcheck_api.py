"""Google's Fact Check Tools API ``claims:search`` by publisher site, paged into a feed file that
``rwpost crawl --feed`` reads (:mod:`rwpost.sites.feed`: ``{"claims": [...]}``, written as a stream).

The key comes from the caller (the command reads ``FACTCHECK_API_KEY`` at the edge); it travels only in
the request, never into the file, a message or a log (an error names the site and the HTTP status, not
the URL that holds the key).
"""

from __future__ import annotations

import json
from pathlib import Path

from rwpost.errors import RwpostError
from rwpost.io import atomic_open

API_BASE = "https://factchecktools.googleapis.com/v1alpha1/claims:search"
PAGE_SIZE = 100


def search_claims(
    site: str,
    target: Path,
    *,
    api_key: str,
    base_url: str = API_BASE,
    language: str | None = None,
    page_size: int = PAGE_SIZE,
    max_pages: int | None = None,
    timeout_s: float = 60.0,
) -> dict[str, int]:
    """Every claim the API lists for ``reviewPublisherSiteFilter=site`` (following ``nextPageToken``),
    written to ``target`` one page at a time; returns the pages read and claims written."""
    import httpx

    params: dict[str, str | int] = {"reviewPublisherSiteFilter": site, "pageSize": page_size}
    if language:
        params["languageCode"] = language
    pages = claims = 0
    with httpx.Client(timeout=timeout_s) as client, atomic_open(target, "w") as handle:
        handle.write('{"claims": [')
        token: str | None = None
        while max_pages is None or pages < max_pages:
            query = {**params, "key": api_key, **({"pageToken": token} if token else {})}
            try:
                reply = client.get(base_url, params=query)
            except httpx.HTTPError as exc:  # its text may hold the URL, and so the key: only its kind
                raise RwpostError(f"claims:search for {site}: {type(exc).__name__}") from None
            if reply.status_code != 200:
                raise RwpostError(f"claims:search for {site}: HTTP {reply.status_code}")
            try:
                body = reply.json()
            except ValueError:
                raise RwpostError(f"claims:search for {site}: the answer is not JSON") from None
            for claim in body.get("claims") or []:
                handle.write(("," if claims else "") + json.dumps(claim, ensure_ascii=False))
                claims += 1
            pages += 1
            token = body.get("nextPageToken")
            if not token:
                break
        handle.write("]}\n")
    return {"pages": pages, "claims": claims}
