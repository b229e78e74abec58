"""ClaimReview feeds, streamed (ijson): a multi-GB feed never sits in memory, one review at a time does.

Three shapes are read, each as published:

- a schema.org ``DataFeed`` (the Fact Check Markup Tool's export, DataCommons): ``dataFeedElement[]``
  of ``DataFeedItem`` whose ``item[]`` are ClaimReviews (a single ``DataFeedItem`` too);
- a bare JSON array of ClaimReviews;
- a Google Fact Check Tools ``claims:search`` answer (``claims[]`` of ``{text, claimant, claimDate,
  claimReview[{publisher, url, title, reviewDate, textualRating, languageCode}]}``), or one such claim.

Each review becomes a :class:`FeedReview`: the review page's URL and its facts with ``source="feed"``,
the fallback of the page's own markup (:func:`rwpost.sites.reader.merge_feed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from rwpost.errors import RecordError
from rwpost.records import ClaimReviewFacts
from rwpost.sites.claimreview import claim_reviews_of, types_of

REVIEW_PREFIXES = ("dataFeedElement.item.item.item", "item.item", "item")
"""Where ClaimReviews sit: in a DataFeed's items, in one DataFeedItem, in a bare array."""
CLAIM_PREFIXES = ("claims.item",)
"""Where a Fact Check Tools claim (its ``claimReview[]`` inside) sits in a ``claims:search`` answer."""
WANTED = frozenset((*REVIEW_PREFIXES, *CLAIM_PREFIXES, "claimReview.item"))


@dataclass(frozen=True)
class FeedReview:
    """One review of a feed: the fact-check page it is about, and what the feed says of it."""

    url: str | None
    review: ClaimReviewFacts


def _review_url(obj: dict[str, Any]) -> str | None:
    url = obj.get("url")
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def _from_claimreview(obj: dict[str, Any]) -> Iterator[FeedReview]:
    url = _review_url(obj)
    for review in claim_reviews_of([obj], "feed"):
        yield FeedReview(url=url, review=review)


def _from_fact_check_tools(claim: dict[str, Any]) -> Iterator[FeedReview]:
    """A Fact Check Tools claim as ClaimReviews: its text, claimant and date; each review's rating."""
    for entry in claim.get("claimReview") or []:
        if not isinstance(entry, dict):
            continue
        publisher = entry.get("publisher") if isinstance(entry.get("publisher"), dict) else {}
        review = ClaimReviewFacts(
            claim_reviewed=claim.get("text") if isinstance(claim.get("text"), str) else None,
            rating_alternate_name=entry.get("textualRating"),
            item_reviewed_author=claim.get("claimant") if isinstance(claim.get("claimant"), str) else None,
            claim_date=claim.get("claimDate") if isinstance(claim.get("claimDate"), str) else None,
            date_published=entry.get("reviewDate"),
            author=publisher.get("name") or publisher.get("site"),
            url=entry.get("url") if isinstance(entry.get("url"), str) else None,
            in_language=entry.get("languageCode"),
            source="feed",
        )
        yield FeedReview(url=_review_url(entry), review=review)


def stream_feed(handle: BinaryIO, source: str = "feed") -> Iterator[FeedReview]:
    """Every review of a feed file, in file order, read as a stream (see the module's shapes); a review
    that names no page (``url``) comes with ``url=None``, for the caller to count.

    A file that is not JSON raises :class:`RecordError` naming ``source`` and where it broke.
    """
    current: tuple[str, ijson.ObjectBuilder] | None = None
    top: dict[str, Any] = {}  # a lone Fact Check Tools claim's scalars (text, claimant, claimDate)
    top_reviews: list[dict[str, Any]] = []
    try:
        for prefix, event, value in ijson.parse(handle, use_float=True):
            if current is not None:
                wanted, builder = current
                builder.event(event, value)
                if prefix == wanted and event == "end_map":
                    current = None
                    yield from _finished(wanted, builder.value, top_reviews)
            elif event == "start_map" and prefix in WANTED:
                builder = ijson.ObjectBuilder()
                builder.event(event, value)
                current = (prefix, builder)
            elif prefix in ("text", "claimant", "claimDate") and event in ("string", "number"):
                top[prefix] = value
    except ijson.JSONError as exc:
        raise RecordError(f"not a JSON feed ({exc})", source=source) from None
    if top_reviews:
        yield from _from_fact_check_tools({**top, "claimReview": top_reviews})


def _finished(prefix: str, obj: Any, top_reviews: list[dict[str, Any]]) -> Iterator[FeedReview]:
    if not isinstance(obj, dict):
        return
    if prefix == "claimReview.item":  # one Fact Check Tools claim alone: its scalars come at the end
        top_reviews.append(obj)
    elif prefix in CLAIM_PREFIXES:
        yield from _from_fact_check_tools(obj)
    elif "ClaimReview" in types_of(obj):
        yield from _from_claimreview(obj)


def read_feed(path: Path) -> Iterator[FeedReview]:
    """The reviews of a feed file (:func:`stream_feed`)."""
    with open(path, "rb") as handle:
        yield from stream_feed(handle, str(path))


def reviews_by_url(reviews: Iterator[FeedReview]) -> tuple[dict[str, list[ClaimReviewFacts]], int]:
    """The feed's reviews grouped by the fact-check page they are about (first seen first), and how many
    named no page."""
    grouped: dict[str, list[ClaimReviewFacts]] = {}
    no_url = 0
    for item in reviews:
        if item.url is None:
            no_url += 1
        else:
            grouped.setdefault(item.url, []).append(item.review)
    return grouped, no_url
