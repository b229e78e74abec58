"""Other fact-checkers' ratings to RW-Post labels (rwpost.labels.map_site_rating): the publisher's table,
then the language's, then ratingValue at the ends of its scale; never a guess. The Snopes table (paper
Table II, map_rating) is not changed by any of it."""

from __future__ import annotations

import pytest

from rwpost.errors import UnknownRatingError
from rwpost.labels import UNMAPPED, UNRATED, Label, map_rating, map_site_rating, scale_label


@pytest.mark.parametrize(
    ("rating", "language", "label"),
    [
        ("Falso", "pt", Label.FALSE),
        ("FALSCH", "de", Label.FALSE),
        ("Faux", "fr", Label.FALSE),
        ("錯誤", "zh-Hant", Label.FALSE),
        ("Keliru", "id", Label.FALSE),
        ("Incorrect \r", "en", Label.FALSE),  # Africa Check's wording, its \r and all
        ("False", "hi", Label.FALSE),  # an English wording on a Hindi page
        ("Engañoso", "es", Label.MIXTURE),
        ("Mostly false", "en", Label.MIXTURE),  # Table II's row, as for Snopes
        ("證據不足", "zh-Hant", Label.UNPROVEN),
        ("Verdadero", "es", Label.TRUE),
    ],
)
def test_wordings_map_by_the_language_tables(rating, language, label):
    mapping = map_site_rating(rating, language=language)
    assert mapping.label is label and mapping.via and mapping.via.startswith("language:")


def test_the_publishers_own_table_comes_first():
    assert map_site_rating("really_false", site_table={"really_false": "False"}).via == "site"
    assert map_site_rating("really_false").reason == f"{UNMAPPED}: really_false"


def test_a_sentence_or_no_wording_is_read_from_its_scale_ends_only():
    sentence = "This photo shows a slave trader in Africa, not the sultan"
    assert map_site_rating(sentence, value="1", best="5", worst="1").label is Label.FALSE
    assert map_site_rating(None, value=5, best=5, worst=1).label is Label.TRUE
    assert map_site_rating(sentence, value="3", best="5", worst="1").label is None  # the middle: no guess
    # 20 Minutes' "-1" on a -1..-1 scale is no range
    assert scale_label("-1", "-1", "-1") is None
    # a short wording no table knows is never read from its number
    assert map_site_rating("Pas clair", value="1", best="5", worst="1").reason == f"{UNMAPPED}: Pas clair"
    assert map_site_rating(None).reason == UNRATED


def test_satire_is_excluded_in_any_language_and_snopes_is_unchanged():
    assert map_site_rating("Sátira", language="es").reason == "satire is not a factual-accuracy rating"
    assert map_rating("Mostly False").label is Label.MIXTURE
    with pytest.raises(UnknownRatingError):
        map_rating("Falso")  # the Snopes table knows only Snopes' words
