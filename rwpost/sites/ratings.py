"""A publisher's rating to an RW-Post label: the one place that joins sites.yaml's per-publisher tables
with labels.py's per-language ones (:func:`rwpost.labels.map_site_rating`), for a page, a crawl record
or a rating typed on the command line; and the ratings of a crawl store that no table maps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rwpost.labels import UNMAPPED, SiteMapping, map_site_rating
from rwpost.records import ClaimReviewFacts, CrawledArticle
from rwpost.sites.registry import Registry, packaged_registry

NO_CLAIMREVIEW = "no-claimreview"
"""The reason of a page read from its Article metadata alone: no rating to map."""


def map_review(
    review: ClaimReviewFacts | None, *, url: str, language: str | None, registry: Registry | None = None
) -> SiteMapping:
    """The label of one ClaimReview of the page at ``url`` (its site's table first, then the language's)."""
    if review is None:
        return SiteMapping(rating="", label=None, reason=NO_CLAIMREVIEW)
    registry = registry if registry is not None else packaged_registry()
    return map_site_rating(
        review.rating_words,
        language=language,
        site_table=registry.ratings_for(url, language),
        value=review.rating_value,
        best=review.best_rating,
        worst=review.worst_rating,
    )


def map_record(record: CrawledArticle, registry: Registry | None = None) -> SiteMapping:
    """The label of a multi-site crawl record (its first ClaimReview)."""
    review = record.claim_reviews[0] if record.claim_reviews else None
    return map_review(review, url=record.url, language=record.language, registry=registry)


@dataclass
class UnmappedRating:
    """One (site, language, rating) that no table maps: how many pages have it and the first of them."""

    site: str
    language: str
    rating: str
    articles: int
    publisher: str | None
    example_claim: str | None
    example_url: str


def unmapped_rating_rows(
    records: Iterable[CrawledArticle], registry: Registry | None = None
) -> tuple[list[UnmappedRating], int]:
    """The ratings of the multi-site records that no table maps (pages without ClaimReview are not
    counted here), in the order first met, and how many multi-site records were read."""
    rows: dict[tuple[str, str, str], UnmappedRating] = {}
    read = 0
    for record in records:
        if record.site is None:
            continue
        read += 1
        mapping = map_record(record, registry)
        if mapping.label is None and mapping.reason and mapping.reason.startswith(UNMAPPED):
            review = record.claim_reviews[0]
            words = (review.rating_words or "").strip() or f"ratingValue {review.rating_value}"
            key = (record.site, record.language or "und", words)
            if key in rows:
                rows[key].articles += 1
            else:
                rows[key] = UnmappedRating(*key, 1, record.publisher, record.claim, record.url)
    return list(rows.values()), read


def unmapped_ratings(
    records: Iterable[CrawledArticle], registry: Registry | None = None
) -> tuple[Counter[tuple[str, str, str]], int]:
    """``(site, language, rating) -> pages`` of :func:`unmapped_rating_rows`, and the records read."""
    rows, read = unmapped_rating_rows(records, registry)
    return Counter({(r.site, r.language, r.rating): r.articles for r in rows}), read
