"""URL identity: when two URLs name the same thing.

One key per question rwpost asks, each stating what it ignores. Compare two URLs only through the same key.

- :func:`article_key`: a fact-check article, the form its record id is hashed from.
- :func:`path_key`: an article within one crawled site, whatever host serves it.
- :func:`location_key`: a downloaded file (an article's image) against a link to it.
- :func:`evidence_key`: a cited or linked web page; the evaluation's evidence-URL metric and the extraction
  quality report both compare evidence through it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from rwpost.errors import RwpostError

_MULTI_SLASH = re.compile(r"/{2,}")


def _one_slash_path(path: str) -> str:
    """A URL path with doubled slashes collapsed and exactly one trailing slash."""
    path = _MULTI_SLASH.sub("/", path or "/")
    return path if path.endswith("/") else path + "/"


def article_key(url: str) -> str:
    """A fact-check article's canonical URL, ``https://host/path/``.

    Ignores the scheme, ``www.``, the host's letter case, the default ports, doubled slashes (as in Snopes'
    JSON-LD), the query, the fragment and a missing trailing slash; keeps the path's letter case. A URL
    without a scheme is read as ``https://``. Raises :class:`RwpostError` for an empty URL or one without
    a host.
    """
    text = (url or "").strip()
    if not text:
        raise RwpostError("cannot compute an id: the article URL is empty")
    if "://" not in text:
        text = "https://" + text.lstrip("/")
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    if not host:
        raise RwpostError(f"cannot compute an id: {url!r} has no host")
    if host.startswith("www."):
        host = host[4:]
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    return f"https://{host}{port}{_one_slash_path(parts.path)}"


def path_key(url: str) -> str:
    """An article's URL path with one trailing slash: ignores the scheme, host, query and fragment, doubled
    slashes and stray double quotes. The crawler's store matches pages by it, as the sample site is served
    on a random loopback port while its canonical URLs point at www.snopes.com (a store holds one site)."""
    return _one_slash_path(urlsplit(url.strip().strip('"')).path.replace('"', ""))


def location_key(url: str) -> str:
    """``host/path`` of a file: ignores the scheme, the host's letter case, the query, the fragment and a
    trailing slash; keeps ``www.`` and the port. A URL without a scheme is read as ``//host/path``."""
    text = url.strip()
    parts = urlsplit(text if "://" in url else "//" + text.lstrip("/"))
    return f"{parts.netloc.lower()}{parts.path}".rstrip("/")


@lru_cache(maxsize=1 << 16)
def evidence_key(url: str) -> str:
    """A web page as evidence, ``https://host/path?query``: ignores the scheme, ``www.``, the host's letter
    case, the port, the fragment and trailing slashes of the path; keeps the query (it may name the page)."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    return urlunsplit(("https", host, parts.path.rstrip("/"), parts.query, ""))
