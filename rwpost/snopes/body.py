"""The body region of a page: the container the article text lives in, the boilerplate inside it, the
lead image outside it, and the crawl record's body paragraphs, links and images.

Two readers use it: the tagger (:func:`find_body`, :func:`drop_boilerplate`, :func:`lead_image`), which
also handles pages of other sites, and the crawl record (:func:`crawl_body` and what follows), which
keeps to the detected layout's own container.
"""

from __future__ import annotations

from lxml import etree

from rwpost.snopes.layouts import LAYOUTS, Layout
from rwpost.snopes.links import canonical_image_url, image_url, join_url
from rwpost.snopes.select import Node, all_text, drop_tree, parse_html, select, select_one, text_of

BODY_SELECTORS: tuple[str, ...] = (
    "article#article-content",  # Snopes 2022-2026 layout (main#article_main)
    "div.content-wrapper div.content",  # Snopes 2019-2021 layout, under the "Origin" card
    "div.post-body-card div.card-body",  # Snopes late-2018 layout, under the "Origin" card
    "div.article-text-inner",  # Snopes 2017 to early-2018 layout (inside div.entry-content.article-text)
    "div.single-body",
    "div.entry-content",
    "div.post-content",
    "article .content",
)
"""Body containers for the tagger, most specific first (the layouts' own and those of other sites);
``article`` / trafilatura come after."""

DROP_SELECTORS: tuple[str, ...] = (
    "script, style, noscript, template, svg, form, input, button, select, textarea, iframe[src=''], nav",
    "header, footer, aside",
    "section#fact_check_rating_container",  # claim and rating box: page metadata, not body text
    "[class*='ad-unit'], [class*='snopesad'], [class*='bigcrunch'], [class*='smg-zone'], [id^='div-gpt-ad']",
    "[class*='advert'], [class*='sponsor'], [class*='newsletter'], [class*='promo']",
    "[class*='share'], [class*='social-buttons'], [class*='related'], [class*='recirc'], [class*='trending']",
    "[class*='author-container'], [class*='author_bio'], [class*='author-bio'], [class*='breadcrumb']",
    "[class*='sources_wrapper'], [class*='comments'], [class*='tags-wrapper'], [class*='article_tags']",
    *(layout.boilerplate for layout in LAYOUTS if layout.boilerplate),
)
"""Boilerplate inside a body container: scripts, ads (Snopes ``outer-ad-unit-wrapper snopesad``,
``bigcrunch-unit``, 2019 ``smg-zone``), share widgets, related links, bios, sources block, and what each
layout names as its own (:attr:`Layout.boilerplate`: 2018 claim and rating boxes, bylines, tags)."""

LEAD_IMAGE_SELECTORS: tuple[tuple[str, str], ...] = tuple(
    layout.lead_image for layout in LAYOUTS if layout.lead_image
)
"""The article's lead image and its caption: outside the body container on Snopes, yet often the
claim image itself, so it opens the tagged text as the first tag."""


def find_body(page: Node) -> tuple[Node | None, str]:
    """The main content container of a page and the selector that found it."""
    for selector in BODY_SELECTORS:
        node = select_one(page, selector)
        if node is not None and text_of(node, strip=True):
            return node, selector
    articles = [a for a in page.iter("article") if text_of(a, strip=True)]
    if articles:
        return max(articles, key=lambda a: len(text_of(a))), "article"
    return None, ""


def trafilatura_body(html: str) -> Node | None:
    """Main content found by trafilatura (links and images kept), as a tree to walk."""
    import trafilatura

    extracted = trafilatura.extract(
        html, output_format="html", include_links=True, include_images=True, include_comments=False
    )
    if not extracted:
        return None
    return next(parse_html(extracted).iter("body"), None)


def drop_boilerplate(body: Node) -> None:
    """Remove what :data:`DROP_SELECTORS` names from ``body`` (in place; the text after each stays)."""
    for selector in DROP_SELECTORS:
        for node in select(body, selector):
            if node is not body:
                drop_tree(node)


def lead_image(page: Node, body: Node | None) -> tuple[str, str, Node | None] | None:
    """URL, alt text and caption element of the lead image, when it is outside ``body``."""
    for image_selector, caption_selector in LEAD_IMAGE_SELECTORS:
        image = select_one(page, image_selector)
        if image is None or (body is not None and any(p is body for p in image.iterancestors())):
            continue
        src = image_url(image)
        if not src:
            continue
        return src, str(image.get("alt") or ""), select_one(page, caption_selector)
    return None


# --- the crawl record's body ---------------------------------------------------------------------


def crawl_body(page: Node, layout: Layout | None) -> Node | None:
    """The body container of the page's own layout (none for pages of no known layout)."""
    if layout is None or not layout.body:
        return None
    return select_one(page, layout.body)


