"""HTML -> text with tagged URLs (paper III-B.2) and the link table the tags refer to.

Every link and embedded medium of the article body stays where it was, as a numbered tag typed by
kind: ``[IMAGE 3: url]``, ``[VIDEO 4: url]``, ``[WEBPAGE 5: url]``. A URL that appears several times
keeps one id (its first anchor and sentence go into the link table). Only the main content is used:
the Snopes body container when the page has one, trafilatura's main-content extraction otherwise;
navigation, ads, share widgets, related articles and author bios are dropped.

Parsing is a pure function of the HTML string (STYLE.md 3), tested on saved real pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from html import unescape
from typing import Any
from urllib.parse import parse_qs, unquote, urljoin, urlsplit

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction

from rwpost.ids import record_id
from rwpost.labels import map_rating
from rwpost.records import CrawledArticle, Link, LinkKind, TaggedArticle

BODY_SELECTORS: tuple[str, ...] = (
    "article#article-content",  # Snopes 2022-2026 layout (main#article_main)
    "div.content-wrapper div.content",  # Snopes 2019-2021 layout, under the "Origin" card
    "div.single-body",
    "div.entry-content",
    "div.post-content",
    "article .content",
)
"""Body containers of known layouts, most specific first; ``article`` / trafilatura come after."""

DROP_SELECTORS: tuple[str, ...] = (
    "script, style, noscript, template, svg, form, input, button, select, textarea, iframe[src=''], nav",
    "header, footer, aside",
    "section#fact_check_rating_container",  # claim and rating box: page metadata, not body text
    "[class*='ad-unit'], [class*='snopesad'], [class*='bigcrunch'], [class*='smg-zone'], [id^='div-gpt-ad']",
    "[class*='advert'], [class*='sponsor'], [class*='newsletter'], [class*='promo']",
    "[class*='share'], [class*='social-buttons'], [class*='related'], [class*='recirc'], [class*='trending']",
    "[class*='author-container'], [class*='author_bio'], [class*='author-bio'], [class*='breadcrumb']",
    "[class*='sources_wrapper'], [class*='comments'], [class*='tags-wrapper'], [class*='article_tags']",
)
"""Boilerplate inside a body container: scripts, ads (Snopes ``outer-ad-unit-wrapper snopesad``,
``bigcrunch-unit``, 2019 ``smg-zone``), share widgets, related links, bios, sources block."""

BLOCK_TAGS = frozenset(
    "address article blockquote dd details div dl dt figcaption figure h1 h2 h3 h4 h5 h6 hr li main ol p "
    "pre section table tbody td tfoot th thead tr ul".split()
)

IMAGE_EXTENSIONS = frozenset("jpg jpeg png gif webp bmp tif tiff svg avif heic jfif".split())
VIDEO_EXTENSIONS = frozenset("mp4 m4v mov webm mkv avi wmv flv mpeg mpg m3u8 3gp ogv gifv".split())
ARCHIVE_HOSTS = ("web.archive.org", "archive.org", "archive.today", "archive.ph", "archive.is", "archive.li")
ARCHIVE_HOSTS += ("archive.md", "archive.vn", "archive.fo", "perma.cc", "ghostarchive.org")
VIDEO_HOSTS = ("youtube.com", "youtu.be", "youtube-nocookie.com", "tiktok.com", "vimeo.com", "rumble.com")
VIDEO_HOSTS += ("dailymotion.com", "bitchute.com", "streamable.com", "twitch.tv")

LEAD_IMAGE_SELECTORS: tuple[tuple[str, str], ...] = (
    ("section.cover-wrapper img#cover-main", "section.cover-wrapper .article_img_desc"),  # 2022-2026
    (".featured-media-wrapper figure.featured-media img", ".featured-media-wrapper figcaption"),  # 2019-2021
)
"""The article's lead image and its caption: outside the body container on Snopes, yet often the
claim image itself, so it opens the tagged text as the first tag."""

TAG_RE = re.compile(r"\[(IMAGE|VIDEO|WEBPAGE) (\d+): [^\]\s]*\]")
_SKIP_SCHEMES = ("mailto:", "javascript:", "tel:", "sms:", "data:", "about:")


@dataclass
class TaggedText:
    """The result of tagging one body: text with tags, the link table, word count and which body."""

    text: str
    links: list[Link]
    word_count: int
    body: str = field(default="", metadata={"doc": "selector or 'trafilatura' that found the body"})


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _host_is(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def _extension(path: str) -> str:
    last = unquote(path).rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[-1].lower() if "." in last else ""


def link_kind(url: str) -> LinkKind:
    """Image, video or webpage, by file extension and by known hosts.

    Archive captures (archive.org, archive.today and mirrors, perma.cc) are webpages whatever they
    captured; video platforms and Facebook/Instagram video URLs are videos; X/Twitter posts are
    webpages (a post may hold a video, but the URL names the post); image CDNs that put the file
    in a query (``media-proxy.snopes.com/width/600?url=...png``, ``pbs.twimg.com/...?format=jpg``)
    are images.
    """
    parts = urlsplit(url)
    host = _host(url)
    path = parts.path or ""
    if _host_is(host, ARCHIVE_HOSTS):
        return "webpage"
    if _host_is(host, VIDEO_HOSTS):
        return "video"
    if _host_is(host, ("facebook.com", "fb.watch")) and (
        host.endswith("fb.watch") or "/videos/" in path or path.startswith("/watch") or "/reel/" in path
    ):
        return "video"
    if _host_is(host, ("instagram.com",)) and ("/reel/" in path or "/reels/" in path or "/tv/" in path):
        return "video"
    extension = _extension(path)
    if extension in IMAGE_EXTENSIONS:
        return "image"
    if extension in VIDEO_EXTENSIONS:
        return "video"
    query = parse_qs(parts.query)
    for key in ("url", "src", "u"):
        for inner in query.get(key, []):
            inner_ext = _extension(urlsplit(inner).path)
            if inner_ext in IMAGE_EXTENSIONS:
                return "image"
            if inner_ext in VIDEO_EXTENSIONS:
                return "video"
    fmt = (query.get("format") or [""])[0].lower()
    if fmt in IMAGE_EXTENSIONS:
        return "image"
    return "webpage"


def _resolve(url: str | None, base_url: str | None) -> str | None:
    """An absolute http(s) URL, or None for anchors, scripts, mail links and placeholders."""
    if not url:
        return None
    url = unescape(url).strip()
    if not url or url.startswith("#") or url.lower().startswith(_SKIP_SCHEMES):
        return None
    if url.startswith("//"):
        url = "https:" + url
    if base_url and not url.lower().startswith(("http://", "https://")):
        url = urljoin(base_url, url)  # absolute URLs stay exactly as written
    if not url.lower().startswith(("http://", "https://")):
        return None
    return url


IMAGE_SRC_ATTRIBUTES: tuple[str, ...] = ("data-lazy-src", "data-src", "data-original", "src")
"""Where an ``<img>`` keeps its real URL, lazy-load attributes first (the crawler uses the same order)."""
IMAGE_SRCSET_ATTRIBUTES: tuple[str, ...] = ("data-lazy-srcset", "data-srcset", "srcset")


def image_url_from_attrs(attrs: Mapping[str, Any]) -> str | None:
    """The real image URL of a possibly lazy-loaded ``<img>`` from its attributes; data: URLs skipped.

    Shared by the tagger and the crawler so the link the text gives is the one the crawler downloads.
    """
    for attr in IMAGE_SRC_ATTRIBUTES:
        value = attrs.get(attr)
        if isinstance(value, str) and value.strip() and not value.strip().startswith("data:"):
            return value.strip()
    for attr in IMAGE_SRCSET_ATTRIBUTES:
        value = attrs.get(attr)
        if isinstance(value, str) and value.strip():
            candidates = [c.strip().split(" ")[0] for c in value.split(",") if c.strip()]
            if candidates:
                return candidates[-1]
    return None


def _image_src(img: Tag) -> str | None:
    """The real image URL of an ``<img>`` element."""
    return image_url_from_attrs(img.attrs)


def _embed_url(node: Tag) -> str | None:
    """The URL an embedded post or player stands for (iframes, tweet boxes, social blockquotes)."""
    if node.name == "iframe":
        src = node.get("data-src") or node.get("src") or node.get("data-lazy-src")
        return src if isinstance(src, str) else None
    if node.name == "video":
        src = node.get("src") or node.get("data-src")
        if not src:
            source = node.find("source")
            src = source.get("src") if isinstance(source, Tag) else None
        return src if isinstance(src, str) else None
    tweet_id = node.get("data-tweet-id")
    if isinstance(tweet_id, str) and tweet_id.strip().isdigit():
        # Snopes renders tweets client-side from an empty div.twitter_tweet_display_box[data-tweet-id]
        return f"https://twitter.com/i/status/{tweet_id.strip()}"
    for attr in ("data-instgrm-permalink", "cite", "data-href"):
        value = node.get(attr)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _is_embed(node: Tag) -> bool:
    classes = " ".join(node.get("class") or [])
    if node.name in ("iframe", "video"):
        return True
    if node.get("data-tweet-id"):
        return True
    if node.name == "blockquote" and re.search(
        r"twitter-tweet|instagram-media|tiktok-embed|fb-xfbml", classes
    ):
        return True
    return node.name == "div" and bool(re.search(r"\bfb-(post|video)\b", classes))


class _Builder:
    """Walks a body in document order, writing text and tags and numbering the links."""

    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.parts: list[str] = []
        self.by_url: dict[str, Link] = {}
        self.links: list[Link] = []
        self.quote_depth = 0

    def tag(self, url: str | None, anchor: str = "") -> None:
        resolved = _resolve(url, self.base_url)
        if resolved is None:
            return
        link = self.by_url.get(resolved)
        if link is None:
            link = Link(id=len(self.links) + 1, kind=link_kind(resolved), url=resolved, anchor=anchor.strip())
            self.by_url[resolved] = link
            self.links.append(link)
        shown = resolved.replace("]", "%5D").replace(" ", "%20")
        self.parts.append(f" [{link.kind.upper()} {link.id}: {shown}] ")

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
                continue
            if isinstance(child, NavigableString):
                self.parts.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name == "br":
                self.parts.append("\n")
                continue
            block = name in BLOCK_TAGS
            if block:
                self.parts.append("\n\n> " if self.quote_depth or name == "blockquote" else "\n\n")
            if name == "blockquote":
                self.quote_depth += 1  # quoted text (often the post itself) is marked "> " as in Markdown
            if _is_embed(child):
                if name == "blockquote":
                    self.walk(child)
                self.tag(_embed_url(child))
            elif name == "a":
                anchor = child.get_text(" ", strip=True)
                if anchor != (child.get("href") or "").strip():  # a bare URL as anchor: the tag says it
                    self.walk(child)
                self.tag(child.get("href") if isinstance(child.get("href"), str) else None, anchor)
            elif name == "img":
                src = _image_src(child)
                self.tag(src, str(child.get("alt") or ""))
            else:
                self.walk(child)
            if name == "blockquote":
                self.quote_depth -= 1
            if block:
                self.parts.append("\n\n> " if self.quote_depth else "\n\n")


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


def find_body(soup: BeautifulSoup) -> tuple[Tag | None, str]:
    """The main content container of a page and the selector that found it."""
    for selector in BODY_SELECTORS:
        node = soup.select_one(selector)
        if node is not None and node.get_text(strip=True):
            return node, selector
    articles = [a for a in soup.find_all("article") if a.get_text(strip=True)]
    if articles:
        return max(articles, key=lambda a: len(a.get_text())), "article"
    return None, ""


def _clean(body: Tag) -> None:
    for selector in DROP_SELECTORS:
        for node in body.select(selector):
            if node is not body:
                node.decompose()


def tag_html(html: str, base_url: str | None = None, soup: BeautifulSoup | None = None) -> TaggedText:
    """Tag the main content of one page (the Snopes body container, else trafilatura's extraction).

    ``soup`` may be the page already parsed (it is modified: boilerplate is removed from it).
    """
    soup = soup if soup is not None else BeautifulSoup(html, "lxml")
    body, selector = find_body(soup)
    if body is None:
        body, selector = _trafilatura_body(html), "trafilatura"
    builder = _Builder(base_url)
    _tag_lead_image(soup, body, builder)
    if body is not None:
        _clean(body)
        builder.walk(body)
    text = _normalise("".join(builder.parts))
    return TaggedText(
        text=text, links=_with_contexts(text, builder.links), word_count=count_words(text), body=selector
    )


def _tag_lead_image(soup: BeautifulSoup, body: Tag | None, builder: _Builder) -> None:
    for image_selector, caption_selector in LEAD_IMAGE_SELECTORS:
        image = soup.select_one(image_selector)
        if image is None or (body is not None and body in image.parents):
            continue
        src = _image_src(image)
        if not src:
            continue
        builder.tag(src, str(image.get("alt") or ""))
        caption = soup.select_one(caption_selector)
        if caption is not None:
            builder.parts.append(" " + caption.get_text(" ", strip=True))
        builder.parts.append("\n\n")
        return


def _trafilatura_body(html: str) -> Tag | None:
    """Main content found by trafilatura (links and images kept), as a tree to walk."""
    import trafilatura

    extracted = trafilatura.extract(
        html, output_format="html", include_links=True, include_images=True, include_comments=False
    )
    if not extracted:
        return None
    return BeautifulSoup(extracted, "lxml").body


# --- page facts: claim, rating and dates from the page itself ------------------------------------


@dataclass
class PageFacts:
    """What a fact-check page says about itself, read from ClaimReview JSON-LD or the layout."""

    headline: str | None = None
    claim: str | None = None
    rating: str | None = None
    date_published: str | None = None
    category: str | None = None
    url: str | None = None
    image_urls: list[str] = field(default_factory=list)


def _json_ld_objects(soup: BeautifulSoup) -> list[dict]:
    out: list[dict] = []
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            data = json.loads(script.string or script.get_text() or "")
        except (json.JSONDecodeError, TypeError):
            continue
        stack = data if isinstance(data, list) else [data]
        for item in stack:
            if isinstance(item, dict):
                out.append(item)
                out.extend(x for x in item.get("@graph", []) if isinstance(x, dict))
    return out


def _text(node: Tag | None) -> str | None:
    if node is None:
        return None
    text = re.sub(r"\s+", " ", node.get_text(" ", strip=True)).strip()
    return text or None


def _parse_shown_date(text: str | None) -> str | None:
    """ISO date of a human-readable page date ("Published March 3, 2025", "30 September 2017")."""
    if not text:
        return None
    text = re.sub(r"^(published|updated)\s*", "", text.strip(), flags=re.IGNORECASE)
    for fmt in ("%B %d, %Y", "%d %B %Y", "%b %d, %Y", "%d %b %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def read_page_facts(html: str | BeautifulSoup) -> PageFacts:
    """Claim, rating, headline, date, category and lead images of a Snopes page (both layouts)."""
    soup = html if isinstance(html, BeautifulSoup) else BeautifulSoup(html, "lxml")
    facts = PageFacts()
    for obj in _json_ld_objects(soup):
        kind = obj.get("@type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "ClaimReview" in kinds:
            facts.claim = facts.claim or unescape(str(obj.get("claimReviewed") or "")).strip() or None
            rating = obj.get("reviewRating") or {}
            if isinstance(rating, dict):
                facts.rating = facts.rating or (str(rating.get("alternateName") or "").strip() or None)
        if "Article" in kinds or "NewsArticle" in kinds:
            facts.headline = facts.headline or (str(obj.get("headline") or "").strip() or None)
            facts.date_published = facts.date_published or obj.get("datePublished")
            facts.category = facts.category or obj.get("articleSection")
    # 2022-2026 layout
    facts.claim = facts.claim or _text(soup.select_one(".claim_wrapper .claim_cont"))
    if facts.rating is None:
        wrap = soup.select_one("#fact_check_rating_container .rating_title_wrap")
        if wrap is not None:
            first = next((s.strip() for s in wrap.find_all(string=True, recursive=False) if s.strip()), None)
            facts.rating = first
    # 2019-2021 layout
    facts.claim = facts.claim or _text(soup.select_one("div.claim-wrapper div.claim p"))
    if facts.rating is None:
        label = soup.select_one("div.rating-wrapper h5[class*='rating-label-']")
        facts.rating = _text(label)
    if facts.rating is None:
        article = soup.select_one("article[class*='fact_check_rating-']")
        if article is not None:
            cls = next(c for c in article.get("class", []) if c.startswith("fact_check_rating-"))
            facts.rating = cls.removeprefix("fact_check_rating-").replace("-", " ").title()
    if facts.date_published is None:
        shown = _text(soup.select_one("span.date-published, h3.publish_date, time[datetime]"))
        facts.date_published = _parse_shown_date(shown)
    h1 = soup.select_one("section.title-container h1, header.post-header h1.title, h1")
    facts.headline = facts.headline or _text(h1)
    canonical = soup.select_one("link[rel=canonical]")
    facts.url = canonical.get("href") if canonical is not None else None
    cover = soup.select_one("img#cover-main, figure.featured-media img")
    if cover is not None and _image_src(cover):
        facts.image_urls.append(str(_image_src(cover)))
    return facts


# --- the stage record ----------------------------------------------------------------------------


def _day(value: object) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
    except ValueError:
        return None


def tag_article(html: str, news_url: str, crawled: CrawledArticle | None = None) -> TaggedArticle:
    """The :class:`TaggedArticle` of one page: tagged body, link table, and the claim, rating, date and
    category (from the crawl record when it has them, else read from the page itself).

    An unknown rating raises :class:`~rwpost.errors.UnknownRatingError`; the stage rejects the record.
    """
    soup = BeautifulSoup(html, "lxml")
    facts = read_page_facts(soup)  # before tag_html, which strips the claim box from the tree
    tagged = tag_html(html, base_url=news_url, soup=soup)

    def pick(name: str) -> object:
        value = getattr(crawled, name, None) if crawled is not None else None
        return value if value not in (None, "") else getattr(facts, name, None)

    rating = pick("rating")
    label = map_rating(str(rating)).label if rating else None
    return TaggedArticle(
        id=crawled.id if crawled is not None else record_id(news_url),
        news_url=news_url,
        headline=pick("headline"),
        claim=pick("claim"),
        rating=rating,
        label=label,
        category=pick("category"),
        claim_time=_day(pick("date_published")),
        text=tagged.text,
        links=tagged.links,
        word_count=tagged.word_count,
    )
