"""HTML -> text with tagged URLs (paper III-B.2) and the link table the tags refer to.

Every link and embedded medium of the article body stays where it was, as a numbered tag typed by
kind: ``[IMAGE 3: url]``, ``[VIDEO 4: url]``, ``[WEBPAGE 5: url]``. A URL that appears several times
keeps one id (its first anchor and sentence go into the link table). Only the main content is used:
the Snopes body container when the page has one, trafilatura's main-content extraction otherwise;
navigation, ads, share widgets, related articles and author bios are dropped.

The body region, link rules and page facts come from the Snopes page model (:mod:`rwpost.snopes`); this
module writes the text. Parsing is a pure function of the HTML string (STYLE.md 3), tested on saved
real pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rwpost.errors import UnknownRatingError
from rwpost.ids import record_id
from rwpost.labels import Label, map_rating
from rwpost.records import CrawledArticle, Link, TaggedArticle
from rwpost.snopes.body import drop_boilerplate, find_body, in_noscript, lead_image, trafilatura_body
from rwpost.snopes.links import embed_url, image_url, is_embed, link_identity, link_kind, resolve_link
from rwpost.snopes.page import read_article
from rwpost.snopes.select import Node, as_tree, select_one, text_of

BLOCK_TAGS = frozenset(
    "address article blockquote dd details div dl dt figcaption figure h1 h2 h3 h4 h5 h6 hr li main ol p "
    "pre section table tbody td tfoot th thead tr ul".split()
)

TAG_RE = re.compile(r"\[(IMAGE|VIDEO|WEBPAGE) (\d+): [^\]\s]*\]")


@dataclass
class TaggedText:
    """The result of tagging one body: text with tags, the link table, word count and which body."""

    text: str
    links: list[Link]
    word_count: int
    body: str = field(default="", metadata={"doc": "selector or 'trafilatura' that found the body"})


class _Builder:
    """Walks a body in document order, writing text and tags and numbering the links."""

    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.parts: list[str] = []
        self.by_url: dict[str, Link] = {}
        self.links: list[Link] = []
        self.quote_depth = 0

    def tag(self, url: str | None, anchor: str = "") -> None:
        resolved = resolve_link(url, self.base_url)
        if resolved is None:
            return
        key = link_identity(resolved)  # one id per file or post (Snopes image URLs of every era, tweets)
        link = self.by_url.get(key)
        if link is None:
            link = Link(id=len(self.links) + 1, kind=link_kind(resolved), url=resolved, anchor=anchor.strip())
            self.by_url[key] = link
            self.links.append(link)
        shown = link.url.replace("]", "%5D").replace(" ", "%20")  # the one URL of this id
        self.parts.append(f" [{link.kind.upper()} {link.id}: {shown}] ")

    def walk(self, node: Node) -> None:
        if node.text:
            self.parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                self.element(child)
            if child.tail:
                self.parts.append(child.tail)

    def element(self, child: Node) -> None:
        """One element of the body: its text and tags, set off as a block when it is one."""
        name = child.tag
        if name == "br":
            self.parts.append("\n")
            return
        block = name in BLOCK_TAGS
        if block:
            self.parts.append("\n\n> " if self.quote_depth or name == "blockquote" else "\n\n")
        if name == "blockquote":
            self.quote_depth += 1  # quoted text (often the post itself) is marked "> " as in Markdown
        if is_embed(child):
            if name == "blockquote":
                self.walk(child)
            self.tag(embed_url(child))
        elif name == "a" and _wrapped_image(child, self.base_url):
            # an image linking to its full-size file: one tag, the file's URL, the image's alt text
            image = next(child.iterdescendants("img"), None)
            self.tag(child.get("href"), str(image.get("alt") or "") if image is not None else "")
        elif name == "a":
            anchor = text_of(child, " ", strip=True)
            if anchor != (child.get("href") or "").strip():  # a bare URL as anchor: the tag says it
                self.walk(child)
            self.tag(child.get("href") if isinstance(child.get("href"), str) else None, anchor)
        elif name == "img":
            src = image_url(child)
            self.tag(src, str(child.get("alt") or ""))
        else:
            self.walk(child)
        if name == "blockquote":
            self.quote_depth -= 1
        if block:
            self.parts.append("\n\n> " if self.quote_depth else "\n\n")


def _wrapped_image(anchor: Node, base_url: str | None) -> bool:
    """A link to an image file whose only content is one image (a thumbnail of that file)."""
    href = anchor.get("href")
    resolved = resolve_link(href if isinstance(href, str) else None, base_url)
    if resolved is None or link_kind(resolved) != "image" or text_of(anchor, strip=True):
        return False
    images = [img for img in anchor.iterdescendants("img") if not in_noscript(img)]
    return len(images) == 1


def _normalise(text: str) -> str:
    text = text.replace("\r", "").replace("\xa0", " ")
    text = re.sub(r"[ \t\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"^>\s*$", "", text, flags=re.MULTILINE)  # empty quote lines
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"\] ([.,;:!?)])", r"]\1", text)  # tag then punctuation: no gap
    return text.strip()


def strip_tags(text: str) -> str:
    """The tagged text without its tags and quote marks (what word counts and contexts are made of)."""
    text = re.sub(r"^> ?", "", TAG_RE.sub("", text), flags=re.MULTILINE)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


_BOUNDARY = re.compile(r"[.!?][\"”’)]*\s+|\n")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr rep reps sen st jr sr vs gov gen lt col sgt prof inc co corp no u.s u.k".split()
)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text``: split after . ! ? or a newline, not after abbreviations (U.S., Rep.)."""
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if match.group().startswith("."):
            word = re.search(r"(?:^|[\s\"“(])([\w.]+)$", text[start : match.start()])
            token = word.group(1).lower() if word else ""
            if token in _ABBREVIATIONS or re.fullmatch(r"(\w\.)*\w", token) and len(token) <= 3:
                continue
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _clean_sentence(text: str) -> str:
    sentence = re.sub(r"\s+([.,;:!?)])", r"\1", strip_tags(text))
    return re.sub(r"\s+", " ", sentence).strip()


