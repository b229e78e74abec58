"""Archive and category listings, robots.txt and article URLs: what the spider follows.

``read_listing`` gives a listing's article links (with the dates listed next to them), the next page
and the category pages; ``is_article_url`` says which URLs are fact-check articles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from urllib.parse import urljoin

from rwpost.snopes.page import parse_date
from rwpost.snopes.select import Node, as_tree, classes, first, first_raw, select, values
from rwpost.urls import url_parts

ARTICLE_PATH = re.compile(
    r"^/(?:fact-check/(?!category/|page/|rating/|tag/)[^/?#]+"
    r"|news/(?:\d{4}/\d{2}/\d{2}/)?(?!category/|page/|tag/)[^/?#]+)/?$"
)
"""Paths of rated articles: ``/fact-check/<slug>/`` and the rated news pieces ``/news/YYYY/MM/DD/<slug>/``
(or ``/news/<slug>/``); not ``/articles/N/<slug>/`` (unrated features that fail after fetching)."""

ARTICLE_CARDS = "a.outer_article_link_wrapper, article.media-wrapper a, article.list-group-item > a.link"
"""Article links of a listing: 2020s ``div.article_wrapper > a.outer_article_link_wrapper`` (+
``h3.article_title``, ``span.article_byline``, ``span.article_date``); WordPress
``article.media-wrapper > a``; 2017-19 ``/fact-check/page/N/`` cards ``article.list-group-item > a.link``
(+ ``span.date``, "28 November 2018")."""
CARD_CLASS = "article_wrapper"
"""The card around a 2020s article link (WordPress cards are ``<article>`` elements)."""
CARD_DATES = ("time::attr(datetime)", ".article_date::text, span.date::text")
NEXT_PAGE = (
    'link[rel="next"]::attr(href)',
    "a.next-button::attr(href)",
    "a.page-number.next::attr(href)",  # the 2020s archive: /fact-check/?pagenum=N
    "a.next::attr(href)",
)
CATEGORY_LINKS = 'a[href*="/fact-check/category/"]::attr(href), a[href^="/category/"]::attr(href)'
"""Category pages: ``/fact-check/category/<slug>/`` (to 2021), ``/category/<slug>/`` (the live site)."""
CATEGORY_LINKS_ABSOLUTE = 'a[href*="://www.snopes.com/category/"]::attr(href)'

SITEMAP_HOSTS = ("media.snopes.com",)
"""Hosts other than the site's own that serve its sitemaps (``media.snopes.com/sitemaps/...``)."""
SITEMAP_BASE = "https://media.snopes.com/sitemaps/"
"""Where the live site's sitemaps live: ``sitemap-latest.xml`` and ``sitemap-news.xml`` (recent
articles) and one ``sitemap-articles-YYYY-MM.xml`` per month of publication (:func:`monthly_sitemap`)."""
RECENT_SITEMAPS = ("sitemap-latest.xml", "sitemap-news.xml")


@dataclass
class Listing:
    """What one archive or category page links to."""

    articles: list[tuple[str, date | None]] = field(default_factory=list)
    next_page: str | None = None
    categories: list[str] = field(default_factory=list)


def is_article_url(url: str) -> bool:
    """True for fact-check article URLs (not listings, categories, ratings or tags)."""
    return bool(ARTICLE_PATH.match(re.sub(r"/{2,}", "/", url_parts(url).path)))


def _card(link: Node) -> Node:
    """The nearest card around a listing link (the link itself when none)."""
    node: Node | None = link
    while node is not None:
        if node.tag == "article" or CARD_CLASS in classes(node):
            return node
        node = node.getparent()
    return link


def _listed_date(card: Node) -> date | None:
    stamp = parse_date(first_raw(card, CARD_DATES[0]) or first_raw(card, CARD_DATES[1]))
    return stamp.date() if stamp else None


def read_listing(html: str | Node, url: str) -> Listing:
    """Article links (with listed dates when shown), the next page and category pages of a listing
    (``html`` may be the page already parsed)."""
    page = as_tree(html)
    listing = Listing()
    seen: set[str] = set()
    for link in select(page, ARTICLE_CARDS):
        href = link.get("href")
        if not href:
            continue
        absolute = urljoin(url, href.strip())
        if absolute in seen:
            continue
        seen.add(absolute)
        listing.articles.append((absolute, _listed_date(_card(link))))
    if not listing.articles:  # unknown listing markup: every article-looking link on the page
        for href in values(page, "main a::attr(href), body a::attr(href)"):
            absolute = urljoin(url, href.strip())
            if is_article_url(absolute) and absolute not in seen:
                seen.add(absolute)
                listing.articles.append((absolute, None))
    next_href = first(page, *NEXT_PAGE)
    listing.next_page = urljoin(url, next_href) if next_href else None
    for href in values(page, CATEGORY_LINKS) + values(page, CATEGORY_LINKS_ABSOLUTE):
        absolute = _category_url(urljoin(url, href.strip()))
        if "/page/" not in absolute and absolute not in listing.categories:
            listing.categories.append(absolute)
    return listing


def _category_url(url: str) -> str:
    """A live-site ``/category/<Name>`` link as its one page ``/category/<name>/`` (older forms as given)."""
    parts = url_parts(url)
    if not parts.path.startswith("/category/"):
        return url
    path = parts.path.lower().rstrip("/") + "/"
    return f"{parts.scheme}://{parts.netloc}{path}"


def monthly_sitemap(year: int, month: int, base: str = SITEMAP_BASE) -> str:
    """The sitemap of one month's articles."""
    return urljoin(base, f"sitemap-articles-{year:04d}-{month:02d}.xml")


def sitemaps_between(
    since: date | None, until: date | None, today: date, base: str = SITEMAP_BASE
) -> list[str]:
    """The sitemaps a ``--sitemaps`` run reads under ``base``: the latest and news ones when the window
    reaches the last month (they list recent articles only), then one per month of the window, newest
    first (without ``since``, only the latest and news sitemaps)."""
    last_month = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
    urls = [urljoin(base, name) for name in RECENT_SITEMAPS] if until is None or until >= last_month else []
    if since is None:
        return urls
    end = min(until or today, today)
    year, month = end.year, end.month
    while (year, month) >= (since.year, since.month):
        urls.append(monthly_sitemap(year, month, base))
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return urls


def sitemaps_of_robots(robots_txt: str, url: str) -> list[str]:
    """The sitemaps a robots.txt names (absolute), else the site's ``/sitemap.xml``."""
    sitemaps = []
    for line in robots_txt.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "sitemap" and value.strip():
            sitemaps.append(urljoin(url, value.strip()))
    return sitemaps or [urljoin(url, "/sitemap.xml")]
