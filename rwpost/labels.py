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
from collections.abc import Mapping as Mapping_
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


# --- every other fact-checker: per-language wording tables, a publisher's own table, the rating scale ---

SITE_TABLES_VERSION = "1"
"""Version of the tables below and of how :func:`map_site_rating` uses them; bump on any change (the
dataset card names it)."""

LANGUAGE_TABLES: dict[str, dict[Label, tuple[str, ...]]] = {
    # Table II's own words first; "misleading" and its translations are Mixture (a real item presented so
    # that it misleads: partly accurate), "incorrect" and its translations False.
    "en": {
        Label.FALSE: _TABLE[Label.FALSE] + ("incorrect", "wrong", "fabricated", "altered", "pants on fire"),
        Label.MIXTURE: _TABLE[Label.MIXTURE]
        + ("misleading", "half true", "partly false", "partly true", "missing context", "exaggerated"),
        Label.TRUE: _TABLE[Label.TRUE] + ("correct", "accurate"),
        Label.UNPROVEN: _TABLE[Label.UNPROVEN] + ("unverified", "no evidence", "insufficient evidence"),
        Label.OUTDATED: _TABLE[Label.OUTDATED],
    },
    "es": {
        Label.FALSE: ("falso", "falsa", "bulo", "montaje", "incorrecto"),
        Label.MIXTURE: (
            "engañoso",
            "engañosa",
            "verdad a medias",
            "medio verdadero",
            "mayormente falso",
            "parcialmente falso",
            "sacado de contexto",
            "impreciso",
            "exagerado",
        ),
        Label.TRUE: ("verdadero", "verdadera", "cierto", "correcto"),
        Label.UNPROVEN: ("sin evidencia", "no verificable", "inverificable", "sin pruebas"),
    },
    "pt": {
        Label.FALSE: ("falso", "falsa", "montagem"),
        Label.MIXTURE: (
            "enganoso",
            "enganosa",
            "distorcido",
            "impreciso",
            "exagerado",
            "parcialmente falso",
            "fora de contexto",
        ),
        Label.TRUE: ("verdadeiro", "verdadeira", "correto"),
        Label.UNPROVEN: ("sem evidências", "sem provas", "insustentável"),
    },
    "fr": {
        Label.FALSE: ("faux", "fausse", "infox", "montage"),
        Label.MIXTURE: ("trompeur", "trompeuse", "partiellement faux", "manque de contexte", "exagéré"),
        Label.TRUE: ("vrai", "vraie"),
        Label.UNPROVEN: ("invérifiable", "non prouvé", "infondé"),
    },
    "de": {
        Label.FALSE: ("falsch", "fälschung", "erfunden"),
        Label.MIXTURE: ("irreführend", "teilweise falsch", "fehlender kontext", "größtenteils falsch"),
        Label.TRUE: ("richtig", "wahr", "stimmt"),
        Label.UNPROVEN: ("unbelegt", "unbewiesen"),
    },
    "hi": {
        Label.FALSE: ("गलत", "ग़लत", "फर्जी", "फ़र्ज़ी", "झूठ", "झूठा"),
        Label.MIXTURE: ("भ्रामक", "आधा सच"),
        Label.TRUE: ("सच", "सही"),
    },
    "bn": {
        Label.FALSE: ("মিথ্যা", "ভুয়ো", "ভুল"),
        Label.MIXTURE: ("বিভ্রান্তিকর",),
        Label.TRUE: ("সত্য",),
    },
    "zh-Hant": {
        Label.FALSE: ("錯誤",),
        Label.MIXTURE: ("部分錯誤", "易生誤解"),
        Label.TRUE: ("正確",),
        Label.UNPROVEN: ("證據不足",),
    },
    "zh-Hans": {
        Label.FALSE: ("错误",),
        Label.MIXTURE: ("部分错误", "易生误解"),
        Label.TRUE: ("正确",),
        Label.UNPROVEN: ("证据不足",),
    },
    "id": {
        Label.FALSE: ("keliru", "salah", "hoaks"),
        Label.MIXTURE: ("menyesatkan", "sebagian benar"),
        Label.TRUE: ("benar",),
        Label.UNPROVEN: ("tidak terbukti",),
    },
    "tl": {
        Label.FALSE: ("mali", "peke"),
        Label.MIXTURE: ("nakaliligaw", "nakalilinlang"),
        Label.TRUE: ("totoo", "tama"),
    },
}
"""The usual rating wordings of fact-checkers, by the language they are written in (ISO 639-1; Chinese by
script). A publisher's own wordings go in its ``ratings`` table in sites.yaml, which is tried first."""

