"""Fact-check label keywords in OCR text (paper Table S1), tolerant to OCR noise, strict about words.

Matching rules (each one is a decision, tested in ``tests/test_filters_keywords.py``):

* **Vocabulary**: Table S1's list, plus the Snopes rating spelling ``miscaption`` (paper Table II).
  ``April Fools' Day`` needs the word *day* ("April fool" alone is ordinary speech), in any apostrophe form.
* **Case, spacing, punctuation**: case-insensitive; apostrophes dropped; letter-spaced words
  (``F A K E``) are joined; a phrase may be written as one token (``MOSTLYFALSE``, within one edit:
  ``MoatlyFalse``), with a space lost (``April Fools'Day``) or across a line break. A one-word
  keyword split by OCR (``FAL SE``) is joined only from short pieces and only exactly.
* **OCR noise**: inside tokens that contain letters, ``0->o 1->l|i 5->s 3->e 4->a 7->t 8->b | $ @`` are
  mapped back; then a token may differ from a keyword by an edit distance of 1 (keywords of 5 to 8
  letters) or 2 (9 letters or more). Four-letter keywords (``fake``, ``scam``) must match exactly:
  ``face``, ``fame``, ``lake``, ``scan``, ``scar`` are all one edit away. A word cut off at the image
  edge counts within the same limit if at least 4 letters remain (``Imag``, ``fals``).
* **Whole words only**: a token that merely contains a keyword is another word and never matches:
  ``fakes``, ``faked``, ``falsehood``, ``falsely``, ``scampi``, ``scams``, ``satirical``, ``mixtures``,
  ``outdatedness``, ``unfake``. Inflections are out on purpose: a fact-check stamp is the bare label,
  while "fakes" and "faked" are how posts talk. Fuzzy matches also never accept a real English word
  one edit away (:data:`NEAR_WORDS`: ``misreading``, ``fixture``, ``unproved``, ...).

Each match carries how it was found (``exact``/``ocr_map``/``fuzzy``/``joined``), its edit distance,
whether it is upper case and whether it is *isolated* (the keyword makes up most of its OCR line, as a
stamp or banner does), so thresholds in params decide which matches count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

KEYWORDS: tuple[str, ...] = (
    "fake",
    "false",
    "altered",
    "misleading",
    "miscaptioned",
    "miscaption",
    "scam",
    "satire",
    "outdated",
    "unproven",
    "mixture",
    "correct attribution",
    "mostly false",
    "mostly true",
    "misattributed",
    "composite image",
    "no evidence",
    "april fools day",
    "april fool day",
)
"""Table S1's watermark vocabulary in normalised form (lower case, no apostrophes); see module doc."""

CANONICAL: dict[str, str] = {"miscaption": "miscaptioned", "april fool day": "april fools day"}
"""Spelling variants reported under one keyword."""

NEAR_WORDS: frozenset[str] = frozenset(
    {
        # real English words within the fuzzy distance of a keyword: never a fuzzy match
        "falsie",
        "valse",
        "falsies",
        "misreading",
        "misleads",
        "fixture",
        "mixtures",
        "unproved",
        "unwoven",
        "altares",
        "alterer",
        "outdates",
        "outdone",
        "saturn",
        "satires",
        "mostly",
        "costly",
        "ghostly",
        "trued",
        "truce",
        "trues",
        "image",
        "imago",
        "images",
        "imaged",
        "evidenced",
        "evident",
        "correcting",
        "corrects",
        "corrector",
        "attributions",
        "composites",
        "compositive",
        "apron",
        "fools",
        "tools",
        "pools",
        "days",
    }
)

LABEL_CONTEXT: frozenset[str] = frozenset(
    {"fact", "check", "checked", "factcheck", "checkers", "rating", "rated", "verdict", "snopes", "label"}
    | {"information", "partly", "independent", "missing", "context"}  # Meta's overlays ("False information")
)
"""Words that sit beside a label on a stamp ("FACT CHECK: FALSE"); they count as label for isolation."""

ISOLATION_SHARE = 0.6
"""A match is *isolated* when label and label-context letters make up this share of its OCR line."""

