"""schema.org ClaimReview from any page: JSON-LD, microdata and RDFa (extruct), into one flat shape.

JSON-LD is read script by script (``json.loads(strict=False)``, then extruct's own comment stripping,
then :mod:`json_repair` for truncated or hand-written JSON), ``@graph`` lists and nested lists flattened,
``@type`` a string or an array (``["Review", "ClaimReview"]``). Microdata and RDFa go through extruct
only when the page's markup names ClaimReview (their extractors are slower than the JSON-LD scripts).
Values are kept as the page gives them (``"1"`` and ``1`` stay apart, a trailing ``\\r`` stays), so a
record can be compared with the page byte for byte; :func:`clean` is for display.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from rwpost.records import ClaimReviewFacts
from rwpost.snopes.select import Node

_JSONLD = etree.XPath('//script[@type="application/ld+json"]', smart_strings=False)
_COMMENT_LINE = re.compile(r"^\s*(//.*|<!--.*-->)", re.MULTILINE)
_SCHEMA_PREFIX = re.compile(r"^https?://schema\.org/")

ARTICLE_TYPES = frozenset(
    {"Article", "NewsArticle", "ReportageNewsArticle", "AnalysisNewsArticle", "BlogPosting", "Report"}
)
"""schema.org types of an article's own metadata (the fallback of a page without ClaimReview)."""


@dataclass
class JsonLd:
    """The JSON-LD objects of one page, and the scripts that needed repair or could not be read."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    repaired: int = 0
    unreadable: list[str] = field(default_factory=list)


def _load_script(text: str) -> tuple[Any, bool]:
    """One script's JSON and whether it had to be repaired; raises ValueError when nothing could be read."""
    try:
        return json.loads(text, strict=False), False
    except ValueError:
        pass
    stripped = _COMMENT_LINE.sub("", text).strip()
    try:
        import jstyleson  # extruct's own fallback: comments and trailing commas

        return jstyleson.loads(stripped, strict=False), True
    except ValueError:
        pass
    import json_repair

    data = json_repair.loads(stripped)
    if data in ("", None, [], {}):
        raise ValueError("not JSON, and nothing could be repaired")
    return data, True


def jsonld(page: Node) -> JsonLd:
    """Every JSON-LD object of the page in document order, ``@graph`` and nested lists flattened."""
    out = JsonLd()
    for index, script in enumerate(_JSONLD(page), start=1):
        text = script.xpath("string()")
        if not text.strip():
            continue
        try:
            data, repaired = _load_script(text)
        except ValueError as exc:
            out.unreadable.append(f"JSON-LD script {index}: {exc}")
            continue
        out.repaired += repaired
        stack = [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, list):
                stack[:0] = item
            elif isinstance(item, dict):
                graph = item.get("@graph")
                if isinstance(graph, list | dict):
                    rest = {k: v for k, v in item.items() if k != "@graph"}
                    if set(rest) - {"@context", "@id"}:
                        out.objects.append(rest)
                    stack[:0] = graph if isinstance(graph, list) else [graph]
                else:
                    out.objects.append(item)
    return out


def types_of(obj: dict[str, Any]) -> set[str]:
    """The schema.org type names of an object (``@type`` a string or an array, prefixes dropped)."""
    kind = obj.get("@type", obj.get("type"))
    kinds = kind if isinstance(kind, list) else [kind]
    return {_SCHEMA_PREFIX.sub("", k) for k in kinds if isinstance(k, str)}


def _nodes_by_id(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["@id"]: o for o in objects if isinstance(o.get("@id"), str) and len(o) > 1}


def _resolve(value: Any, nodes: dict[str, dict[str, Any]], depth: int = 0) -> Any:
    """A reference ``{"@id": x}`` replaced by the object of that id elsewhere on the page."""
    if depth < 4 and isinstance(value, dict) and set(value) == {"@id"} and value["@id"] in nodes:
        return _resolve(nodes[value["@id"]], nodes, depth + 1)
    return value


def _first(value: Any) -> Any:
    while isinstance(value, list):
        value = value[0] if value else None
    return value


def _text(value: Any) -> str | None:
    """A text property: a string, a number, a ``{"@value"}`` or the first of a list, else None."""
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("@value", value.get("name"))
        value = _first(value)
    if isinstance(value, bool) or value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _raw(value: Any) -> str | int | float | None:
    """A rating number as the page wrote it (string or number)."""
    value = _first(value)
    if isinstance(value, dict):
        value = _first(value.get("@value"))
    if isinstance(value, bool):
        return None
    return value if isinstance(value, str | int | float) else None


def _names(value: Any, nodes: dict[str, dict[str, Any]]) -> str | None:
    """The name(s) of an author or publisher: a string, an object's ``name``, or a list of them."""
    items = value if isinstance(value, list) else [value]
    names = []
    for item in items:
        item = _resolve(item, nodes)
        name = _text(item.get("name")) if isinstance(item, dict) else _text(item)
        if name is not None:
            names.append(name)
    return ", ".join(names) if names else None


