"""Any fact-check page in any language: an HTML string and its URL in, a :class:`SitePage` out.

One generic reading, no per-site rules: ClaimReview from the markup (:mod:`rwpost.sites.claimreview`),
the body by trafilatura as text with tagged URLs (:func:`rwpost.tagged.tag_main_content`; a site whose
markup needs it names body selectors in sites.yaml), the language detected from that body
(:mod:`rwpost.sites.language`). A page without ClaimReview is read from its Article metadata (JSON-LD,
Open Graph, htmldate) and marked ``metadata_only``; it is never dropped. Feed records of the same page
(:mod:`rwpost.sites.feed`) fill what the page lacks: the page's own fields win, and ``field_sources``
says where each came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rwpost.labels import SiteMapping
from rwpost.records import ClaimReviewFacts
from rwpost.sites.claimreview import (
    ARTICLE_TYPES,
    claim_reviews_of,
    clean,
    jsonld,
    markup_claim_reviews,
    types_of,
)
from rwpost.sites.language import detect_language
from rwpost.sites.ratings import map_review
from rwpost.sites.registry import Registry, Site, packaged_registry, site_of
from rwpost.snopes.page import CANONICAL, _canonical, parse_date
from rwpost.snopes.select import Node, as_tree, first
from rwpost.tagged import TaggedText, strip_tags, tag_main_content

OG_TITLE = ('meta[property="og:title"]::attr(content)', "title::text")
OG_SITE = ('meta[property="og:site_name"]::attr(content)',)
PUBLISHED_META = ('meta[property="article:published_time"]::attr(content)',)
HTML_LANG = ("html::attr(lang)",)


@dataclass
class SitePage:
    """What a fact-check page of any publisher says about itself, and its body as tagged text."""

    url: str
    site: str
    publisher: str | None
    language: str | None
    language_probability: float
    language_declared: str | None
    headline: str | None
    claim_reviews: list[ClaimReviewFacts]
    metadata_only: bool
    date_published: str | None = field(metadata={"doc": "verbatim, from the source date_source names"})
    date_source: str | None
    author: str | None
    tagged: TaggedText
    field_sources: dict[str, str] = field(default_factory=dict)
    licence: str | None = None
    redistributable: bool = False
    site_name: str | None = None
    """The sites.yaml entry that named the site, or None for a publisher it does not list."""
    problems: list[str] = field(default_factory=list)

    @property
    def review(self) -> ClaimReviewFacts | None:
        """The page's first ClaimReview (the one the record's claim and rating come from)."""
        return self.claim_reviews[0] if self.claim_reviews else None

    @property
    def claim(self) -> str | None:
        return clean(self.review.claim_reviewed) if self.review else None

    @property
    def rating(self) -> str | None:
        """The rating's wording, whitespace collapsed (the original is in :attr:`claim_reviews`)."""
        return clean(self.review.rating_words) if self.review else None

    @property
    def published(self) -> datetime | None:
        """:attr:`date_published` as a time (a stray backslash, as Aaj Tak writes ``\\T``, removed)."""
        return parse_date(self.date_published.replace("\\", "")) if self.date_published else None

    @property
    def appearances(self) -> list[str]:
        """The post: every ClaimReview's appearance URLs, first seen first."""
        return list(dict.fromkeys(url for r in self.claim_reviews for url in r.appearances))


def _article(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The page's own Article metadata: the first Article-like object (or WebPage, which Yoast's graph
    dates first) that has a date, else the first."""
    articles = [o for o in objects if types_of(o) & (ARTICLE_TYPES | {"WebPage"})]
    dated = [o for o in articles if isinstance(o.get("datePublished"), str) and o["datePublished"]]
    return (dated or articles or [{}])[0]


def _date(
    review: ClaimReviewFacts | None, article: dict[str, Any], page: Node, html: str
) -> tuple[str | None, str | None]:
    """The review's date and its source: the ClaimReview's, the Article's, ``article:published_time``,
    else htmldate's reading of the page."""
    if review is not None and review.date_published:
        return review.date_published, "ClaimReview"
    value = article.get("datePublished")
    if isinstance(value, str) and value.strip():
        return value, "Article JSON-LD"
    meta = first(page, *PUBLISHED_META)
    if meta:
        return meta, "article:published_time"
    import htmldate

    found = htmldate.find_date(html, extensive_search=False, original_date=True)
    return (found, "htmldate") if found else (None, None)


def _publisher(site: Site | None, review: ClaimReviewFacts | None, page: Node, host: str) -> str:
    if site is not None:
        return site.publisher
    return (review.author if review and review.author else None) or clean(first(page, *OG_SITE)) or host


def merge_feed(
    page_reviews: list[ClaimReviewFacts], feed_reviews: list[ClaimReviewFacts]
) -> tuple[list[ClaimReviewFacts], dict[str, str]]:
    """The page's ClaimReviews with each field the page leaves empty taken from the feed's review of the
    same claim (or the first), and where each field came from; the feed's alone when the page has none."""
    if not page_reviews:
        return list(feed_reviews), {name: "feed" for name in _FACT_FIELDS} if feed_reviews else {}
    if not feed_reviews:
        return page_reviews, {name: page_reviews[0].source for name in _FACT_FIELDS}
    merged, sources = [], {}
    for index, review in enumerate(page_reviews):
        match = next((f for f in feed_reviews if f.claim_reviewed == review.claim_reviewed), feed_reviews[0])
        update = {}
        for name in _FACT_FIELDS:
            if getattr(review, name) in (None, "", []) and getattr(match, name) not in (None, "", []):
                update[name] = getattr(match, name)
                if index == 0:
                    sources[name] = "feed"
            elif index == 0:
                sources[name] = review.source
        merged.append(review.model_copy(update=update))
    return merged, sources