def boilerplate_nodes(body: Node | None) -> set[Node]:
    """The nodes of ``body`` that its layouts call boilerplate (:attr:`Layout.boilerplate`)."""
    if body is None:
        return set()
    return {node for node in select(body, _BOILERPLATE) if node is not body}


_BOILERPLATE = ", ".join(layout.boilerplate for layout in LAYOUTS if layout.boilerplate)


def _in_boilerplate(node: Node, skipped: set[Node]) -> bool:
    return bool(skipped) and (node in skipped or any(parent in skipped for parent in node.iterancestors()))


_RATING_BOX_AND_ADS = etree.XPath(
    "descendant::section[@id = 'fact_check_rating_container']"
    " | descendant::div[contains(@class, 'ad-unit') or contains(@class, 'snopesad')]",
    smart_strings=False,
)


def _paragraphs(body: Node, skipped: set[Node]) -> list[Node]:
    """The body's paragraphs and quotes, in document order; not those of the claim and rating box
    (``section#fact_check_rating_container``: no paragraphs), of ads (a ``div`` whose class has
    ``ad-unit``: no paragraphs; ``snopesad``: neither) or of the boilerplate ``skipped``."""
    tags: tuple[str, ...] = ("p", "blockquote")
    for outer in (body, *body.iterancestors()):  # what holds the body holds all of them
        if outer.tag == "div":
            names = outer.get("class") or ""
            if "snopesad" in names:
                return []
            if "ad-unit" in names:
                tags = ("blockquote",)
        elif outer.tag == "section" and outer.get("id") == "fact_check_rating_container":
            tags = ("blockquote",)
    left_out: set[Node] = set()
    for box in _RATING_BOX_AND_ADS(body):
        if box.tag == "div" and "snopesad" in (box.get("class") or ""):
            left_out.update(box.iterdescendants("p", "blockquote"))
        else:
            left_out.update(box.iterdescendants("p"))
    for node in skipped:
        left_out.update(node.iter("p", "blockquote"))
    return [node for node in body.iterdescendants(*tags) if node not in left_out]


def body_text_and_links(
    body: Node | None, url: str, skipped: set[Node] | None = None
) -> tuple[str | None, list[str]]:
    """Paragraphs and quotes of the body (not the rating box, not ads) and their links, absolute
    (``skipped``: the body's :func:`boilerplate_nodes`, when already found)."""
    if body is None:
        return None, []
    paragraphs: list[str] = []
    links: list[str] = []
    seen_texts: set[str] = set()
    seen_links: set[str] = set()
    skipped = boilerplate_nodes(body) if skipped is None else skipped
    for node in _paragraphs(body, skipped):
        text = all_text(node)
        if text and text not in seen_texts:
            seen_texts.add(text)
            paragraphs.append(text)
        for anchor in node.iterdescendants("a"):
            href = anchor.get("href")
            if href is not None:
                absolute = join_url(url, href.strip())
                if absolute not in seen_links:
                    seen_links.add(absolute)
                    links.append(absolute)
    return ("\n\n".join(paragraphs) or None), links


def article_images(page: Node, body: Node | None, url: str, skipped: set[Node] | None = None) -> list[str]:
    """Article images: the cover and the body images; rating icons and logos are not article images."""
    nodes = select(page, _COVER_IMAGES)
    if body is not None:
        nodes.extend(body.iterdescendants("img"))
    skipped = boilerplate_nodes(body) if skipped is None else skipped
    found: list[str] = []
    identities: set[str] = set()  # one URL per image file (:func:`~rwpost.snopes.links.same_image`)
    for img in nodes:
        if _in_boilerplate(img, skipped) or in_noscript(img) or _IN_RATING_BOX(img):
            continue
        src = image_url(img)
        if src:
            absolute = join_url(url, src)
            identity = canonical_image_url(absolute)
            if identity not in identities:
                identities.add(identity)
                found.append(absolute)
    return found


_IN_RATING_BOX = etree.XPath(
    "boolean(ancestor::*[{}])".format(
        " or ".join(
            f"contains(@class, '{layout.rating_box_class}')" for layout in LAYOUTS if layout.rating_box_class
        )
    )
)
"""Inside a layout's rating box (:attr:`Layout.rating_box_class`): its icons are not article images."""
_COVER_IMAGES = ", ".join(layout.cover_images for layout in LAYOUTS if layout.cover_images)


def in_noscript(img: Node) -> bool:
    """A ``<noscript>`` fallback copy of a lazy-loaded image (the lazy one is read instead)."""
    return next(img.iterancestors("noscript"), None) is not None
