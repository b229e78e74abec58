"""Selectors over one lxml tree with Scrapy/parsel's endings: ``css::text`` gives the text nodes whose
parent matches, ``css::attr(name)`` the attribute values of the matches, both in document order.

The layouts keep their selectors in this form (``rwpost.snopes.layouts``); each CSS query is turned into
XPath and compiled once, on first use. The page model, the crawler and the tagger walk the same tree, so
a page is parsed once.
"""

from __future__ import annotations

import html as html_lib
import re
import threading
from collections.abc import Iterator
from functools import cache

from cssselect import HTMLTranslator, parse
from cssselect.parser import Attrib, Class, CombinedSelector, Hash
from cssselect.xpath import XPathExpr
from lxml import etree

from rwpost.errors import RwpostError

Node = etree._Element
"""An element of a parsed page (the page itself is its root ``<html>`` element)."""

_ENDING = re.compile(r"::(?:(text)|attr\(([^)]+)\))\s*$")


class _ScopedTranslator(HTMLTranslator):
    """CSS to XPath where every combinator is a condition on the matched element (``b[ancestor::a]`` for
    ``a b``): a query run from any element finds the matches under it, while ancestors above it still
    count (as BeautifulSoup/soupsieve and a browser's ``querySelectorAll`` match), and it scans only that
    element's subtree."""

    def xpath_descendant_combinator(self, left: XPathExpr, right: XPathExpr) -> XPathExpr:
        return right.add_condition(f"ancestor::{left}")

    def xpath_child_combinator(self, left: XPathExpr, right: XPathExpr) -> XPathExpr:
        return right.add_condition(f"parent::{left}")

    def xpath_direct_adjacent_combinator(self, left: XPathExpr, right: XPathExpr) -> XPathExpr:
        return right.add_condition(f"preceding-sibling::*[1][self::{left}]")

    def xpath_indirect_adjacent_combinator(self, left: XPathExpr, right: XPathExpr) -> XPathExpr:
        return right.add_condition(f"preceding-sibling::{left}")


_TRANSLATOR = _ScopedTranslator()
_TEXT_NODES = etree.XPath("descendant::text()", smart_strings=False)
_NOT_CONTENT = frozenset(("script", "style", "template", "rt", "rp"))
"""Elements whose text is not page content (as BeautifulSoup's ``get_text`` had it)."""


def parse_html(html: str | bytes) -> Node:
    """The page as a tree (lxml's HTML parser, as the tagger has always used)."""
    parser = etree.HTMLParser(recover=True)
    try:
        parser.feed(html)
        root = parser.close()
    except etree.XMLSyntaxError:  # nothing to parse (an empty or blank page)
        root = None
    if root is None:
        return etree.fromstring("<html></html>", etree.HTMLParser())
    return root


def as_tree(html: str | bytes | Node) -> Node:
    """The page's tree: ``html`` itself when it is one, else ``html`` parsed."""
    return html if isinstance(html, etree._Element) else parse_html(html)


def clean_text(value: str | None) -> str | None:
    """Whitespace-collapsed text with entities decoded, None when empty."""
    if value is None:
        return None
    return " ".join(html_lib.unescape(value).split()) or None


def select(root: Node, css: str) -> list[Node]:
    """Elements matching ``css`` among ``root`` and its descendants, in document order (a match may rest
    on ancestors of ``root``, as in a browser's ``element.querySelectorAll``)."""
    query = _query(root, css)
    return query[0](root) if query else []


@cache
def _group(css: str) -> tuple[tuple[frozenset[str], str, str], ...]:
    """Per selector of a group: the class names, ids and ``itemprop`` values its matches need somewhere in
    the page, and its XPath from a context element as element test and condition (every combinator is a
    condition, :class:`_ScopedTranslator`)."""
    found = []
    for selector in parse(css):
        expr = _TRANSLATOR.xpath(selector.parsed_tree)
        if expr.path or "position()" in expr.condition or "last()" in expr.condition:
            raise RwpostError(f"selector {selector.canonical()!r} of {css!r}: not a condition on one element")
        found.append((frozenset(_names(selector.parsed_tree)), expr.element, expr.condition))
    return tuple(found)


def _names(tree: object) -> set[str]:
    found: set[str] = set()
    while tree is not None:
        if isinstance(tree, Class):
            found.add(tree.class_name)
        elif isinstance(tree, Hash):
            found.add(tree.id)
        elif isinstance(tree, Attrib) and tree.attrib == "itemprop" and tree.operator == "=" and tree.value:
            found.add(tree.value.value)
        elif isinstance(tree, CombinedSelector):
            found |= _names(tree.subselector)
        tree = getattr(tree, "selector", None)  # not into :not(...): what it names need not be there
    return found


_Query = tuple[etree.XPath, etree.XPath]


@cache
def _compiled(steps: tuple[tuple[str, str], ...]) -> _Query:
    """Selectors (element test, condition) as one query, compiled once: the matches in document order, and
    their own text nodes. Selectors of one element test share one pass over the tree (``div[a or b]``
    finds what ``div[a] | div[b]`` finds, each step of a union being a pass of its own)."""
    conditions: dict[str, list[str]] = {}
    for element, condition in steps:
        conditions.setdefault(element, []).append(condition)
    path = " | ".join(_step(element, conds) for element, conds in conditions.items())
    return etree.XPath(path, smart_strings=False), etree.XPath(f"({path})/text()", smart_strings=False)


