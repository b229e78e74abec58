"""The parsel page reader of ``fe878f5`` (``crawlers/snopes_crawler/parse.py``), kept as the benchmarks'
same-run baseline (issue 29): the crawl at that commit read 147-152 pages/s on the shared machine.

It knew two layouts (2020s, WordPress 2017-2021) where the page model knows four; its selectors ran
through parsel (cssselect to XPath per query, on one lxml tree). Only ``parse_article`` is kept, unchanged
but for its imports, and :func:`read_article` gives its result the page model's shape so the spider can
store it.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

from parsel import Selector

from rwpost.snopes.layouts import LAYOUT_2020S, LAYOUT_JSONLD, LAYOUT_UNKNOWN, LAYOUT_WORDPRESS
from rwpost.snopes.links import image_url_from_attrs
from rwpost.snopes.page import SnopesArticle

ARTICLE_PATH = re.compile(r"^/(?:fact-check|news|articles/\d+)/(?!category/|page/|rating/|tag/)[^/?#]+/?$")
"""Paths of fact-check articles (Snopes puts them under /fact-check/<slug>/; news pieces elsewhere)."""

_TITLE_SUFFIX = re.compile(r"\s*\|\s*Snopes(?:\.com)?\s*$", re.I)
_SPACES = re.compile(r"\s+")

# Markup inside an article body that is not article content (ads, hidden inputs, scripts).
_BODY_NOISE = (
    "script",
    "style",
    "noscript",
    "input",
    "div.outer-ad-unit-wrapper",
    "div[class*=ad-unit]",
    "div[class^=smg-zone]",
    "div.social_total",
    "section#fact_check_rating_container",
)


def _text(value: str | None) -> str | None:
    """Whitespace-collapsed text, None when empty."""
    if value is None:
        return None
    text = _SPACES.sub(" ", html_lib.unescape(value)).strip()
    return text or None


def _first(sel: Selector, *queries: str) -> str | None:
    """The first non-empty text among CSS ``queries`` (each may end in ``::text`` or ``::attr``)."""
    for query in queries:
        for value in sel.css(query).getall():
            text = _text(value)
            if text:
                return text
    return None


def _all_text(node: Selector) -> str | None:
    return _text(" ".join(node.css("::text").getall()))


def jsonld_objects(sel: Selector) -> list[dict[str, Any]]:
    """Every JSON-LD object on the page (``@graph`` lists flattened); unparsable blocks are skipped."""
    objects: list[dict[str, Any]] = []
    for raw in sel.css('script[type="application/ld+json"]::text').getall():
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
    text = _text(value)
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


def detect_layout(sel: Selector, objects: list[dict[str, Any]]) -> str:
    """Which Snopes layout the page uses (markup first; JSON-LD alone is its own case)."""
    if sel.css("#fact_check_rating_container, main#article_main, article#article-content"):
        return LAYOUT_2020S
    if sel.css("article.snopes-post, div.claim-wrapper, div.rating-wrapper"):
        return LAYOUT_WORDPRESS
    if _of_type(objects, "ClaimReview"):
        return LAYOUT_JSONLD
    return LAYOUT_UNKNOWN


def _rating_from_markup(sel: Selector) -> str | None:
    # 2020s: the rating word is the first text node of .rating_title_wrap (the rest is "About this rating").
    rating = _first(sel, "#fact_check_rating_container .rating_title_wrap::text", ".rating_title_wrap::text")
    if rating:
        return rating
    rating = _first(
        sel, "div.rating-wrapper h5[class^=rating-label-]::text", "h5[class^=rating-label-]::text"
    )
    if rating:
        return rating
    classes = " ".join(sel.css("article.snopes-post::attr(class)").getall())
    match = re.search(r"\bfact_check_rating-([a-z0-9-]+)", classes)
    if match:
        return match.group(1).replace("-", " ").title()
    return _first(sel, ".rating_img_wrap img::attr(alt)")


def _category_from_markup(sel: Selector) -> str | None:
    category = _first(sel, 'meta[property="article:section"]::attr(content)')
    if category:
        return category
    crumbs = [_text(t) for t in sel.css("nav.breadcrumbs li.breadcrumb-item a::text").getall()]
    crumbs = [c for c in crumbs if c and c.lower() not in ("home", "fact check", "fact checks")]
    if crumbs:
        return crumbs[-1]
    match = re.search(r'"snopes_category_1"\s*:\s*"([^"]+)"', sel.get() or "")
    if match:
        return _text(match.group(1))
    classes = " ".join(sel.css("article.snopes-post::attr(class)").getall())
    match = re.search(r"\bfact_check_category-([a-z0-9-]+)", classes)
    return match.group(1).replace("-", " ").title() if match else None


def _body(sel: Selector, layout: str) -> Selector | None:
    if layout == LAYOUT_WORDPRESS:
        nodes = sel.css("div.content-wrapper div.content, div.entry-content")
    else:
        nodes = sel.css("article#article-content")
    return nodes[0] if nodes else None


def _image_src(img: Selector) -> str | None:
    """The real image URL of an ``<img>``, chosen exactly as the tagged text chooses it."""
    return image_url_from_attrs(img.attrib)


def _images(sel: Selector, body: Selector | None, url: str) -> list[str]:
    """Article images: the cover and the body images; rating icons and logos are not article images."""
    nodes = sel.css("section.cover-wrapper img, .featured-media-wrapper img")
    if body is not None:
        nodes.extend(body.css("img"))
    found: list[str] = []
    for img in nodes:
        if img.xpath("ancestor::*[contains(@class,'rating_img_wrap') or contains(@class,'rating-wrapper')]"):
            continue
        src = _image_src(img)
        if src:
            absolute = urljoin(url, src)
            if absolute not in found:
                found.append(absolute)
    return found


def _body_text_and_links(body: Selector | None, url: str) -> tuple[str | None, list[str]]:
    if body is None:
        return None, []
    paragraphs: list[str] = []
    links: list[str] = []
    noise = " | ".join(f"self::{q}" for q in ("script", "style", "noscript", "input"))
    for node in body.xpath(
        ".//p[not(ancestor::section[@id='fact_check_rating_container'])"
        " and not(ancestor::div[contains(@class,'ad-unit') or contains(@class,'snopesad')])]"
        " | .//blockquote[not(ancestor::div[contains(@class,'snopesad')])]"
    ):
        if node.xpath(noise):
            continue
        text = _all_text(node)
        if text and text not in paragraphs:
            paragraphs.append(text)
        for href in node.css("a::attr(href)").getall():
            absolute = urljoin(url, href.strip())
            if absolute not in links:
                links.append(absolute)
    return ("\n\n".join(paragraphs) or None), links


def parse_article(html: str, url: str) -> dict[str, Any]:
    """Parse one fact-check page; ``parse_error`` says why when no claim or no rating was found.

    Returned keys: canonical_url, layout, category, headline, subtitle, claim, rating, date_published,
    date_modified, author, image_urls, body_text, body_links, sources, parse_error.
    """
    sel = Selector(text=html)
    objects = jsonld_objects(sel)
    review, article = _of_type(objects, "ClaimReview"), _of_type(objects, "Article")
    if not article:
        article = _of_type(objects, "NewsArticle")
    layout = detect_layout(sel, objects)

    canonical = (
        _first(sel, 'link[rel="canonical"]::attr(href)', 'meta[property="og:url"]::attr(href)')
        or _text(review.get("url"))
        or _text(article.get("url"))
        or url
    )
    rating_obj = review.get("reviewRating") if isinstance(review.get("reviewRating"), dict) else {}
    rating = _text(rating_obj.get("alternateName") or rating_obj.get("name")) or _rating_from_markup(sel)
    claim = _text(review.get("claimReviewed")) or _first(
        sel,
        "#fact_check_rating_container .claim_cont::text",
        ".claim_cont::text",
        "div.claim-wrapper div.claim p::text",
        "div.claim p::text",
    )
    headline = (
        _text(article.get("headline"))
        or _first(
            sel, "section.title-container h1::text", "header.post-header h1.title::text", "h1.title::text"
        )
        or _first(sel, 'meta[property="og:title"]::attr(content)')
    )
    if not headline:
        title = _first(sel, "title::text")
        headline = _TITLE_SUFFIX.sub("", title) if title else None
    subtitle = _text(article.get("alternativeHeadline")) or _first(
        sel, "section.title-container h2::text", "header.post-header h2.subtitle::text"
    )
    author_obj = article.get("author")
    if isinstance(author_obj, list):
        author_obj = author_obj[0] if author_obj else {}
    author = (
        _text(author_obj.get("name"))
        if isinstance(author_obj, dict) and author_obj.get("@type") == "Person"
        else None
    ) or _first(
        sel,
        "section.title-container .author_name a.author_link::text",
        ".author_name a.author_link::text",
        ".authors-wrapper ul.authors li a.author::text",
        'meta[property="article:author"]::attr(content)',
    )
    if author:
        author = re.sub(r"^By\s+", "", author)
    published = parse_date(review.get("datePublished") or article.get("datePublished")) or parse_date(
        _first(
            sel,
            'meta[property="article:published_time"]::attr(content)',
            "span.date.date-published::text",
            "h3.publish_date::text",
        )
    )
    modified = parse_date(article.get("dateModified")) or parse_date(
        _first(sel, 'meta[property="article:modified_time"]::attr(content)', "span.date.date-updated::text")
    )
    category = (
        _text(article.get("articleSection")) if isinstance(article.get("articleSection"), str) else None
    )
    category = category or _category_from_markup(sel)

    body = _body(sel, layout)
    body_text, body_links = _body_text_and_links(body, url)
    sources = [t for t in (_all_text(p) for p in sel.css("#sources_rows > p, div.citations li p")) if t]

    problems = []
    if not claim:
        problems.append("no claim (tried ClaimReview.claimReviewed, .claim_cont, .claim-wrapper .claim p)")
    if not rating:
        problems.append("no rating (tried ClaimReview.reviewRating, .rating_title_wrap, h5.rating-label-*)")
    return {
        "canonical_url": urljoin(url, canonical),
        "layout": layout,
        "category": category,
        "headline": headline,
        "subtitle": subtitle,
        "claim": claim,
        "rating": rating,
        "date_published": published,
        "date_modified": modified,
        "author": author,
        "image_urls": _images(sel, body, url),
        "body_text": body_text,
        "body_links": body_links,
        "sources": sources,
        "parse_error": "; ".join(problems) or None,
    }


def read_article(html: str, url: str) -> SnopesArticle:
    """:func:`parse_article` as a :class:`~rwpost.snopes.page.SnopesArticle` (what the spider stores)."""
    return SnopesArticle(**parse_article(html, url))
