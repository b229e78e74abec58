"""Fact-checkers as data: the packaged ``sites.yaml`` (publisher, domains, language hint, entry points,
terms, optional selectors and rating table), validated once, looked up by a page's host.

Adding a fact-checker is a reviewed change to ``sites.yaml``, never code: the reader reads any page
without an entry (site = its host, publisher from the markup), an entry only names and tunes it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rwpost.errors import ConfigError
from rwpost.sites.rating_table import read_yaml_model

SITES_FILE = Path(__file__).with_name("sites.yaml")
"""The packaged list of fact-checkers."""


class Selectors(BaseModel):
    """CSS selectors for a site whose markup trafilatura misreads (optional; most sites need none)."""

    model_config = ConfigDict(extra="forbid")

    body: list[str] = Field(default_factory=list, description="the article body, tried in order")


class Site(BaseModel):
    """One fact-checker as ``sites.yaml`` describes it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="short id, e.g. afp-factuel")
    publisher: str
    domains: list[str] = Field(min_length=1, description="hosts without www.; subdomains match too")
    language: str | None = Field(default=None, description="the site's usual language (a hint only)")
    entry_points: list[str] = Field(default_factory=list, description="home, listing or sitemap URLs")
    terms: str = Field(description="what may be republished (the card's licence column)")
    licence: str | None = Field(default=None, description="an open licence of the articles, if any")
    redistributable: bool = False
    selectors: Selectors = Field(default_factory=Selectors)
    ratings: dict[str, str] = Field(
        default_factory=dict,
        description="this publisher's wordings -> RW-Post label (labels.py tables first)",
    )

    @field_validator("domains")
    @classmethod
    def _plain_hosts(cls, domains: list[str]) -> list[str]:
        return [site_of(f"//{d}") for d in domains]


class SiteList(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    sites: list[Site]


def site_of(url: str) -> str:
    """A page's site: its host in lower case, without ``www.`` and port."""
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


class Registry:
    """The sites of one list, looked up by host (the longest matching domain wins)."""

    def __init__(
        self,
        sites: list[Site],
        version: int = 1,
        reviewed: dict[tuple[str, str], dict[str, str]] | None = None,
    ) -> None:
        self.sites = sites
        self.version = version
        self.reviewed = reviewed or {}
        """``(site, language) -> {rating: label}`` of the reviewed rating table (sites.rating_table)."""
        self._by_domain = {d: s for s in sites for d in s.domains}

    def with_reviewed(self, table: dict[tuple[str, str], dict[str, str]]) -> Registry:
        """The same list reading a reviewed rating table (its rows win over those it shares with ours)."""
        merged = {key: dict(words) for key, words in self.reviewed.items()}
        for key, words in table.items():
            merged.setdefault(key, {}).update(words)
        return Registry(self.sites, self.version, merged)

    def ratings_for(self, url: str, language: str | None) -> dict[str, str]:
        """The publisher's own table for a page: its sites.yaml ``ratings``, then the reviewed rows of its
        site and language (wordings -> label or ``excluded``)."""
        site = self.for_url(url)
        table = dict(site.ratings) if site else {}
        for word, target in self.reviewed.get((site_of(url), language or "und"), {}).items():
            table.setdefault(word, target)
        return table

    def for_url(self, url: str) -> Site | None:
        host = site_of(url)
        parts = host.split(".")
        for start in range(len(parts) - 1):
            site = self._by_domain.get(".".join(parts[start:]))
            if site is not None:
                return site
        return None

    def by_name(self, name: str) -> Site | None:
        """A site by its name or one of its domains."""
        wanted = name.lower()
        for site in self.sites:
            if site.name == wanted or site_of(wanted) in site.domains:
                return site
        return None

    def without(self, *names: str) -> Registry:
        """The same list less some sites (to read their pages as unseen publishers)."""
        return Registry([s for s in self.sites if s.name not in names], self.version, self.reviewed)


def load_registry(path: Path = SITES_FILE) -> Registry:
    """Read and validate a sites file; a bad one is a one-line :class:`ConfigError` naming it."""
    parsed = read_yaml_model(path, SiteList, "sites file")
    names = [s.name for s in parsed.sites]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{path}: site name {', '.join(repeated)} given more than once")
    return Registry(parsed.sites, parsed.version)


@cache
def packaged_registry() -> Registry:
    """The packaged ``sites.yaml`` and reviewed rating table (``ratings-reviewed.yaml``), read once."""
    from rwpost.sites.rating_table import load_rating_table

    return load_registry().with_reviewed(load_rating_table().lookup())
