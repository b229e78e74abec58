"""The facts of a Snopes fact-check page: an HTML string and its URL in, a :class:`SnopesArticle` out.

schema.org ``ClaimReview`` / ``Article`` JSON-LD comes first, then the markup of the known layouts
(:mod:`rwpost.snopes.layouts`), then the page's generic metadata (OpenGraph, ``<title>``). The crawler
stores what this reads; the tagger reads it when no crawl record is given.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin
from zoneinfo import ZoneInfo

from lxml import etree

from rwpost.snopes.body import article_images, body_text_and_links, boilerplate_nodes, crawl_body
from rwpost.snopes.layouts import BY_NAME, LAYOUT_JSONLD, LAYOUT_UNKNOWN, LAYOUTS
from rwpost.snopes.select import (
    Node,
    all_text,
    any_match,
    as_tree,
    classes,
    clean_text,
    first,
    select,
    values,
)
from rwpost.urls import split_url, url_problem

CANONICAL = ('link[rel="canonical"]::attr(href)', 'meta[property="og:url"]::attr(href)')
TITLE = ('meta[property="og:title"]::attr(content)',)
AUTHOR = ('meta[property="article:author"]::attr(content)',)
PUBLISHED = ('meta[property="article:published_time"]::attr(content)',)
MODIFIED = ('meta[property="article:modified_time"]::attr(content)',)
SECTION = ('meta[property="article:section"]::attr(content)',)
"""Generic page metadata (OpenGraph and ``article:*`` meta tags) every layout may carry."""

SITE_ZONE = ZoneInfo("America/Los_Angeles")
"""Snopes' own time zone: the dates its pages print are local dates there."""

_TITLE_SUFFIX = re.compile(r"\s*\|\s*Snopes(?:\.com)?\s*$", re.I)
_NOT_A_CATEGORY = ("home", "fact check", "fact checks")


def page_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a page's address (its record's id is computed from it), or None: it must be
    an http(s) URL with a host and a port that is a number below 65536."""
    parts = split_url(url)
    if parts is None:
        return f"not a URL ({url_problem(url)})"
    if parts.scheme.lower() not in ("http", "https"):
        return "not an http(s) URL"
    if not parts.hostname:
        return "no host"
    return None


def _canonical(url: str, canonical: str) -> tuple[str, str | None]:
    """The page's canonical URL and, when its canonical link cannot be one, the page's own URL instead
    and why (a bad port or a ``javascript:`` link must not lose the page)."""
    try:
        joined = urljoin(url, canonical)
    except ValueError as exc:
        joined, problem = canonical, f"not a URL ({exc})"
    else:
        problem = page_url_problem(joined)
    if problem is None:
        return joined, None
    return url, f"bad canonical link {canonical[:200]!r}: {problem} (stored under the page's own URL)"


@dataclass
class SnopesArticle:
    """What a fact-check page says about itself; ``parse_error`` says why when no claim or rating."""

    canonical_url: str
    layout: str | None = None
    category: str | None = None
    headline: str | None = None
    subtitle: str | None = None
    claim: str | None = None
    rating: str | None = None
    date_published: datetime | None = None
    date_modified: datetime | None = None
    author: str | None = None
    image_urls: list[str] = field(default_factory=list)
    body_text: str | None = None
    body_links: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    parse_error: str | None = None


_JSONLD = etree.XPath('//script[@type="application/ld+json"]/text()', smart_strings=False)


def jsonld_objects(page: Node) -> list[dict[str, Any]]:
    """Every JSON-LD object on the page (``@graph`` lists flattened); unparsable blocks are skipped."""
    objects: list[dict[str, Any]] = []
    for raw in _JSONLD(page):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            continue
        stack = data if isinstance(data, list) else [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, dict):
                if isinstance(item.get("@graph"), list):
                    stack.extend(item["@graph"])
                objects.append(item)
            elif isinstance(item, list):
                stack.extend(item)
    return objects


def _of_type(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for obj in objects:
        kind = obj.get("@type")
        if kind == name or (isinstance(kind, list) and name in kind):
            return obj
    return {}


def parse_date(value: str | None) -> datetime | None:
    """A datetime from ISO text, ``2025-03-03 19:28:26``, ``March 3, 2025`` or ``29 February 2020``."""
    text = clean_text(value)
    if not text:
        return None
    text = re.sub(r"^(Published|Updated)\s*:?\s*", "", text, flags=re.I)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
        for fmt in ("%B %d, %Y", "%d %B %Y", "%b %d, %Y", "%d %b %Y", "%Y-%m-%d %H:%M:%S"):
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def detect_layout(page: Node, objects: list[dict[str, Any]]) -> str:
    """Which Snopes layout the page uses (markup first; JSON-LD alone is its own case)."""
    for layout in LAYOUTS:
        if any_match(page, layout.markers):
            return layout.name
    if _of_type(objects, "ClaimReview"):
        return LAYOUT_JSONLD
    return LAYOUT_UNKNOWN


def _in_layouts(page: Node, fact: str) -> str | None:
    """The first value of one fact among the selectors of every layout."""
    return first(page, *(query for layout in LAYOUTS for query in getattr(layout, fact)))


def _from_post_classes(page: Node, prefix_of: str) -> str | None:
    """A fact a layout writes as a class of its article element (``fact_check_rating-mostly-true``)."""
    for layout in LAYOUTS:
        prefix = getattr(layout, prefix_of)
        if not (prefix and layout.post_classes):
            continue
        names = " ".join(classes(node) for node in select(page, layout.post_classes))
        match = re.search(rf"\b{re.escape(prefix)}([a-z0-9-]+)", names)
        if match:
            return match.group(1).replace("-", " ").title()
    return None


def _rating_from_markup(page: Node) -> str | None:
    return (
        _in_layouts(page, "rating")
        or _from_post_classes(page, "rating_class_prefix")
        or _in_layouts(page, "rating_image")
    )


def _category_from_markup(page: Node) -> str | None:
    category = first(page, *SECTION)
    if category:
        return category
    for layout in LAYOUTS:
        if layout.category_crumbs:
            crumbs = [clean_text(t) for t in values(page, layout.category_crumbs)]
            crumbs = [c for c in crumbs if c and c.lower() not in _NOT_A_CATEGORY]
            if crumbs:
                return crumbs[-1]
    text = None  # the serialised page, made only when a layout keeps the category in a script
    for layout in LAYOUTS:
        if layout.category_script_key:
            text = text if text is not None else etree.tostring(page, encoding="unicode", method="html")
            match = re.search(rf'"{re.escape(layout.category_script_key)}"\s*:\s*"([^"]+)"', text)
            if match:
                return clean_text(match.group(1))
    return _from_post_classes(page, "category_class_prefix")


def _author(article: dict[str, Any], page: Node) -> str | None:
    person = article.get("author")
    if isinstance(person, list):
        person = person[0] if person else {}
    is_person = isinstance(person, dict) and person.get("@type") == "Person"
    author = (
        (clean_text(person.get("name")) if is_person else None)
        or _in_layouts(page, "author")
        or first(page, *AUTHOR)
    )
    return re.sub(r"^By\s+", "", author) if author else None


def _headline(article: dict[str, Any], page: Node) -> str | None:
    headline = clean_text(article.get("headline")) or _in_layouts(page, "headline") or first(page, *TITLE)
    if headline:
        return headline
    title = first(page, "title::text")
    return _TITLE_SUFFIX.sub("", title) if title else None


def _has_time(value: str | None) -> bool:
    return bool(value and re.search(r"\d{1,2}:\d{2}", value))


def _zone_correct(meta: str | None) -> datetime | None:
    """An ``article:*_time`` meta value (UTC) that gives a time of day, shown in the site's zone so its date
    is the one the page prints; None when it gives no time."""
    stamp = parse_date(meta) if _has_time(meta) else None
    return stamp.astimezone(SITE_ZONE) if stamp is not None else None


def _published(page: Node, review: dict[str, Any], article: dict[str, Any]) -> datetime | None:
    """The publication time, zone-correct: ``article:published_time`` (UTC) when it gives a time of day (the
    2022+ JSON-LD writes Pacific local time labelled as UTC); else JSON-LD, else the meta date, else the
    layout's own date (microdata, the date line)."""
    meta = first(page, *PUBLISHED)
    return (
        _zone_correct(meta)
        or parse_date(review.get("datePublished") or article.get("datePublished"))
        or parse_date(meta)
        or parse_date(first(page, *(q for layout in LAYOUTS for q in layout.date_published)))
    )


