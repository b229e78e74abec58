"""Paper Table II mapping, spelling tolerance, exclusions and unknown ratings."""

import pytest

from rwpost.errors import UnknownRatingError
from rwpost.labels import UNRATED, Label, known_ratings, map_rating, normalize_rating, subset_of

TABLE_II = {
    Label.FALSE: ["FALSE", "MISCAPTION", "MISCAPTIONED", "FAKE", "LEGEND", "SCAM", "MISATTRIBUTED"],
    Label.MIXTURE: ["MOSTLY FALSE", "MIXTURE", "MOSTLY TRUE"],
    Label.OUTDATED: ["OUTDATED"],
    Label.TRUE: ["TRUE", "CORRECT ATTRIBUTION", "LEGIT"],
    Label.UNPROVEN: ["UNFOUNDED", "UNPROVEN", "RESEARCH IN PROGRESS"],
}


@pytest.mark.parametrize("label,rating", [(lab, r) for lab, rs in TABLE_II.items() for r in rs])
def test_every_table_ii_rating_maps_to_its_label(label, rating):
    assert map_rating(rating).label is label


@pytest.mark.parametrize(
    "spelling,label",
    [
        ("Mostly  False", Label.MIXTURE),
        ("mostly-false", Label.MIXTURE),
        ("MOSTLY_TRUE", Label.MIXTURE),
        (" Correct Attribution ", Label.TRUE),
        ("Research In Progress", Label.UNPROVEN),
        ("Miscaptioned.", Label.FALSE),
        ("fake", Label.FALSE),
    ],
)
def test_case_spacing_and_punctuation_do_not_matter(spelling, label):
    assert map_rating(spelling).label is label


@pytest.mark.parametrize("rating", ["Satire", "Labeled Satire", "Originated as Satire", "Lost Legend"])
def test_non_accuracy_ratings_are_excluded_with_a_reason(rating):
    mapping = map_rating(rating)
    assert mapping.excluded and mapping.label is None
    assert "satire" in mapping.excluded_reason or "legend" in mapping.excluded_reason


@pytest.mark.parametrize(
    ("rating", "table_row", "label"),
    [
        ("Incorrect Attribution", "misattributed", Label.FALSE),
        ("incorrect-attribution", "misattributed", Label.FALSE),
        ("Unproven (retired)", "unproven", Label.UNPROVEN),
    ],
)
def test_later_snopes_wordings_are_documented_aliases_of_their_table_ii_row(rating, table_row, label):
    mapping = map_rating(rating)
    assert mapping.label is label and mapping.alias_of == table_row and not mapping.excluded
    assert f"alias of {table_row!r}" in known_ratings()[normalize_rating(rating)]


@pytest.mark.parametrize("rating", ["No Rating", "no-rating", "", None])
def test_no_rating_and_missing_rating_are_unrated_not_errors(rating):
    mapping = map_rating(rating)
    assert mapping.label is None and mapping.excluded_reason == UNRATED


@pytest.mark.parametrize("rating", ["Pants on Fire", "partly true", "Sorta Kinda"])
def test_unknown_rating_is_reported_not_guessed(rating):
    with pytest.raises(UnknownRatingError, match="unknown Snopes rating"):
        map_rating(rating)


def test_subsets_follow_the_paper():
    assert {subset_of(lab) for lab in (Label.TRUE, Label.FALSE, Label.UNPROVEN)} == {"main"}
    assert {subset_of(lab) for lab in (Label.MIXTURE, Label.OUTDATED)} == {"challenging"}