_OCR_MAP = str.maketrans(
    {"0": "o", "1": "l", "|": "l", "5": "s", "$": "s", "3": "e", "4": "a", "@": "a", "7": "t", "8": "b"}
)
_TOKEN = re.compile(r"[A-Za-z0-9|$@]+")
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc`\u00b4]")


@dataclass(frozen=True)
class Match:
    """One keyword found in OCR text."""

    keyword: str
    found: str
    how: str
    distance: int
    line: int
    isolated: bool
    upper: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class _Token:
    raw: str
    norm: str
    line: int
    how: str  # "exact" | "ocr_map" | "joined"


def _max_distance(keyword_word: str) -> int:
    """Edit distance allowed for one keyword word: 0 up to 4 letters, 1 up to 8, else 2."""
    if len(keyword_word) <= 4:
        return 0
    return 1 if len(keyword_word) <= 8 else 2


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` as soon as it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def normalise_text(text: str) -> str:
    """NFKC, apostrophes removed (``Fools'`` -> ``Fools``, ``don't`` -> ``dont``)."""
    return _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text or ""))


def _variants(raw: str) -> list[tuple[str, str]]:
    """(normalised token, how) pairs: the token itself and its OCR-confusion readings."""
    low = raw.lower()
    if not any(c.isalpha() for c in low):
        return [(low, "exact")]  # numbers and dates stay numbers
    out = [(low, "exact")] if low.isalpha() else []
    mapped = low.translate(_OCR_MAP)
    if mapped != low or not out:
        out.append((mapped, "ocr_map"))
        if "1" in low or "|" in low:
            out.append((low.replace("1", "i").replace("|", "i").translate(_OCR_MAP), "ocr_map"))
    return out


def _token_groups(text: str) -> list[list[_Token]]:
    """One group per raw token (its readings), in reading order; letter-spaced runs (``F A K E``) joined."""
    groups: list[list[_Token]] = []
    for number, line in enumerate(normalise_text(text).splitlines()):
        merged: list[str] = []
        run: list[str] = []
        for tok in [*_TOKEN.findall(line), ""]:  # "" flushes the last run
            if len(tok) == 1 and tok.isalpha():
                run.append(tok)
                continue
            merged.extend(["".join(run)] if len(run) >= 3 else run)
            run = []
            if tok:
                merged.append(tok)
        groups.extend(
            [_Token(raw=t, norm=v, line=number, how=how) for v, how in _variants(t)] for t in merged
        )
    return groups


def _is_context(token: str) -> bool:
    """True for label-context words, also run together by OCR (``Snopesrating``, ``FACTCHECK``)."""
    if token in LABEL_CONTEXT:
        return True
    reachable = [True] + [False] * len(token)
    for end in range(1, len(token) + 1):
        reachable[end] = any(reachable[begin] and token[begin:end] in LABEL_CONTEXT for begin in range(end))
    return len(token) > 0 and reachable[-1]


def _word_match(token: str, word: str) -> int | None:
    """Edit distance if ``token`` reads as keyword word ``word`` under the rules, else None."""
    if token == word:
        return 0
    limit = _max_distance(word)
    if limit == 0 or token in NEAR_WORDS:
        return None
    if token.startswith(word):
        return None  # a derivative (fakes, falsehood, satirical), not the label
    if word.startswith(token) and len(token) < 4:
        return None  # too little left of a cut-off word ("fal", "mis")
    distance = edit_distance(token, word, limit)
    return distance if distance <= limit else None