_FACT_FIELDS = (
    "claim_reviewed",
    "rating_alternate_name",
    "rating_name",
    "rating_value",
    "best_rating",
    "worst_rating",
    "appearances",
    "item_reviewed_author",
    "claim_date",
    "date_published",
    "author",
    "sd_license",
)


def read_page(
    html: str,
    url: str,
    *,
    registry: Registry | None = None,
    feed: list[ClaimReviewFacts] | None = None,
) -> SitePage:
    """Read one fact-check page of any publisher (``url`` is the address it was fetched from)."""
    registry = registry if registry is not None else packaged_registry()
    page = as_tree(html)
    found = jsonld(page)
    reviews = claim_reviews_of(found.objects, "json-ld") + markup_claim_reviews(html, url)
    reviews, sources = merge_feed(reviews, feed or [])
    article = _article(found.objects)
    canonical, canonical_problem, site = _canonical_site(page, url, registry)
    host = site_of(canonical)
    review = reviews[0] if reviews else None
    date_published, date_source = _date(review, article, page, html)
    sources["date_published"] = date_source or "none"
    headline = clean(first(page, *OG_TITLE)) or clean(
        article.get("headline") if isinstance(article.get("headline"), str) else None
    )
    tagged = _tagged(html, canonical, site)
    body_text = strip_tags(tagged.text)
    language, probability = detect_language(body_text)
    if language is None:  # no body: the headline and claim are all the text there is
        language, probability = detect_language(
            " ".join(filter(None, [headline, review and review.claim_reviewed]))
        )
    problems = list(found.unreadable) + ([canonical_problem] if canonical_problem else [])
    licence = next((r.sd_license for r in reviews if r.sd_license), None)
    sources["licence"] = "sdLicense" if licence else ("sites.yaml" if site else "none")
    author = review.author if review and review.author else _names(article.get("author"))
    return SitePage(
        url=canonical,
        site=host,
        publisher=_publisher(site, review, page, host),
        language=language,
        language_probability=probability,
        language_declared=clean(first(page, *HTML_LANG)),
        headline=headline,
        claim_reviews=reviews,
        metadata_only=not reviews,
        date_published=date_published,
        date_source=date_source,
        author=clean(author),
        tagged=tagged,
        field_sources=sources,
        licence=licence or (site.licence if site else None),
        redistributable=bool(site and site.redistributable),
        site_name=site.name if site else None,
        problems=problems,
    )


def read_tagged(html: str, url: str, *, registry: Registry | None = None) -> TaggedText:
    """The tagged main content of a page, as :func:`read_page` gives it, without reading the rest (the
    ClaimReview markup, the language, the dates): what a stage that kept a page's fields needs again."""
    registry = registry if registry is not None else packaged_registry()
    canonical, _, site = _canonical_site(as_tree(html), url, registry)
    return _tagged(html, canonical, site)


def _canonical_site(page: Node, url: str, registry: Registry) -> tuple[str, str | None, Site | None]:
    """A page's canonical address (its own where the canonical link is unusable, with the problem), and the
    publisher of sites.yaml it belongs to, if any."""
    canonical_link = first(page, *CANONICAL)
    canonical, problem = _canonical(url, canonical_link) if canonical_link else (url, None)
    return canonical, problem, registry.for_url(canonical) or registry.for_url(url)


def _tagged(html: str, canonical: str, site: Site | None) -> TaggedText:
    return tag_main_content(html, base_url=canonical, selectors=tuple(site.selectors.body) if site else ())


def _names(value: Any) -> str | None:
    items = value if isinstance(value, list) else [value]
    names = [i.get("name") if isinstance(i, dict) else i for i in items]
    names = [n for n in names if isinstance(n, str) and n.strip()]
    return ", ".join(names) if names else None


def label_of(page: SitePage, registry: Registry | None = None) -> SiteMapping:
    """The RW-Post label of a page's first ClaimReview by the publisher's and the language's tables."""
    return map_review(page.review, url=page.url, language=page.language, registry=registry)


LAYOUT = "multisite"
"""The crawl record's ``layout`` of a page the multi-site reader read (Snopes layouts name themselves)."""


def crawl_fields(page: SitePage) -> dict[str, Any]:
    """The crawl record's fields of a page (what ``snopes_crawler.store.article_record`` stores): the
    Snopes record's own, plus the multi-site ones (site, publisher, language, claim_reviews, ...)."""
    return {
        "canonical_url": page.url,
        "layout": LAYOUT,
        "headline": page.headline,
        "claim": page.claim,
        "rating": page.rating,
        "date_published": page.published,
        "author": page.author,
        "image_urls": [link.url for link in page.tagged.links if link.kind == "image"],
        "parse_error": None,
        "site": page.site,
        "publisher": page.publisher,
        "language": page.language,
        "language_declared": page.language_declared,
        "claim_reviews": [review.model_dump() for review in page.claim_reviews],
        "metadata_only": page.metadata_only,
        "field_sources": page.field_sources,
        "read_problems": page.problems,
    }
