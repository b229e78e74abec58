"""The authors' source filters: what AgentFact's released code removes from search results besides leakage.

Their code (``xudanni0927/AgentFact`` at 70223cf, MIT licence) drops three kinds of pages that are no
fact-check and carry no date problem, so rwpost never counts them as leakage:

- ``unsupported``: social media and a few other sites (``authors_unsupported_domains.txt``: facebook,
  twitter/x, instagram, youtube, tiktok, reddit, ebay, microsoft, researchhub, pinterest, irs.gov), every
  ``.gov`` site and eight pages they could not scrape (``is_unsupported_site``), matched on the last two
  host labels as theirs;
- ``scrape-failure``: the hosts their scraper once failed to fetch (``authors_scrape_failures.txt``, their
  ``blocked_domains.txt``: Reuters, CNN, the New York Times...), matched by exact host as theirs;
- ``file-type``: links to .pdf, .doc(x), .xls(x), .ppt(x), .zip and .rar files.

Only the ``authors-code`` profile applies them (options ``exclude_unsupported``,
``exclude_scrape_failures``); each removed result is a zero-cost ledger row
``source-filter:excluded:<reason>`` that the run's notes count apart from the leakage guard's drops.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rwpost.errors import ConfigError
from rwpost.urls import url_parts

LISTS = Path(__file__).resolve().parents[2]
UNSUPPORTED_LIST = LISTS / "authors_unsupported_domains.txt"
SCRAPE_FAILURE_LIST = LISTS / "authors_scrape_failures.txt"

UNSCRAPABLE_URLS: tuple[str, ...] = (
    "https://www.thelugarcenter.org/ourwork-Bipartisan-Index.html",
    "https://data.news-leader.com/gas-price/",
    "https://www.wlbt.com/2023/03/13/3-years-later-mississippis-/",
    "https://edition.cnn.com/2021/01/11/business/no-fl",
    "https://www.thelugarcenter.org/ourwork-Bipart",
    "https://www.linkedin.com/pulse/senator-kelly-/",
    "http://libres.uncg.edu/ir/list-etd.aspx?styp=ty&bs=master%27s%20thesis&amt=100000",
    "https://www.washingtonpost.com/investigations/coronavirus-testing-denials/2020/03/",
)
"""``unscrapable_urls`` of the authors' ``retrieval_imagehash_with_google_vision.py`` (exact URLs)."""

FILE_TYPES = frozenset((".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".zip", ".rar"))
"""Extensions the authors' ``evidence_extraction`` skips."""

EXCLUDED = "source-filter:excluded:"
"""Name prefix of the zero-cost ledger row of one result a source filter removed (not leakage)."""


@cache
def read_list(path: Path) -> frozenset[str]:
    """The lower-cased entries of a list file (one per line, ``#`` comments)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise ConfigError(f"source list not found: {path}") from exc
    return frozenset(x.split("#")[0].strip().lower() for x in lines if x.split("#")[0].strip())


def _last_two_labels(url: str) -> str:
    """The authors' ``get_domain``: the last two labels of the host (``m.facebook.com`` -> facebook.com)."""
    netloc = url_parts(url).netloc.lower()
    return ".".join(netloc.split(".")[-2:])


@dataclass(frozen=True)
class SourceFilter:
    """The authors' exclusions that are switched on; :meth:`reason` says why a URL is removed, or None."""

    unsupported: bool = False
    scrape_failures: bool = False

    @property
    def active(self) -> bool:
        return self.unsupported or self.scrape_failures

    def reason(self, url: str) -> str | None:
        """``unsupported:<domain>``, ``gov:<domain>``, ``unscrapable``, ``scrape-failure:<host>`` or
        ``file-type:<ext>``, the authors' order; None when the URL is kept."""
        if self.unsupported:
            domain = _last_two_labels(url)
            if domain.endswith(".gov"):
                return f"gov:{domain}"
            if domain in read_list(UNSUPPORTED_LIST):
                return f"unsupported:{domain}"
            if url in UNSCRAPABLE_URLS:
                return "unscrapable"
        if self.scrape_failures:
            host = url_parts(url).netloc.lower()
            if host in read_list(SCRAPE_FAILURE_LIST):
                return f"scrape-failure:{host}"
            extension = os.path.splitext(url_parts(url).path)[1].lower()
            if extension in FILE_TYPES:
                return f"file-type:{extension}"
        return None

    def describe(self) -> dict[str, object]:
        """What the detector's config records."""
        return {
            "unsupported": len(read_list(UNSUPPORTED_LIST)) if self.unsupported else 0,
            "scrape_failures": len(read_list(SCRAPE_FAILURE_LIST)) if self.scrape_failures else 0,
        }


__all__ = ["EXCLUDED", "SCRAPE_FAILURE_LIST", "UNSUPPORTED_LIST", "SourceFilter", "read_list"]