def _urls(value: Any, nodes: dict[str, dict[str, Any]]) -> list[str]:
    """The URLs of ``appearance`` / ``firstAppearance``: strings, objects with ``url`` / ``@id``, lists."""
    out = []
    for item in value if isinstance(value, list) else [value]:
        item = _resolve(item, nodes)
        if isinstance(item, dict):
            url = item.get("url") or item.get("@id")
            url = _first(url)
            if isinstance(url, dict):
                url = url.get("@id") or url.get("url")
        else:
            url = item
        if isinstance(url, str) and url.strip():
            out.append(url)
    return out


def _claim_texts(value: Any) -> list[str | None]:
    """``claimReviewed``: one claim, or several given as an array (each read as its own review)."""
    if isinstance(value, list):
        texts = [_text(v) for v in value]
        return [t for t in texts if t is not None] or [None]
    return [_text(value)]


def claim_reviews_of(objects: list[dict[str, Any]], source: str) -> list[ClaimReviewFacts]:
    """The ClaimReviews among ``objects`` (in the uniform schema.org shape), one fact set per claim."""
    nodes = _nodes_by_id(objects)
    out: list[ClaimReviewFacts] = []
    for obj in objects:
        if "ClaimReview" not in types_of(obj):
            continue
        rating = _resolve(_first(obj.get("reviewRating")), nodes)
        rating = rating if isinstance(rating, dict) else {}
        item = _resolve(_first(obj.get("itemReviewed")), nodes)
        item = item if isinstance(item, dict) else {}
        appearances = _urls(item.get("appearance"), nodes) + _urls(item.get("firstAppearance"), nodes)
        first_appearance = _resolve(_first(item.get("firstAppearance")), nodes)
        claim_date = _text(item.get("datePublished"))
        if claim_date is None and isinstance(first_appearance, dict):
            claim_date = _text(first_appearance.get("datePublished"))
        for claim in _claim_texts(obj.get("claimReviewed")):
            out.append(
                ClaimReviewFacts(
                    claim_reviewed=claim,
                    rating_alternate_name=_text(rating.get("alternateName")),
                    rating_name=_text(rating.get("name")),
                    rating_value=_raw(rating.get("ratingValue")),
                    best_rating=_raw(rating.get("bestRating")),
                    worst_rating=_raw(rating.get("worstRating")),
                    appearances=appearances,
                    item_reviewed_author=_names(item.get("author"), nodes) if "author" in item else None,
                    claim_date=claim_date,
                    date_published=_text(obj.get("datePublished")),
                    author=_names(obj.get("author"), nodes) if "author" in obj else None,
                    url=_text(obj.get("url")),
                    in_language=_text(obj.get("inLanguage")),
                    sd_license=_text(obj.get("sdLicense") or obj.get("license")),
                    source=source,
                )
            )
    return out


def _flatten_rdfa(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """extruct's RDFa (expanded JSON-LD: full IRIs, ``[{"@value"}]``) in the compact schema.org shape."""

    def compact(value: Any) -> Any:
        if isinstance(value, list):
            values = [compact(v) for v in value]
            return values[0] if len(values) == 1 else values
        if isinstance(value, dict):
            if "@value" in value:
                return value["@value"]
            return {
                ("@type" if k == "@type" else _SCHEMA_PREFIX.sub("", k)): (
                    [_SCHEMA_PREFIX.sub("", t) for t in v] if k == "@type" else compact(v)
                )
                for k, v in value.items()
            }
        return value

    return [compact(item) for item in items if isinstance(item, dict)]


_MARKUP_NAMES_CLAIMREVIEW = re.compile(rb"(itemtype|typeof)\s*=\s*[\"'][^\"']*ClaimReview", re.I)


def markup_claim_reviews(html: bytes | str, url: str | None) -> list[ClaimReviewFacts]:
    """ClaimReviews in microdata and RDFa, when the page's attributes name the type at all."""
    raw = html.encode("utf-8") if isinstance(html, str) else html
    if not _MARKUP_NAMES_CLAIMREVIEW.search(raw):
        return []
    import extruct

    found = extruct.extract(raw, base_url=url, syntaxes=["microdata", "rdfa"], uniform=True, errors="log")
    reviews = claim_reviews_of(_with_children(found.get("microdata", [])), "microdata")
    return reviews + claim_reviews_of(_flatten_rdfa(found.get("rdfa", [])), "rdfa")


def _with_children(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Microdata items and the items nested in their properties (a ClaimReview inside an Article)."""
    out, stack = [], list(items)
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            out.append(item)
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(item)
    return out


def clean(value: str | None) -> str | None:
    """Display form of a page value: whitespace (``\\r``, no-break spaces) collapsed, None when empty."""
    if value is None:
        return None
    return " ".join(value.split()) or None
