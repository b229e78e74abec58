"""Record ids are stable across spellings of the same article URL and differ between articles."""

import pytest

from rwpost.errors import RwpostError
from rwpost.ids import record_id
from rwpost.urls import article_key

URL = "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/"


@pytest.mark.parametrize(
    "variant",
    [
        "https://www.snopes.com//fact-check/robert-de-niro-trump-oscars/",  # Snopes JSON-LD double slash
        "http://snopes.com/fact-check/robert-de-niro-trump-oscars",
        "https://WWW.Snopes.com/fact-check/robert-de-niro-trump-oscars/?utm_source=x#top",
    ],
)
def test_same_article_gets_the_same_id(variant):
    assert record_id(variant) == record_id(URL)


def test_id_format_is_documented_prefix_and_16_hex():
    rid = record_id(URL)
    assert rid.startswith("rw-") and len(rid) == 19
    int(rid[3:], 16)


def test_different_articles_get_different_ids():
    assert record_id(URL) != record_id("https://www.snopes.com/fact-check/rudy-giuliani-hair-melt/")


def test_canonical_url_keeps_path_case():
    assert article_key("snopes.com/fact-check/ABC") == "https://snopes.com/fact-check/ABC/"


def test_empty_url_is_an_error():
    with pytest.raises(RwpostError, match="empty"):
        record_id("  ")