def _sentence_around(text: str, start: int, spans: list[tuple[int, int]]) -> str:
    """The sentence holding position ``start`` of ``text``, tags removed; for an embed standing alone
    (a tweet box, a player), the sentence before it, which introduces it."""
    for index, (left, right) in enumerate(spans):
        if left <= start < right:
            for back in range(index, -1, -1):
                sentence = _clean_sentence(text[spans[back][0] : spans[back][1]])
                if sentence:
                    return sentence
            return ""
    return ""


def link_context(text: str, link_id: int) -> str:
    """The sentence of ``text`` around the first tag of link ``link_id`` (as the link table's context);
    ``""`` when ``text`` does not tag it."""
    match = next((m for m in TAG_RE.finditer(text) if int(m.group(2)) == link_id), None)
    return _sentence_around(text, match.start(), sentence_spans(text)) if match else ""


def _with_contexts(text: str, links: list[Link]) -> list[Link]:
    first: dict[int, re.Match[str]] = {}
    for match in TAG_RE.finditer(text):
        first.setdefault(int(match.group(2)), match)
    spans = sentence_spans(text)
    out = []
    for link in links:
        match = first.get(link.id)
        context = _sentence_around(text, match.start(), spans) if match else ""
        out.append(link.model_copy(update={"context": context}))
    return out


def count_words(text: str) -> int:
    """Words of the article text, tags excluded."""
    return len(re.findall(r"\w[\w'’-]*", strip_tags(text)))


