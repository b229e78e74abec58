"""The Snopes spider: discovers fact-check articles from listings and sitemaps and fetches each once.

It stays thin (STYLE.md 3): callbacks hand HTML to the Snopes page model (``rwpost.snopes``) and yield
items built from what it reads; images, validation and storage happen in the item pipelines. Discovery
consults the store so a rerun fetches only what is new, what failed transiently (with ``retry_failed``),
a page whose images an outage failed (``images_retried``) or what the sitemap says changed since it was
stored (``lastmod`` newer than the stored ``date_modified``).
Every request is deduplicated here rather than by Scrapy's dupefilter, whose seen-file would survive
a hard kill while the queued requests did not.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlunsplit

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.sitemap import Sitemap
from twisted.python.failure import Failure

from rwpost.crawl import parse_day
from rwpost.images import transient_image_error
from rwpost.records import CrawledArticle
from rwpost.snopes.listing import (
    SITEMAP_BASE,
    is_article_url,
    read_listing,
    sitemaps_between,
    sitemaps_of_robots,
)
from rwpost.snopes.page import SnopesArticle, parse_date, read_article
from rwpost.urls import path_key, split_url, url_host, url_parts
from snopes_crawler.store import ArticleStore, SiteOrigin

REDIRECT_LOOP = "redirect loop"
TOO_LARGE = "response too large"
"""The reasons of the two failures without an HTTP status that are the site's answer, not an outage."""
FAILED = frozenset({0, *range(500, 600)})
"""Statuses ``retry_failed`` fetches again: no response, or a server error."""


def is_transport_failure(record: CrawledArticle) -> bool:
    """A page stored as failed before any response came (connection refused or reset, timeout, DNS): an
    outage, not an answer, so every run fetches it again (``retry_failed`` adds HTTP 5xx)."""
    reason = record.parse_error or ""
    return record.http_status == 0 and not reason.startswith((f"{REDIRECT_LOOP}:", f"{TOO_LARGE}:"))


def article_request_url(url: str) -> str:
    """Article URLs without query, fragment or doubled slashes (listings write ``.com//fact-check``)."""
    parts = url_parts(url)
    return urlunsplit((parts.scheme, parts.netloc, re.sub(r"/{2,}", "/", parts.path), "", ""))