def find_keywords(text: str, keywords: Iterable[str] = KEYWORDS) -> list[Match]:
    """Every keyword reading of ``text`` (all tolerances; callers filter by distance and isolation)."""
    stream = _token_groups(text)
    letters_per_line: dict[int, int] = {}
    context_per_line: dict[int, int] = {}
    for group in stream:
        line = group[0].line
        letters_per_line[line] = letters_per_line.get(line, 0) + sum(c.isalnum() for c in group[0].raw)
        if _is_context(group[0].raw.lower()):
            context_per_line[line] = context_per_line.get(line, 0) + len(group[0].raw)
    matches: dict[tuple[str, int], Match] = {}
    for keyword in keywords:
        words = keyword.split()
        joined = "".join(words)
        for start in range(len(stream)):
            best = _match_at(stream, start, words, joined)
            if best is None:
                continue
            distance, how, used = best
            raw = " ".join(group[0].raw for group in used)
            line = used[0][0].line
            kw_letters = sum(c.isalnum() for c in raw)
            found = Match(
                keyword=CANONICAL.get(keyword, keyword),
                found=raw,
                how=how,
                distance=distance,
                line=line,
                isolated=kw_letters + context_per_line.get(line, 0)
                >= ISOLATION_SHARE * max(1, letters_per_line.get(line, kw_letters)),
                upper=raw.upper() == raw and any(c.isalpha() for c in raw),
            )
            key = (found.keyword, start)
            if key not in matches or matches[key].distance > distance:
                matches[key] = found
    return sorted(matches.values(), key=lambda m: (m.line, m.keyword))


def _match_at(
    stream: list[list[_Token]], start: int, words: list[str], joined: str
) -> tuple[int, str, list[list[_Token]]] | None:
    """Match keyword ``words`` at token ``start``: word by word, or as one joined token."""
    best: tuple[int, str, list[list[_Token]]] | None = None
    # word by word
    if start + len(words) <= len(stream):
        total, how = 0, "exact"
        used = stream[start : start + len(words)]
        for group, word in zip(used, words, strict=True):
            candidates = [(d, tok.how) for tok in group if (d := _word_match(tok.norm, word)) is not None]
            if not candidates:
                total = -1
                break
            d, tok_how = min(candidates)
            total += d
            if d:
                how = "fuzzy"
            elif tok_how != "exact" and how == "exact":
                how = tok_how
        if total >= 0:
            best = (total, how, used)
    if best is not None and best[0] == 0:
        return best
    joined_match = _joined_at(stream, start, words, joined)
    if joined_match is not None and (best is None or joined_match[0] < best[0]):
        return joined_match
    return best


def _joined_at(
    stream: list[list[_Token]], start: int, words: list[str], joined: str
) -> tuple[int, str, list[list[_Token]]] | None:
    """A keyword whose spaces OCR lost or added: ``MOSTLYFALSE``, ``April FoolsDay``, ``FAL SE``.

    The readings of 1 to ``len(words) + 1`` consecutive tokens on one line are concatenated and compared
    with the keyword without spaces: exactly for a one-word keyword (whose pieces must be short, so two
    ordinary words never join into a label), within one or two edits for a phrase.
    """
    # one edit for a run-together phrase (two from 12 letters), and never a dropped first letter:
    # "evidence" alone must not read as "no evidence"
    limit = (1 if len(joined) < 12 else 2) if len(words) > 1 else 0
    best: tuple[int, str, list[list[_Token]]] | None = None
    for count in range(1, len(words) + 2):
        group = stream[start : start + count]
        if len(group) < count or len({g[0].line for g in group}) > 1:
            break
        if len(words) == 1 and (count == 1 or any(len(g[0].raw) > 4 for g in group)):
            continue
        if count == len(words) and len(words) > 1:
            continue  # the word-by-word reading already covers this split
        for text in _concatenations(group):
            if (
                text in NEAR_WORDS
                or (len(text) > len(joined) and text.startswith(joined))
                or text[:1] != joined[:1]
            ):
                continue
            distance = 0 if text == joined else edit_distance(text, joined, limit)
            if distance <= limit and (best is None or distance < best[0]):
                best = (distance, "joined", group)
    return best


def _concatenations(group: list[list[_Token]]) -> Iterator[str]:
    """Every concatenation of one reading per token (at most a few: tokens have 1 to 3 readings)."""
    texts = [""]
    for readings in group:
        texts = [t + r.norm for t in texts for r in readings][:27]
    yield from texts


def matched_keywords(
    matches: Iterable[Match], *, max_distance: int = 2, require_isolated: bool = False
) -> list[Match]:
    """The matches that count under the given thresholds."""
    return [m for m in matches if m.distance <= max_distance and (m.isolated or not require_isolated)]
