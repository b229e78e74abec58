"""URL identity: when two URLs name the same thing.

One key per question rwpost asks, each stating what it ignores. Compare two URLs only through the same key.

- :func:`article_key`: a fact-check article, the form its record id is hashed from.
- :func:`path_key`: an article within one crawled site, whatever host serves it.
- :func:`location_key`: a downloaded file (an article's image) against a link to it.
- :func:`evidence_key`: a cited or linked web page; the evaluation's evidence-URL metric and the extraction
  quality report both compare evidence through it.

And the one parser that decides what a URL is (:func:`split_url`, :func:`url_parts`, :func:`url_host`,
:func:`ip_host`): every module reads URLs through it, so text that is not a URL (``http://[1]/x``, an
unbalanced ``[``, a host with spaces, a port out of range) is the same "not a URL" everywhere, never a
``ValueError`` from :mod:`urllib.parse` or :mod:`ipaddress` deep inside a run.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from functools import lru_cache
from urllib.parse import SplitResult, parse_qsl, urlsplit, urlunsplit

from rwpost.errors import RwpostError

_MULTI_SLASH = re.compile(r"/{2,}")
_BAD_NETLOC = re.compile(r"[\s\x00-\x1f\x7f]")


def _parse(url: str) -> tuple[SplitResult | None, str | None]:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not one
    except ValueError as exc:
        return None, str(exc)
    if _BAD_NETLOC.search(parts.netloc):
        return None, "a space or control character in the host"
    return parts, None


def split_url(url: str) -> SplitResult | None:
    """``url``'s parts (:func:`urllib.parse.urlsplit`), or None when it is not a URL: a bracketed host that
    is no IP address (``http://[1]/x``), an unbalanced bracket, a host holding spaces or control characters,
    a port that is not a number from 0 to 65535. The one place rwpost decides whether text parses as a URL:
    the parts it returns are safe to read (``.port`` included). :func:`url_problem` says why not."""
    return _parse(url)[0]


def url_problem(url: str) -> str | None:
    """Why :func:`split_url` finds ``url`` is not a URL (``Port out of range 0-65535``), or None."""
    return _parse(url)[1]


NO_PARTS = SplitResult("", "", "", "", "")
"""The parts of text that is not a URL (:func:`url_parts`): no scheme, host, path, query or fragment."""


def url_parts(url: str) -> SplitResult:
    """:func:`split_url`'s parts, or :data:`NO_PARTS` for text that is not a URL (for callers that read
    one part and treat "not a URL" as "no such part")."""
    parts = split_url(url)
    return NO_PARTS if parts is None else parts


def url_host(url: str) -> str:
    """The lower-case host of ``url`` (no port, no userinfo), or ``""`` when it has none or is not a URL."""
    parts = split_url(url)
    return (parts.hostname or "").lower() if parts is not None else ""


def _bing_target(value: str) -> str | None:
    """The URL inside Bing's ``ck/a?u=a1<base64url>`` value, or None."""
    if not value.startswith("a1"):
        return None
    data = value[2:]
    try:
        text = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text.lower().startswith(("http://", "https://", "//")) else None


def unwrapped_urls(url: str, *, depth: int = 3) -> list[str]:
    """``url`` and the URLs a redirect wrapper around it leads to: a query value that is itself a URL
    (``google.com/url?q=``, ``news.google…?url=``, ``l.facebook.com/l.php?u=``) and Bing's base64
    ``ck/a?u=a1…``, unwrapped ``depth`` levels deep. What the leakage guard judges a result by."""
    found = [url]
    parts = split_url(url.strip())
    if parts is None or depth <= 0 or not parts.query:
        return found
    for _key, value in parse_qsl(parts.query[:8192]):
        inner = value if value.lower().startswith(("http://", "https://", "//")) else _bing_target(value)
        if inner:
            found += unwrapped_urls(inner, depth=depth - 1)
    return found


def origin(url: str) -> str:
    """``scheme://netloc`` of ``url`` as written (``"://"`` for text that is not a URL)."""
    parts = url_parts(url)
    return f"{parts.scheme}://{parts.netloc}"


def ip_host(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address (an IPv6 zone dropped), or None when it is a name."""
    try:
        return ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return None


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
    parts = split_url(text)
    if parts is None:
        raise RwpostError(f"cannot compute an id: {url!r} is not a URL")
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
    text = url.strip().strip('"')
    parts = split_url(text)
    return _one_slash_path((parts.path if parts is not None else text).replace('"', ""))


def location_key(url: str) -> str:
    """``host/path`` of a file: ignores the scheme, the host's letter case, the query, the fragment and a
    trailing slash; keeps ``www.`` and the port. A URL without a scheme is read as ``//host/path``."""
    text = url.strip()
    parts = split_url(text if "://" in url else "//" + text.lstrip("/"))
    if parts is None:
        return text  # not a URL: equal only to the same text
    return f"{parts.netloc.lower()}{parts.path}".rstrip("/")


@lru_cache(maxsize=1 << 16)
def evidence_key(url: str) -> str:
    """A web page as evidence, ``https://host/path?query``: ignores the scheme, ``www.``, the host's letter
    case, the port, the fragment and trailing slashes of the path; keeps the query (it may name the page).
    Text that is not a URL (a citation such as ``[1]``) is its own key: it matches no page."""
    parts = split_url(url.strip())
    if parts is None:
        return url.strip()
    host = (parts.hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    return urlunsplit(("https", host, parts.path.rstrip("/"), parts.query, ""))
