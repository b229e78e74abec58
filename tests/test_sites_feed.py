"""ClaimReview feeds streamed by ijson: the real records of tests/fixtures/multisite/feeds/ (a DataCommons
``DataFeedItem`` and a Fact Check Tools claim, copied from meedan/fetch), and a generated DataFeed large
enough to show that the first review comes before the file is read whole."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rwpost.errors import RecordError
from rwpost.sites.feed import read_feed, reviews_by_url, stream_feed

FEEDS = Path(__file__).parent / "fixtures" / "multisite" / "feeds" / "meedan-fetch"


def test_a_real_datafeed_item_gives_its_claimreview_verbatim():
    [item] = list(read_feed(FEEDS / "data_commons_raw.json"))
    raw = json.loads((FEEDS / "data_commons_raw.json").read_text(encoding="utf-8"))["item"][0]
    assert item.url == "https://www.presseportal.de/pm/133833/4381130"
    review = item.review
    assert review.source == "feed"
    assert review.claim_reviewed == raw["claimReviewed"]
    assert review.rating_alternate_name == raw["reviewRating"]["alternateName"]  # a sentence, no ratingValue
    assert review.rating_value is None
    assert review.appearances == [raw["itemReviewed"]["appearance"][0]["url"]]
    assert (review.item_reviewed_author, review.claim_date, review.date_published) == (
        "Irmin Suhl",
        "2019-09-07",
        "2019-09-20",
    )
    assert review.author == "Deutsche Presse-Agentur"


def test_a_real_fact_check_tools_claim_gives_one_review_per_claimreview():
    [item] = list(read_feed(FEEDS / "google_fact_check_raw.json"))
    raw = json.loads((FEEDS / "google_fact_check_raw.json").read_text(encoding="utf-8"))
    assert item.url == raw["claimReview"][0]["url"]
    review = item.review
    assert (review.claim_reviewed, review.rating_alternate_name, review.in_language) == (
        raw["text"],
        "False",
        "ur",
    )
    assert (review.item_reviewed_author, review.claim_date) == (raw["claimant"], raw["claimDate"])


def _datafeed(n: int) -> bytes:
    elements = [
        {
            "@type": "DataFeedItem",
            "item": [
                {
                    "@type": ["ClaimReview"],
                    "url": f"https://fc.example/{i}",
                    "claimReviewed": f"claim {i}",
                    "reviewRating": {"@type": "Rating", "alternateName": "Falso", "ratingValue": 1},
                }
            ],
        }
        for i in range(n)
    ]
    elements.append({"@type": "DataFeedItem", "item": [{"@type": "ClaimReview", "claimReviewed": "no page"}]})
    return json.dumps({"@type": "DataFeed", "dataFeedElement": elements}).encode()


class _Counting(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.most = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.most = self.tell()
        return chunk


def test_a_datafeed_is_streamed_review_by_review():
    data = _datafeed(20_000)
    handle = _Counting(data)
    reviews = stream_feed(handle)
    first = next(reviews)
    assert (first.url, first.review.claim_reviewed, first.review.rating_value) == (
        "https://fc.example/0",
        "claim 0",
        1,
    )
    assert handle.most < len(data) / 10  # the first review came before the feed was read
    rest = list(reviews)
    assert len(rest) == 20_000 and rest[-1].url is None  # the review naming no page, for the caller to count
    grouped, no_url = reviews_by_url(iter([first, *rest]))
    assert len(grouped) == 20_000 and no_url == 1


def test_a_feed_that_is_not_json_is_one_error_naming_it():
    with pytest.raises(RecordError, match="^feed.json: not a JSON feed"):
        list(
            stream_feed(io.BytesIO(b'{"dataFeedElement": [{"item": [{"@type": "ClaimReview", '), "feed.json")
        )
