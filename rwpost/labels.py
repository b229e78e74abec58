"""Snopes rating -> RW-Post label (paper Table II).

The paper consolidates Snopes' fine-grained ratings into five labels and excludes ratings that are not
about factual accuracy (satire and the like). Matching ignores case, spacing, hyphens, underscores and
trailing punctuation, so "Mostly  False", "mostly-false" and "MOSTLY_FALSE" are one rating. Snopes'
later names of Table II ratings are documented aliases of their rows (:data:`ALIASES`); "No Rating" and a
missing rating map to no label with the reason ``unrated``. An unknown rating raises
:class:`UnknownRatingError`; it is never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from rwpost.errors import UnknownRatingError


class Label(StrEnum):
    """The five RW-Post labels (paper Table II)."""

    TRUE = "True"
    FALSE = "False"
    UNPROVEN = "Unproven"
    MIXTURE = "Mixture"
    OUTDATED = "Outdated"


MAIN_LABELS: tuple[Label, ...] = (Label.TRUE, Label.FALSE, Label.UNPROVEN)
"""Labels of the main set (paper section III-E)."""
CHALLENGING_LABELS: tuple[Label, ...] = (Label.MIXTURE, Label.OUTDATED)
"""Labels of the challenging set (paper section III-E: 218 Mixture and Outdated samples)."""

# Paper Table II, verbatim; normalize_rating() absorbs case, spacing and punctuation variants.
_TABLE: dict[Label, tuple[str, ...]] = {
    Label.FALSE: (
        "false",
        "miscaption",
        "miscaptioned",
        "fake",
        "legend",
        "scam",
        "misattributed",
    ),
    Label.MIXTURE: ("mostly false", "mixture", "mostly true"),
    Label.OUTDATED: ("outdated",),
    Label.TRUE: ("true", "correct attribution", "legit"),
    Label.UNPROVEN: ("unfounded", "unproven", "research in progress"),
}

# Ratings that are not about factual accuracy: excluded from RW-Post with a reason (paper III-B.1).
_EXCLUDED: dict[str, str] = {
    "satire": "satire is not a factual-accuracy rating",
    "labeled satire": "labeled satire is not a factual-accuracy rating",
    "originated as satire": "originated as satire is not a factual-accuracy rating",
    "lost legend": "lost legend marks a retired legend, not a factual-accuracy rating",
    "recall": "a product recall notice, not a factual-accuracy rating",
}


ALIASES: dict[str, tuple[str, str]] = {
    "incorrect attribution": (
        "misattributed",
        "Snopes' name for Misattributed since 2025 (44 of 1,191 rated fact-checks of January-July 2025, "
        "and no Misattributed in that period)",
    ),
    "unproven (retired)": ("unproven", "how the live site now lists older Unproven articles"),
}
"""Later Snopes wordings of a Table II rating: ``alias -> (Table II rating, why)``."""

UNRATED = "unrated"
"""The reason of a page without a factual rating: "No Rating" (a 2017-18 class) or no rating at all."""
_UNRATED_WORDS = frozenset({"", "no rating", "not rated", "unrated"})


@dataclass(frozen=True)
class Mapping:
    """Outcome of mapping one rating: a label, or an exclusion with its reason."""

    rating: str
    label: Label | None
    excluded_reason: str | None = None
    alias_of: str | None = None
    """The Table II rating this one is a later name of (see :data:`ALIASES`), if it is an alias."""

    @property
    def excluded(self) -> bool:
        return self.label is None


def normalize_rating(rating: str) -> str:
    """Canonical key of a rating: lower case, single spaces, no hyphens, underscores or end punctuation."""
    text = re.sub(r"[-_/]+", " ", str(rating).strip().lower())
    text = re.sub(r"[.!:;\"'`]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


_LOOKUP: dict[str, Label] = {normalize_rating(r): label for label, ratings in _TABLE.items() for r in ratings}


def map_rating(rating: str | None) -> Mapping:
    """Map a Snopes rating to its RW-Post label, or to an explicit exclusion (paper Table II).

    ``None``, an empty rating and "No Rating" give no label with the reason :data:`UNRATED`.
    """
    key = normalize_rating(rating or "")
    if key in _UNRATED_WORDS:
        return Mapping(rating=rating or "", label=None, excluded_reason=UNRATED)
    if key in ALIASES:
        target = ALIASES[key][0]
        return Mapping(rating=rating or "", label=_LOOKUP[target], alias_of=target)
    if key in _LOOKUP:
        return Mapping(rating=rating, label=_LOOKUP[key])
    if key in _EXCLUDED:
        return Mapping(rating=rating, label=None, excluded_reason=_EXCLUDED[key])
    raise UnknownRatingError(
        f"unknown Snopes rating {rating!r}: add it to rwpost/labels.py (paper Table II) rather than guess"
    )


def known_ratings() -> dict[str, str]:
    """Every known rating key and what it maps to (a label or 'excluded'), for docs and the dataset card."""
    out = {k: str(v) for k, v in _LOOKUP.items()}
    out.update({k: f"{_LOOKUP[target]} (alias of {target!r})" for k, (target, _why) in ALIASES.items()})
    out.update({k: "excluded" for k in _EXCLUDED})
    out["no rating"] = UNRATED
    return dict(sorted(out.items()))


def subset_of(label: Label) -> str:
    """The RW-Post set a label belongs to: ``main`` or ``challenging``."""
    return "main" if label in MAIN_LABELS else "challenging"