class SnopesSpider(scrapy.Spider):
    """Crawl a Snopes-like site from ``start_url`` (an archive or category listing, or the home page)."""

    name = "snopes"

    def __init__(
        self,
        start_url: str,
        out_dir: str,
        since: str | date | None = None,
        until: str | date | None = None,
        max_articles: int | str = 0,
        retry_failed: bool | str = False,
        use_sitemap: bool | str = True,
        follow_categories: bool | str = True,
        sitemaps_only: bool | str = False,
        sitemap_urls: str = "",
        sitemap_base: str = "",
        site_origin: str = "",
        reader: str = "snopes",
        feed: str = "",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # "sites": any fact-checker's page, read by rwpost.sites (ClaimReview, language, tagged body);
        # discovery from a ClaimReview feed and the sitemaps, no Snopes listing walk
        self.reader = reader
        self.feed = feed
        self.feed_reviews: dict[str, list[dict[str, Any]]] = {}
        self.start_url = start_url
        self.since = parse_day(since)
        self.until = parse_day(until)
        self.max_articles = int(max_articles or 0)
        self.retry_failed = str(retry_failed).lower() in ("1", "true", "yes")
        self.use_sitemap = str(use_sitemap).lower() in ("1", "true", "yes")
        self.follow_categories = str(follow_categories).lower() in ("1", "true", "yes")
        self.sitemaps_only = str(sitemaps_only).lower() in ("1", "true", "yes")
        self.sitemap_urls = [u.strip() for u in str(sitemap_urls or "").split(",") if u.strip()]
        self.sitemap_base = sitemap_base or SITEMAP_BASE
        # A mirror of a fixed site (the sample site on a random port) is stored under the site's origin.
        self.store = ArticleStore(Path(out_dir), SiteOrigin(start_url, site_origin or None))
        self.scheduled: set[str] = set()
        self.skipped: set[str] = set()
        self.pages_seen: set[str] = set()

    def count(self, key: str, by: int = 1) -> None:
        self.crawler.stats.inc_value(f"rwpost/{key}", by)

    # --- discovery --------------------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        # With a JOBDIR, Scrapy keeps ``self.state`` across runs; it holds what an interrupted run had
        # already scheduled (those requests come back from the saved queue, so they are not rescheduled).
        state = getattr(self, "state", None)
        if state is not None:
            if "scheduled" in state:
                self.scheduled |= set(state["scheduled"])
                self.pages_seen |= set(state["pages_seen"])
                self.count("resumed_scheduled", len(self.scheduled))
            state["scheduled"] = self.scheduled
            state["pages_seen"] = self.pages_seen
        if self.feed:
            for request in self.feed_requests():
                yield request
            if not self.start_url:
                return
        root = urljoin(self.start_url, "/")
        if self.sitemaps_only:
            # A refresh with no listing walk: the site's sitemaps (latest, news, one per month of the window)
            today = datetime.now(UTC).date()
            urls = self.sitemap_urls or sitemaps_between(self.since, self.until, today, self.sitemap_base)
            for url in urls:
                for request in self.sitemap_request_if_allowed(url):
                    yield request
            return
        if self.use_sitemap:
            yield scrapy.Request(
                urljoin(root, "/robots.txt"),
                callback=self.parse_robots,
                errback=self.ignore_failure,
                dont_filter=True,
                priority=20,
                meta={"dont_retry": True, "handle_httpstatus_all": True},
            )
        if self.reader == "sites":
            for url in self.sitemap_urls:  # another fact-checker: its sitemaps, no Snopes listing walk
                for request in self.sitemap_request_if_allowed(url):
                    yield request
            return
        for request in self.listing_request(self.start_url):
            yield request

    def feed_requests(self) -> Iterator[scrapy.Request]:
        """The review pages of the ClaimReview feed, streamed (rwpost.sites.feed), each with what the feed
        says of it (the reader's fallback: the page's own markup wins)."""
        from rwpost.sites.feed import read_feed

        for item in read_feed(Path(self.feed)):
            self.count("feed_reviews")
            if item.url is None:
                self.count("feed_reviews_without_url")  # a review naming no page: nothing to fetch
                continue
            key = path_key(article_request_url(item.url))
            if key in self.feed_reviews:  # another review of a page already scheduled
                self.feed_reviews[key].append(item.review.model_dump())
                continue
            before = len(self.scheduled)
            requests = list(self.consider(item.url))
            if len(self.scheduled) > before:
                self.feed_reviews[key] = [item.review.model_dump()]
            yield from requests

    def listing_request(self, url: str) -> Iterator[scrapy.Request]:
        if url in self.pages_seen:
            return
        self.pages_seen.add(url)
        yield scrapy.Request(
            url, callback=self.parse_listing, errback=self.listing_failed, dont_filter=True, priority=10
        )

    def parse_robots(self, response: scrapy.http.Response) -> Iterator[scrapy.Request]:
        robots_txt = response.text if response.status == 200 else ""
        for url in sitemaps_of_robots(robots_txt, response.url):
            yield from self.sitemap_request_if_allowed(url)

    def sitemap_host_allowed(self, url: str) -> bool:
        """A sitemap on the start URL's host or on one of ``RWPOST_SITEMAP_HOSTS``."""
        host = url_host(url)
        allowed = {url_host(self.start_url)}
        allowed |= {h.lower() for h in self.crawler.settings.getlist("RWPOST_SITEMAP_HOSTS")}
        return host in allowed

    def sitemap_request_if_allowed(self, url: str) -> Iterator[scrapy.Request]:
        """The sitemap's request, unless it was read already or its host is not allowed (counted)."""
        if url in self.pages_seen:
            return
        if not self.sitemap_host_allowed(url):
            self.count("sitemap_host_refused")
            self.logger.warning("sitemap on a host that is not allowed, ignored: %s", url)
            return
        yield self.sitemap_request(url)

    def on_site(self, url: str) -> bool:
        """An article URL on the start URL's host (``www.`` or not) and port (http and https on their default
        ports count as one): a sitemap lists no other site's pages, nor another service on the same host."""

        def bare(u: str) -> tuple[str, int | None]:
            parts = split_url(u)
            if parts is None:  # a port out of range, a bracketed name: no site's
                return "", None
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
            return (parts.hostname or "").lower().removeprefix("www."), port

        (host, port), (site, site_port) = bare(url), bare(self.start_url)
        return bool(host) and host == site and (port == site_port or {port, site_port} <= {80, 443})

    def sitemap_request(self, url: str) -> scrapy.Request:
        self.pages_seen.add(url)
        return scrapy.Request(
            url, callback=self.parse_sitemap, errback=self.ignore_failure, dont_filter=True, priority=15
        )

    def parse_sitemap(self, response: scrapy.http.Response) -> Iterator[scrapy.Request]:
        self.count("sitemaps")
        try:
            sitemap = Sitemap(response.body)
        except Exception:  # noqa: BLE001 (lxml raises several types on a non-XML body)
            self.logger.warning("not a sitemap: %s", response.url)
            return
        for entry in sitemap:
            loc = entry.get("loc")
            if not loc:
                continue
            url = urljoin(response.url, loc)
            if sitemap.type == "sitemapindex":
                yield from self.sitemap_request_if_allowed(url)
            elif not self.is_article(url):
                self.count("sitemap_not_article")  # a listing, a tag, an unrated /articles/N/ feature
            elif not self.on_site(url):
                self.count("sitemap_offsite")
            else:
                lastmod = parse_date(entry.get("lastmod"))
                yield from self.consider(url, lastmod=lastmod)

    def is_article(self, url: str) -> bool:
        """A sitemap URL worth fetching: a Snopes fact-check's path; for another site, one under its
        entry points' paths when sites.yaml names it (its fact-check section), else any page."""
        if self.reader != "sites":
            return is_article_url(url)
        from rwpost.sites.registry import packaged_registry

        site = packaged_registry().for_url(self.store.origin.url(url))
        sections = [url_parts(e).path for e in site.entry_points] if site else []
        sections = [p for p in sections if p.strip("/")]
        return not sections or any(url_parts(url).path.startswith(p.rstrip("/")) for p in sections)

    def parse_listing(self, response: scrapy.http.Response) -> Iterator[scrapy.Request]:
        self.count("listing_pages")
        listing = read_listing(response.text, response.url)
        listed_dates = []
        for url, listed in listing.articles:
            listed_dates.append(listed)
            yield from self.consider(url, listed=listed)
        # Listings are newest first: once a whole page is older than --since, later pages are too.
        all_old = bool(listed_dates) and all(
            d is not None and self.since and d < self.since for d in listed_dates
        )
        if listing.next_page and not all_old and not self.article_budget_spent():
            yield from self.listing_request(listing.next_page)
        if self.follow_categories and not self.article_budget_spent():
            for url in listing.categories:
                yield from self.listing_request(url)

    def article_budget_spent(self) -> bool:
        return bool(self.max_articles) and len(self.scheduled) >= self.max_articles

    def consider(
        self, url: str, *, lastmod: datetime | None = None, listed: date | None = None
    ) -> Iterator[scrapy.Request]:
        """Schedule one discovered article unless it is stored, out of the window or over budget."""
        url = article_request_url(url)
        key = path_key(url)
        if key in self.scheduled:
            return
        stored = self.store.get_by_url(url)
        refetch: str | None = None  # the counter of why a stored page is fetched again
        retried_images = 0  # its images an outage failed, fetched again with it
        if stored is not None:
            stamp = stored.date_modified or stored.date_published
            retried_images = sum(transient_image_error(image.error) for image in stored.images)
            if lastmod is not None and stamp is not None and lastmod > _aware(stamp):
                refetch = "refetch_updated"
            elif is_transport_failure(stored) or (self.retry_failed and stored.http_status in FAILED):
                refetch = "refetch_failed"
            elif retried_images:
                refetch = "refetch_failed_images"
            else:
                # Not marked as scheduled: the sitemap may still show a newer lastmod for it.
                if key not in self.skipped:
                    self.skipped.add(key)
                    self.count("skipped_stored")
                return
        # A listing shows the publication date; a sitemap's lastmod is at or after it, so an article
        # modified before --since was also published before it.
        earliest = listed or (lastmod.date() if lastmod else None)
        too_old = bool(self.since and earliest and earliest < self.since)
        if too_old or (self.until and listed and listed > self.until):
            self.count("out_of_window")
            return
        if self.article_budget_spent():
            self.count("over_max_articles")
            return
        self.scheduled.add(key)
        self.count("found")
        if refetch:
            self.count(refetch)
            self.count("images_retried", retried_images)
        yield scrapy.Request(
            url,
            callback=self.parse_article,
            errback=self.article_failed,
            dont_filter=True,
            priority=1,
            meta={"rwpost_kind": "article", "rwpost_refetch": bool(refetch)},
        )

    # --- articles ---------------------------------------------------------------------------------

    def read_site_page(self, response: scrapy.http.TextResponse) -> dict[str, Any]:
        """Another fact-checker's page by the multi-site reader, with the feed's reviews of it."""
        from rwpost.records import ClaimReviewFacts
        from rwpost.sites.reader import crawl_fields, read_page

        reviews = self.feed_reviews.pop(
            path_key(response.request.url if response.request else response.url), []
        )
        feed = [ClaimReviewFacts.model_validate(r) for r in reviews]
        return crawl_fields(read_page(response.text, self.store.origin.url(response.url), feed=feed))

    def parse_article(self, response: scrapy.http.Response) -> Iterator[dict[str, Any]]:
        self.count("fetched")
        parsed: dict[str, Any] | None = None
        try:
            if not isinstance(response, scrapy.http.TextResponse):
                content_type = response.headers.get("Content-Type", b"").decode("latin-1") or "none"
                article = SnopesArticle(
                    response.url, parse_error=f"not an HTML page (Content-Type {content_type})"
                )
            elif self.reader == "sites":
                parsed = self.read_site_page(response)
            else:
                article = read_article(response.text, response.url)
        except Exception as exc:  # noqa: BLE001 (a page that breaks the parser is stored with the reason)
            article = SnopesArticle(response.url, parse_error=f"parser crashed: {type(exc).__name__}: {exc}")
            parsed = None
        if parsed is None:
            parsed = asdict(article)
        published = parsed["date_published"]
        if published is not None and not self.in_window(published.date()):
            self.count("out_of_window")
            return
        yield {
            "kind": "article",
            "fetched_url": response.url,
            "requested_url": response.request.url if response.request else response.url,
            "http_status": response.status,
            "body": response.body,
            "parsed": parsed,
            "refetch": bool(response.meta.get("rwpost_refetch")),
        }

    def in_window(self, day: date) -> bool:
        return not ((self.since and day < self.since) or (self.until and day > self.until))

    def article_failed(self, failure: Failure) -> Iterator[dict[str, Any]]:
        request = failure.request  # type: ignore[attr-defined]
        url = (request.meta.get("redirect_urls") or [request.url])[0]
        status = 0
        if failure.check(IgnoreRequest) and "max redirections" in str(failure.value):
            chain = " -> ".join(
                url_parts(u).path for u in [*request.meta.get("redirect_urls", []), request.url]
            )
            reason = f"{REDIRECT_LOOP}: {failure.getErrorMessage()} ({chain})"
        elif failure.check(HttpError):
            status = failure.value.response.status
            reason = f"HTTP {status}"
        elif failure.check(IgnoreRequest) and "robots.txt" in str(failure.value):
            self.count("robots_forbidden")
            return
        else:
            reason = f"{failure.type.__name__}: {failure.getErrorMessage()}"
            if "max size" in reason:
                reason = f"{TOO_LARGE}: {failure.getErrorMessage()}"
        self.count("failed")
        self.logger.warning("article failed: %s (%s)", url, reason)
        yield {
            "kind": "failure",
            "fetched_url": url,
            "requested_url": url,
            "http_status": status,
            "reason": reason,
        }

    def listing_failed(self, failure: Failure) -> None:
        self.count("listing_failed")
        if failure.request.url == self.start_url:  # type: ignore[attr-defined]
            reason = failure.getErrorMessage()
            if failure.check(HttpError):
                reason = f"HTTP {failure.value.response.status}"
            self.crawler.stats.set_value("rwpost/start_error", reason)
        self.logger.warning("listing failed: %s (%s)", failure.request.url, failure.getErrorMessage())  # type: ignore[attr-defined]

    def ignore_failure(self, failure: Failure) -> None:
        self.logger.info("optional page failed: %s (%s)", failure.request.url, failure.getErrorMessage())  # type: ignore[attr-defined]


def _aware(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
