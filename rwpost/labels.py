"""Snopes rating -> RW-Post label (paper Table II).

The paper consolidates Snopes' fine-grained ratings into five labels and excludes ratings that are not
about factual accuracy (satire and the like). Matching ignores case, spacing, hyphens, underscores and
trailing punctuation, so "Mostly  False", "mostly-false" and "MOSTLY_FALSE" are one rating. An unknown
rating raises :class:`UnknownRatingError`; it is never guessed.
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


@dataclass(frozen=True)
class Mapping:
    """Outcome of mapping one rating: a label, or an exclusion with its reason."""

    rating: str
    label: Label | None
    excluded_reason: str | None = None

    @property
    def excluded(self) -> bool:
        return self.label is None


def normalize_rating(rating: str) -> str:
    """Canonical key of a rating: lower case, single spaces, no hyphens, underscores or end punctuation."""
    text = re.sub(r"[-_/]+", " ", str(rating).strip().lower())
    text = re.sub(r"[.!:;\"'`]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


_LOOKUP: dict[str, Label] = {normalize_rating(r): label for label, ratings in _TABLE.items() for r in ratings}


def map_rating(rating: str) -> Mapping:
    """Map a Snopes rating to its RW-Post label, or to an explicit exclusion (paper Table II)."""
    key = normalize_rating(rating)
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
    out.update({k: "excluded" for k in _EXCLUDED})
    return dict(sorted(out.items()))


def subset_of(label: Label) -> str:
    """The RW-Post set a label belongs to: ``main`` or ``challenging``."""
    return "main" if label in MAIN_LABELS else "challenging"
