"""Stable record ids from canonical fact-check URLs.

The id of every record is ``rw-`` followed by the first 16 hex digits of the SHA-256 of the article's
canonical URL (:func:`rwpost.urls.article_key`). The canonical form ignores what differs between crawls of the
same article (scheme, ``www.``, letter case of the host, doubled slashes as in Snopes' JSON-LD, query
string, fragment, trailing slash), so the same article always gets the same id across crawls, dataset
versions and machines.
"""

from __future__ import annotations

import hashlib

from rwpost.urls import article_key


def record_id(news_url: str) -> str:
    """The stable id of the record for one fact-check article (see the module docstring)."""
    digest = hashlib.sha256(article_key(news_url).encode("utf-8")).hexdigest()
    return f"rw-{digest[:16]}"


def stable_seed(*parts: object) -> int:
    """A stable per-record random seed: the first 8 bytes (big-endian) of the SHA-256 of the parts joined
    by ``:``. The same on every machine and Python (unlike ``hash()``); the one derivation of "a random number
    fixed by this record" in rwpost (evidence subsets, baseline draws, split order, the sample site)."""
    text = ":".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
