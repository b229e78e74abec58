"""Leakage safety for the open-web setting: no fact-check verdicts, nothing published after the claim.

Two parts. :class:`LeakageGuard` screens every search result a detector gets: results from fact-checking
sites (:data:`FACT_CHECK_DOMAINS` with their subdomains, and the URL substrings of the paper and of the
authors' code, :data:`FACT_CHECK_SUBSTRINGS`) and results dated after the cut (the sample's
``claim_time``, or the day a detector asks for) never reach the detector, and each dropped one comes back
with its reason. :func:`audit` checks every prediction afterwards: a prediction that cites a fact-checking
site is flagged, and the report gives metrics with and without flagged ones.

Only fact-checkers and the date cut are leakage. The authors' other lists (their scrape-failure list, which
names Reuters or CNN, and their social-media and ``.gov`` exclusion) are source filters of AgentFact's
``authors-code`` profile (:mod:`rwpost.evaluate.detectors.agentfact.sources`), counted apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.io import sha256_hex
from rwpost.urls import split_url, unwrapped_urls, url_host

FACT_CHECK_DOMAINS: frozenset[str] = frozenset(
    {
        # the Snopes family: the source of RW-Post's labels
        "snopes.com",
        "snopes.org",
        "snopes.net",
        "snopes.io",
        "snopesmedia.com",
        # other fact-checkers whose verdicts would give the answer away
        "politifact.com",
        "factcheck.org",
        "fullfact.org",
        "leadstories.com",
        "truthorfiction.com",
        "checkyourfact.com",
        "factcheck.afp.com",
        "hoax-slayer.net",
        "hoax-slayer.com",
        "mediabiasfactcheck.com",
        "healthfeedback.org",
        "sciencefeedback.co",
        "climatefeedback.org",
        "boomlive.in",
        "altnews.in",
        "factly.in",
        "newschecker.in",
        "vishvasnews.com",
        "misbar.com",
        "maldita.es",
        "newtral.es",
        "correctiv.org",
        "teyit.org",
        "africacheck.org",
        "aosfatos.org",
        "chequeado.com",
        # the fact-checkers among the authors' scrape-failure list (authors_scrape_failures.txt)
        "factuel.afp.com",
        "factual.afp.com",
        "ellinikahoaxes.gr",
        "verifythis.com",
        "factcrescendo.com",
        "pesacheck.org",
    }
)
"""Fact-checking domains always blocked (with every subdomain)."""

PAPER_FACT_CHECK_SUBSTRINGS: tuple[str, ...] = (
    "snopes",
    "politifact",
    "factcheck",
    "truthorfiction",
    "hoax-slayer",
    "leadstories",
    "opensecrets",
    "fullfact",
    "checkyourfact",
    "realitycheck",
    "fact-check",
)
"""URL substrings of fact-checking services (paper appendix S3, the authors' representative list)."""

AUTHORS_FACT_CHECK_SUBSTRINGS: tuple[str, ...] = (
    "snopes", "politifact", "factcheck", "truthorfiction", "hoax-slayer",
    "eadstories", "opensecrets", "fullfact", "checkyourfact",
    "mediabiasfactcheck", "poynter", "realitycheck", "fact-check", "apnews",
    "africacheck", "altnews", "boomlive", "factly", "factnameh", "rappler",
    "verafiles", "faktisk", "stopfake", "newtral", "maldita",
    "pagellapolitica", "factcheck.ge", "dubawa", "tsek.ph",
    "dpa-factchecking", "correctiv", "eldiario", "elliberal",
    "fact-or-fiction",
)  # fmt: skip
"""The 34 URL substrings of the authors' code (``is_fact_check.py``, ``fact_checking_keywords_update``, in
``xudanni0927/AgentFact`` at 5ed5a2c, MIT licence), matched as they match them: anywhere in the lower-cased
URL. So ``apnews`` withholds all of AP News (its fact checks and its news alike), ``eldiario`` the whole
newspaper, and ``eadstories`` is their spelling (it matches leadstories)."""

FACT_CHECK_SUBSTRINGS: tuple[str, ...] = tuple(
    dict.fromkeys(PAPER_FACT_CHECK_SUBSTRINGS + AUTHORS_FACT_CHECK_SUBSTRINGS)
)
"""Every URL substring the guard blocks: the paper's and the authors' code's, deduplicated (35)."""


def normalize_domain(text: str) -> str:
    """Lower-case host without ``www.`` and port, from a domain or a URL (``""`` for text that is not
    one, :func:`rwpost.urls.split_url`)."""
    value = text.strip().lower()
    host = url_host(value if "://" in value else f"//{value}")
    return host[4:] if host.startswith("www.") else host


MALFORMED = "malformed-url"
"""The reason a search result whose URL is not a URL (:func:`rwpost.urls.split_url`) is dropped."""


def load_blocked_domains(path: str | Path) -> frozenset[str]:
    """The domains of a block list file (one per line, ``#`` comments), normalised."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise ConfigError(f"blocked domains file not found: {path}") from exc
    return frozenset(d for d in (normalize_domain(x.split("#")[0]) for x in lines) if d)


@dataclass(frozen=True)
class BlockList:
    """Blocked domains and URL substrings: a URL is blocked when its host is one of the domains or a
    subdomain of one, or when the URL contains one of the substrings (as the paper's filter does)."""

    domains: frozenset[str] = FACT_CHECK_DOMAINS
    substrings: tuple[str, ...] = FACT_CHECK_SUBSTRINGS
    source: str = "built-in fact-checkers + the paper's and the authors' code's URL substrings"

    @classmethod
    def from_file(cls, path: str | Path | None) -> BlockList:
        """The built-in fact-checkers, plus the domains of ``path`` (if given)."""
        if not path:
            return cls()
        return cls(FACT_CHECK_DOMAINS | load_blocked_domains(path), source=f"{cls.source} + {path}")

    @property
    def sha256(self) -> str:
        """Checksum of the sorted domains and substrings (the run identity and the manifest hold it)."""
        return sha256_hex("\n".join(sorted(self.domains)) + "\n--\n" + "\n".join(self.substrings))

    def describe(self) -> dict[str, object]:
        """What the manifest records: count, checksum and where the list came from."""
        return {"count": len(self.domains), "sha256": self.sha256, "source": self.source}

    def blocked_domain(self, url: str) -> str | None:
        """The blocked domain ``url`` belongs to (or the host, if a blocked substring matched), or None.
        A redirect wrapper's target counts as the URL itself (:func:`rwpost.urls.unwrapped_urls`: Bing's
        base64 ``ck/a?u=``, ``?url=``, ``?q=``)."""
        urls = unwrapped_urls(url)
        for inner in urls:  # the page a wrapper leads to names its domain, before the wrapper's host
            parts = normalize_domain(inner).split(".")
            for i in range(len(parts) - 1):
                candidate = ".".join(parts[i:])
                if candidate in self.domains:
                    return candidate
        lowered = url.lower()
        if any(sub in lowered for sub in self.substrings):
            return normalize_domain(url) or lowered
        for inner in urls[1:]:
            if any(sub in inner.lower() for sub in self.substrings):
                return normalize_domain(inner) or inner.lower()
        return None


@dataclass
class SearchResult:
    """One web search result as a detector's search tool returns it."""

    url: str
    title: str = ""
    snippet: str = ""
    published: date | datetime | None = None


@dataclass(frozen=True)
class Dropped:
    """A search result the guard withheld, and why: ``blocked:<domain>``, ``after-claim-time`` or
    :data:`MALFORMED` (its URL is not one)."""

    result: SearchResult
    reason: str


@dataclass(frozen=True)
class Screened:
    """The guard's one decision over a list of results: what it kept, what it dropped with the reason, and
    how many kept results carried no date (most pages do not; a report can say how many went unchecked)."""

    kept: list[SearchResult]
    dropped: list[Dropped]
    undated: int = 0


@dataclass(frozen=True)
class LeakageGuard:
    """What an open-web detector may see: no result from a fact-checking domain, none dated after the
    claim. The runner hands every detector the run's one guard (:attr:`RunContext.guard`)."""

    blocklist: BlockList = field(default_factory=BlockList)

    def screen(self, results: Iterable[SearchResult], claim_time: date | None) -> Screened:
        """``results`` split into kept and dropped (with the reason), in their order. Undated results are
        kept and counted."""
        kept, dropped, undated = [], [], 0
        for result in results:
            if split_url(result.url.strip()) is None:  # http://[1]/x: set aside, never a crash
                dropped.append(Dropped(result, MALFORMED))
                continue
            domain = self.blocklist.blocked_domain(result.url)
            if domain:
                dropped.append(Dropped(result, f"blocked:{domain}"))
                continue
            published = result.published
            if published is None:
                undated += 1
            elif claim_time is not None:
                day = published.date() if isinstance(published, datetime) else published
                if day > claim_time:
                    dropped.append(Dropped(result, "after-claim-time"))
                    continue
            kept.append(result)
        return Screened(kept, dropped, undated)


_URL_IN_TEXT = re.compile(r"https?://[^\s)\]>\"']+")


@dataclass(frozen=True)
class Flag:
    """A prediction citing evidence from blocked domains."""

    id: str
    urls: tuple[str, ...]
    domains: tuple[str, ...]


def audit(predictions: Sequence[Any], blocklist: BlockList) -> dict[str, Flag]:
    """Every prediction (a :class:`rwpost.evaluate.contract.Prediction`) whose evidence URLs (or
    explanation text) cite a blocked domain, by sample id."""
    flags: dict[str, Flag] = {}
    for p in predictions:
        cited = list(p.evidence_urls) + _URL_IN_TEXT.findall(p.explanation or "")
        hits = [(u, blocklist.blocked_domain(u)) for u in cited]
        hits = [(u, d) for u, d in hits if d]
        if hits:
            flags[p.id] = Flag(p.id, tuple(u for u, _ in hits), tuple(sorted({d for _, d in hits})))
    return flags


DROPPED = "leakage-guard:dropped:"
"""The ledger row a retrieving detector writes for each result the guard dropped: ``DROPPED + reason``."""


def dropped_report(predictions: Sequence[Any], guard: LeakageGuard) -> dict[str, Any]:
    """What the guard dropped before any model saw it, over ``predictions`` (every answer of the run,
    resumed ones too): counted from their ``DROPPED<reason>`` ledger rows, by reason (``blocked:<domain>``,
    ``after-claim-time``, ...). The ``leakage_report`` of every retrieving detector."""
    per_sample = [
        Counter(c.name.removeprefix(DROPPED) for c in p.calls if c.name.startswith(DROPPED))
        for p in predictions
    ]
    reasons = sum(per_sample, Counter())
    return {
        "block_list": guard.blocklist.describe(),
        "predictions": len(predictions),
        "predictions_with_drops": sum(1 for c in per_sample if c),
        "dropped": sum(reasons.values()),
        "by_reason": dict(sorted(reasons.items())),
    }
