"""Selectors over a BeautifulSoup tree with Scrapy/parsel's endings: ``css::text`` gives the text nodes
whose parent matches, ``css::attr(name)`` the attribute values of the matches, both in document order.

The layouts keep their selectors in this form (``rwpost.snopes.layouts``); the tagger walks the same
tree, so a page is parsed once.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

from rwpost.errors import RwpostError

Node = BeautifulSoup | Tag

_ENDING = re.compile(r"::(?:(text)|attr\(([^)]+)\))\s*$")
_SPACES = re.compile(r"\s+")
_NOT_TEXT = (Comment, Declaration, Doctype, ProcessingInstruction)


def parse_html(html: str) -> BeautifulSoup:
    """The page as a tree (lxml's HTML parser, as the tagger has always used)."""
    return BeautifulSoup(html, "lxml")


def clean_text(value: str | None) -> str | None:
    """Whitespace-collapsed text with entities decoded, None when empty."""
    if value is None:
        return None
    text = _SPACES.sub(" ", html_lib.unescape(value)).strip()
    return text or None


def is_text(node: object) -> bool:
    """A text node (not a comment, doctype or processing instruction)."""
    return isinstance(node, NavigableString) and not isinstance(node, _NOT_TEXT)


def select(root: Node, css: str) -> list[Tag]:
    """Elements matching ``css`` among ``root`` and its descendants, in document order."""
    found = root.select(css)
    if isinstance(root, Tag) and not isinstance(root, BeautifulSoup) and root.css.match(css):
        found.insert(0, root)
    return found


def values(root: Node, query: str) -> list[str]:
    """What a ``css``, ``css::text`` or ``css::attr(name)`` query finds (elements as their text)."""
    css, ending = _split(query)
    matches = select(root, css)
    if ending is None:
        return [all_text(node) or "" for node in matches]
    attr = ending.group(2)
    if attr is not None:
        found = []
        for node in matches:
            value = node.get(attr.strip())
            if value is not None:
                found.append(value if isinstance(value, str) else " ".join(value))
        return found
    parents = {id(node) for node in matches}
    return [str(s) for s in _descendants(root) if is_text(s) and id(s.parent) in parents]


def _split(query: str) -> tuple[str, re.Match[str] | None]:
    """CSS and ending of a query; a group (``a::text, b::text``) shares one ending."""
    parts = [part.strip() for part in query.split(",")]
    endings = [_ENDING.search(part) for part in parts]
    if endings[0] is None or any(e is None or e.group() != endings[0].group() for e in endings):
        if any(endings):
            raise RwpostError(f"selector group with mixed endings: {query!r}")
        return query, None
    return ", ".join(part[: e.start()] for part, e in zip(parts, endings, strict=True)), endings[0]


def first(root: Node, *queries: str) -> str | None:
    """The first non-empty cleaned value among ``queries``, tried in order."""
    for query in queries:
        for value in values(root, query):
            text = clean_text(value)
            if text:
                return text
    return None


def first_raw(root: Node, query: str) -> str | None:
    """The first value of ``query`` as found (empty or blank included), None when nothing matches."""
    found = values(root, query)
    return found[0] if found else None


def all_text(node: Tag) -> str | None:
    """Every text node under ``node`` joined by spaces and cleaned."""
    return clean_text(" ".join(str(s) for s in _descendants(node) if is_text(s)))


def classes(node: Tag) -> str:
    """The ``class`` attribute as one string."""
    value = node.get("class")
    return " ".join(value) if isinstance(value, list) else (value or "")


def _descendants(root: Node) -> Iterator[object]:
    if isinstance(root, Tag) and not isinstance(root, BeautifulSoup):
        yield root
    yield from root.descendants
