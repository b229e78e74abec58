"""Table S1 keyword matching: tolerant to OCR noise, strict about ordinary words (rules in keywords.py)."""

from __future__ import annotations

import pytest

from rwpost.filters.keywords import find_keywords, matched_keywords


def keywords_in(text: str, **thresholds) -> set[str]:
    return {m.keyword for m in matched_keywords(find_keywords(text), **thresholds)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FALSE", {"false"}),
        ("fact check: false", {"false"}),
        ("MISLEADING", {"misleading"}),
        ("Miscaptioned", {"miscaptioned"}),
        ("MISCAPTION", {"miscaptioned"}),  # the Snopes rating spelling (Table II)
        ("SATIRE", {"satire"}),
        ("SCAM!", {"scam"}),
        ("OUTDATED", {"outdated"}),
        ("UNPROVEN", {"unproven"}),
        ("MIXTURE", {"mixture"}),
        ("ALTERED", {"altered"}),
        ("MISATTRIBUTED", {"misattributed"}),
        ("CORRECT ATTRIBUTION", {"correct attribution"}),
        ("MOSTLY TRUE", {"mostly true"}),
        ("MOSTLY FALSE", {"mostly false", "false"}),
        ("COMPOSITE IMAGE", {"composite image"}),
        ("NO EVIDENCE", {"no evidence"}),
        ("April Fools’ Day", {"april fools day"}),
        ("APRIL FOOL'S DAY", {"april fools day"}),
    ],
)
def test_every_table_s1_keyword_is_found(text: str, expected: set[str]) -> None:
    assert keywords_in(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("F A K E", {"fake"}),  # letter-spaced stamp
        ("F4KE", {"fake"}),  # 4 read for A
        ("FA1SE", {"false"}),  # 1 read for L
        ("M1SLEADING", {"misleading"}),  # 1 read for I
        ("SATlRE", {"satire"}),  # l read for I: one edit
        ("ALTERD", {"altered"}),  # a dropped letter
        ("MISCAPTONED", {"miscaptioned"}),
        ("MOSTLYFALSE", {"mostly false"}),  # phrase run together
        ("MOSTLY\nFALSE", {"mostly false", "false"}),  # phrase across a line break
        ("FAL SE", {"false"}),  # word split by OCR
        ("fAkE", {"fake"}),
        ("MoatlyFalse", {"mostly false"}),  # run together and one letter misread
        ("April Fools'Day", {"april fools day"}),  # space lost after the apostrophe
        ("Rating: Composite Imag", {"composite image"}),  # last letter cut off at the image edge
        ("Snopesrating:SATIRE", {"satire"}),
        ("  Unproven  ", {"unproven"}),
    ],
)
def test_ocr_noise_case_and_spacing_are_tolerated(text: str, expected: set[str]) -> None:
    assert keywords_in(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "He fakes it and faked it",  # inflections of fake are how posts talk, not labels
        "a falsehood, falsely told",
        "scampi and scams",
        "satirical",
        "outdatedness",
        "mixtures",
        "the misreading of a fixture",  # one edit from misleading / mixture, but real words
        "unproved",
        "face fame lake make take cake scan scar",  # one edit from fake / scam
        "April 15, 2022",  # a date, not April Fools' Day
        "April fool",  # 'day' is required
        "mostly sunny and true",
        "There is evidence",  # 'evidence' alone is not 'no evidence'
        "the alter ego",  # 'alter' is two edits short of 'altered'
        "fal mis sca",  # too little left of a cut-off word
        "",
    ],
)
def test_ordinary_words_do_not_fire(text: str) -> None:
    assert keywords_in(text) == set()


def test_thresholds_decide_which_matches_count() -> None:
    assert keywords_in("SATlRE", max_distance=0) == set()
    assert keywords_in("SATlRE", max_distance=1) == {"satire"}
    # a keyword inside an ordinary sentence is found, but it is not isolated like a stamp
    sentence = "Independent fact-checkers say this information is false and you should read more about it"
    assert keywords_in(sentence) == {"false"}
    assert keywords_in(sentence, require_isolated=True) == set()
    assert keywords_in("Some caption here\nFALSE", require_isolated=True) == {"false"}
    assert keywords_in("FACT CHECK: FALSE", require_isolated=True) == {"false"}
    assert keywords_in("Snopesrating:MostlyFalse", require_isolated=True) == {"mostly false"}
    overlay = "False information\nChecked by independent fact-checkers"  # a Meta-style overlay
    assert keywords_in(overlay, require_isolated=True) == {"false"}


def test_match_records_how_it_was_read() -> None:
    (match,) = find_keywords("Caption text of the post\nF4KE")
    assert (match.keyword, match.found, match.how, match.line, match.isolated, match.upper) == (
        "fake",
        "F4KE",
        "ocr_map",
        1,
        True,
        True,
    )