def _step(element: str, conditions: list[str]) -> str:
    if not all(conditions):  # a selector of the bare element: every one matches
        return f"descendant-or-self::{element}"
    if len(conditions) == 1:
        return f"descendant-or-self::{element}[{conditions[0]}]"
    return f"descendant-or-self::{element}[" + " or ".join(f"({c})" for c in conditions) + "]"


@cache
def _plan(css: str) -> tuple[_Query | None, tuple[tuple[frozenset[str], str, str], ...]]:
    """The compiled query of ``css`` when none of its selectors needs a name (no probe to make), and its
    selectors (:func:`_group`)."""
    group = _group(css)
    if any(needed for needed, _element, _condition in group):
        return None, group
    return _compiled(tuple((element, condition) for _needed, element, condition in group)), group


_NAMES = etree.XPath(
    "descendant-or-self::*/@class | descendant-or-self::*/@id | descendant-or-self::*/@itemprop",
    smart_strings=False,
)


class _Probed(threading.local):
    """Per thread, the last tree probed and the class names, ids and itemprops it has (one page meets many
    queries in a row)."""

    last: tuple[Node | None, set[str]] = (None, set())


_PROBED = _Probed()


def _page_names(root: Node) -> set[str]:
    """The class names, ids and itemprops of the page ``root`` is in (a tree is only ever pruned, so what
    it had stays a superset of what it has)."""
    probed = _PROBED.last
    if root is not probed[0]:
        top = root
        while (parent := top.getparent()) is not None:
            top = parent
        if top is not probed[0]:
            # every name a selector needs is one word (no whitespace of any kind): the words of the
            # values are enough, and str.split may only cut more finely than XML's whitespace
            probed = _PROBED.last = (top, set(" ".join(_NAMES(top)).split()))
    return probed[1]


def _query(root: Node, css: str) -> _Query | None:
    """The compiled query of the selectors of ``css`` that may match in ``root``'s page, None when none
    may: a selector needing a class name, id or itemprop the page lacks is left out (the cheap probe that
    spares most of the layouts' queries on a page of another layout)."""
    fixed, group = _plan(css)
    if fixed is not None:
        return fixed
    names = _page_names(root)
    steps = tuple([(element, condition) for needed, element, condition in group if needed <= names])
    return _compiled(steps) if steps else None


def any_match(root: Node, css: str) -> bool:
    """Whether :func:`select` finds anything: the selectors of the group one by one, those that test the
    element's name (a pass over fewer elements) first, until one finds something."""
    names: set[str] | None = None
    for needed, element, condition in _by_cost(css):
        if needed:
            names = _page_names(root) if names is None else names
            if not needed <= names:
                continue
        if _compiled(((element, condition),))[0](root):
            return True
    return False


@cache
def _by_cost(css: str) -> tuple[tuple[frozenset[str], str, str], ...]:
    return tuple(sorted(_group(css), key=lambda selector: selector[1] == "*"))


def select_one(root: Node, css: str) -> Node | None:
    """The first element :func:`select` finds, or None."""
    found = select(root, css)
    return found[0] if found else None


def values(root: Node, query: str) -> list[str]:
    """What a ``css``, ``css::text`` or ``css::attr(name)`` query finds (elements as their text)."""
    css, ending, attr = _split(query)
    if ending is None:
        return [all_text(node) or "" for node in select(root, css)]
    if attr is not None:
        return [value for node in select(root, css) if (value := node.get(attr)) is not None]
    found = _query(root, css)
    return found[1](root) if found else []


@cache
def _split(query: str) -> tuple[str, str | None, str | None]:
    """CSS, ending and attribute name (of a ``::attr(name)`` ending) of a query; a group (``a::text,
    b::text``) shares one ending."""
    parts = [part.strip() for part in query.split(",")]
    endings = [_ENDING.search(part) for part in parts]
    if endings[0] is None or any(e is None or e.group() != endings[0].group() for e in endings):
        if any(endings):
            raise RwpostError(f"selector group with mixed endings: {query!r}")
        return query, None, None
    css = ", ".join(part[: e.start()] for part, e in zip(parts, endings, strict=True))
    attr = endings[0].group(2)
    return css, endings[0].group(), attr.strip() if attr is not None else None


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


def all_text(node: Node) -> str | None:
    """Every text node under ``node`` joined by spaces and cleaned."""
    if not len(node):  # no children: its only text node is its text
        return clean_text(node.text)
    return clean_text(" ".join(_TEXT_NODES(node)))


def text_of(node: Node, separator: str = "", strip: bool = False) -> str:
    """The content text of ``node`` (not that of scripts, styles or templates inside it), each piece
    stripped and empty ones left out when ``strip``, joined by ``separator``."""
    pieces = _TEXT_NODES(node) if node.tag in _NOT_CONTENT else _content_strings(node)
    if strip:
        pieces = (piece.strip() for piece in pieces)
        return separator.join(piece for piece in pieces if piece)
    return separator.join(pieces)


def _content_strings(node: Node) -> Iterator[str]:
    if node.text:
        yield node.text
    for child in node:
        if isinstance(child.tag, str) and child.tag not in _NOT_CONTENT:
            yield from _content_strings(child)
        if child.tail:
            yield child.tail


def classes(node: Node) -> str:
    """The ``class`` attribute as one string (its names separated by single spaces)."""
    value = node.get("class")
    return " ".join(value.split()) if value else ""


def drop_tree(node: Node) -> None:
    """Remove ``node`` and what is under it from its tree; the text after it stays where it was."""
    parent = node.getparent()
    if parent is None:
        return
    if node.tail:
        previous = node.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + node.tail
        else:
            previous.tail = (previous.tail or "") + node.tail
    parent.remove(node)