EXCLUDED_WORDS: dict[str, str] = {
    **_EXCLUDED,
    "sátira": "satire is not a factual-accuracy rating",
    "satira": "satire is not a factual-accuracy rating",
}
"""Non-factual ratings in any language: excluded with their reason (paper III-B.1)."""

SENTENCE_WORDS = 4
"""A rating wording with more words than this is a sentence (AFP Hindi writes its finding there), read
from ``ratingValue`` on its scale instead."""

EXCLUDED_TARGET = "excluded"
"""What a publisher's table (sites.yaml or the reviewed rating table) maps a non-factual rating to."""
REVIEWED_EXCLUSION = "not a factual-accuracy rating (the publisher's rating table)"
"""The reason of a rating a publisher's table excludes."""

UNMAPPED = "unmapped-rating"
"""The reason prefix of a rating no table maps (``rwpost labels --unknown`` lists them)."""


@dataclass(frozen=True)
class SiteMapping:
    """Outcome of mapping one publisher's rating: a label and which table gave it, or why none."""

    rating: str
    label: Label | None
    via: str | None = None
    """``site``, ``language:<code>`` or ``scale``: where the label came from."""
    reason: str | None = None

    @property
    def mapped(self) -> bool:
        return self.label is not None


def _language_lookup() -> dict[str, dict[str, Label]]:
    return {
        language: {normalize_rating(word): label for label, words in table.items() for word in words}
        for language, table in LANGUAGE_TABLES.items()
    }


_BY_LANGUAGE = _language_lookup()


def _number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def scale_label(value: object, best: object, worst: object) -> Label | None:
    """The label of ``ratingValue`` at an end of its ``worstRating..bestRating`` scale (schema.org's
    defaults 1 and 5 where a bound is missing or empty): False at the worst, True at the best; None in
    between or on a scale that is no range."""
    number, high, low = _number(value), _number(best), _number(worst)
    high = 5.0 if high is None else high
    low = 1.0 if low is None else low
    if number is None or high <= low or not low <= number <= high:
        return None
    if number == low:
        return Label.FALSE
    if number == high:
        return Label.TRUE
    return None


def map_site_rating(
    rating: str | None,
    *,
    language: str | None = None,
    site_table: Mapping_[str, str] | None = None,
    value: object = None,
    best: object = None,
    worst: object = None,
) -> SiteMapping:
    """Map a publisher's rating to an RW-Post label: its own table (sites.yaml), then the table of the
    page's language, then every other language's (a wording such as "False" on a Hindi page), all by
    :func:`normalize_rating`; a missing wording or a sentence is read from ``value`` on its scale
    (:func:`scale_label`). Anything else is unmapped, with the reason, never guessed."""
    words = rating or ""
    key = normalize_rating(words)
    for word, target in (site_table or {}).items():
        if normalize_rating(word) == key and key:
            if target == EXCLUDED_TARGET:
                return SiteMapping(rating=words, label=None, reason=REVIEWED_EXCLUSION)
            return SiteMapping(rating=words, label=Label(target), via="site")
    if key in EXCLUDED_WORDS:
        return SiteMapping(rating=words, label=None, reason=EXCLUDED_WORDS[key])
    order = [language] if language in _BY_LANGUAGE else []
    order += [code for code in _BY_LANGUAGE if code not in order]
    for code in order:
        label = _BY_LANGUAGE[code].get(key)
        if label is not None:
            return SiteMapping(rating=words, label=label, via=f"language:{code}")
    if not key or len(key.split()) > SENTENCE_WORDS:
        label = scale_label(value, best, worst)
        if label is not None:
            return SiteMapping(rating=words, label=label, via="scale")
    if not key and _number(value) is None:
        return SiteMapping(rating=words, label=None, reason=UNRATED)
    return SiteMapping(rating=words, label=None, reason=f"{UNMAPPED}: {words.strip() or value}")


def site_ratings_known() -> dict[str, dict[str, str]]:
    """Every language table's wordings and labels, for ``rwpost labels`` and the card."""
    return {code: dict(sorted((k, str(v)) for k, v in table.items())) for code, table in _BY_LANGUAGE.items()}