def _modified(page: Node, article: dict[str, Any]) -> datetime | None:
    """The last-update time, zone-correct the same way (``article:modified_time`` first)."""
    meta = first(page, *MODIFIED)
    return (
        _zone_correct(meta)
        or parse_date(article.get("dateModified"))
        or parse_date(meta or first(page, *(q for layout in LAYOUTS for q in layout.date_modified)))
    )


def read_article(html: str | Node, url: str) -> SnopesArticle:
    """Read one fact-check page (``html`` may be the page already parsed; it is not modified)."""
    page = as_tree(html)
    objects = jsonld_objects(page)
    review, article = _of_type(objects, "ClaimReview"), _of_type(objects, "Article")
    if not article:
        article = _of_type(objects, "NewsArticle")
    layout_name = detect_layout(page, objects)

    canonical = (
        first(page, *CANONICAL) or clean_text(review.get("url")) or clean_text(article.get("url")) or url
    )
    rating_obj = review.get("reviewRating") if isinstance(review.get("reviewRating"), dict) else {}
    rating = clean_text(rating_obj.get("alternateName") or rating_obj.get("name"))
    rating = rating or _rating_from_markup(page)
    claim = clean_text(review.get("claimReviewed")) or _in_layouts(page, "claim")
    subtitle = clean_text(article.get("alternativeHeadline")) or _in_layouts(page, "subtitle")
    published = _published(page, review, article)
    modified = _modified(page, article)
    section = article.get("articleSection")
    category = (clean_text(section) if isinstance(section, str) else None) or _category_from_markup(page)

    body = crawl_body(page, BY_NAME.get(layout_name))
    skipped = boilerplate_nodes(body)
    body_text, body_links = body_text_and_links(body, url, skipped)
    sources_css = ", ".join(layout.sources for layout in LAYOUTS if layout.sources)
    sources = [t for t in (all_text(p) for p in select(page, sources_css)) if t]

    canonical_url, canonical_problem = _canonical(url, canonical)
    problems = [canonical_problem] if canonical_problem else []
    if not claim:
        problems.append("no claim (tried ClaimReview.claimReviewed, .claim_cont, .claim-wrapper .claim p)")
    if not rating:
        problems.append("no rating (tried ClaimReview.reviewRating, .rating_title_wrap, h5.rating-label-*)")
    return SnopesArticle(
        canonical_url=canonical_url,
        layout=layout_name,
        category=category,
        headline=_headline(article, page),
        subtitle=subtitle,
        claim=claim,
        rating=rating,
        date_published=published,
        date_modified=modified,
        author=_author(article, page),
        image_urls=article_images(page, body, url, skipped),
        body_text=body_text,
        body_links=body_links,
        sources=sources,
        parse_error="; ".join(problems) or None,
    )