def tag_html(html: str, base_url: str | None = None, page: Node | None = None) -> TaggedText:
    """Tag the main content of one page (the Snopes body container, else trafilatura's extraction).

    ``page`` may be the page already parsed (it is modified: boilerplate is removed from it).
    """
    page = page if page is not None else as_tree(html)
    body, selector = find_body(page)
    if body is None:
        body, selector = trafilatura_body(html), "trafilatura"
    return _tag_body(body, selector, base_url, lead_image(page, body))


def tag_main_content(
    html: str, base_url: str | None = None, page: Node | None = None, selectors: tuple[str, ...] = ()
) -> TaggedText:
    """Tag the main content of a page of any site: the first of ``selectors`` (a site's own, given as
    data in sites.yaml) that holds text, else trafilatura's main-content extraction; the same text with
    tagged URLs as :func:`tag_html` writes."""
    page = page if page is not None else as_tree(html)
    for css in selectors:
        node = select_one(page, css)
        if node is not None and text_of(node, strip=True):
            return _tag_body(node, css, base_url, None)
    return _tag_body(trafilatura_body(html), "trafilatura", base_url, None)


def _tag_body(
    body: Node | None, selector: str, base_url: str | None, lead: tuple[str, str, Node | None] | None
) -> TaggedText:
    builder = _Builder(base_url)
    if lead is not None:
        src, alt, caption = lead
        builder.tag(src, alt)
        if caption is not None:
            builder.parts.append(" " + text_of(caption, " ", strip=True))
        builder.parts.append("\n\n")
    if body is not None:
        drop_boilerplate(body)
        builder.walk(body)
    text = _normalise("".join(builder.parts))
    return TaggedText(
        text=text, links=_with_contexts(text, builder.links), word_count=count_words(text), body=selector
    )


# --- the stage record ----------------------------------------------------------------------------


def rating_outcome(rating: str | None) -> tuple[Label | None, str | None]:
    """The label of a page's rating, or None and why: ``unrated`` ("No Rating", no rating), the
    exclusion reason of a non-factual rating, or ``unknown-rating: <word>`` for a word not in the table."""
    try:
        mapping = map_rating(rating)
    except UnknownRatingError:
        return None, f"unknown-rating: {rating}"
    return mapping.label, mapping.excluded_reason


FACTS = ("headline", "claim", "rating", "category", "date_published")
"""The page facts a tagged article carries."""


def page_facts(page: Node, news_url: str, crawled: CrawledArticle | None = None) -> dict[str, Any]:
    """The crawl record's facts (the page model's reading at crawl time); any it lacks (a store written
    without them) read from the page by the same model."""
    known = {name: getattr(crawled, name) for name in FACTS} if crawled is not None else {}
    known = {name: value for name, value in known.items() if value not in (None, "")}
    if len(known) < len(FACTS):
        read = read_article(page, news_url)
        known = {name: getattr(read, name) for name in FACTS} | known
    return known


def tag_article(html: str, news_url: str, crawled: CrawledArticle | None = None) -> TaggedArticle:
    """The :class:`TaggedArticle` of one page: tagged body, link table, and the claim, rating, date and
    category (from the crawl record when it has them, else read from the page itself).

    "No Rating" and a missing rating give no label; so does a rating word the mapping does not know
    (:class:`~rwpost.errors.UnknownRatingError` is caught here): the raw word stays in ``rating`` for the
    stage to count (:func:`rating_outcome`).
    """
    page = as_tree(html)
    facts = page_facts(page, news_url, crawled)  # before tag_html, which strips the claim box from the tree
    tagged = tag_html(html, base_url=news_url, page=page)
    rating, published = facts["rating"], facts["date_published"]
    return TaggedArticle(
        id=crawled.id if crawled is not None else record_id(news_url),
        news_url=news_url,
        headline=facts["headline"],
        claim=facts["claim"],
        rating=rating,
        label=rating_outcome(rating)[0],
        category=facts["category"],
        claim_time=published.date() if published is not None else None,
        text=tagged.text,
        links=tagged.links,
        word_count=tagged.word_count,
    )
