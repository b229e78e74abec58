"""The local Snopes-like site: a generator from the released RW-Post records and a loopback server.

The crawler is the project's edge to the real web; tests and the default pipeline run the real spider
against this site instead. Every article page carries a real released record's claim, rating,
category, date, post text, evidence sentences and their real URLs, in one of the two Snopes layouts
(the 2017-2019 WordPress theme or the 2020s theme, see ``tests/fixtures/snopes_html/SOURCES.md``),
with ``link[rel=canonical]`` set to the record's real ``news_url`` so crawled ids equal the released
ids. What the release does not carry (headlines, authors, intros, the images themselves) is generated
and labelled as such. ``gold.jsonl`` holds the answer for every page; hostile pages (missing rating,
truncated HTML, 404, 500 then success, 429 with Retry-After, redirect loop, very large page, non-image
served as an image, decompression bomb, robots-disallowed page) test the crawler's failure paths.
"""

from __future__ import annotations

import html
import json
import math
import random
import re
import threading
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from rwpost.errors import RecordError, RwpostError
from rwpost.ids import record_id
from rwpost.io import write_bytes, write_jsonl, write_text
from rwpost.snopes.layouts import LAYOUT_2020S, LAYOUT_WORDPRESS

RELEASED_FILES: tuple[str, ...] = (
    "rwpost_dev_main.head.jsonl",
    "rwpost_dev_other_labels.jsonl",
    "demo/demo.jsonl",
)
"""Released files the site is built from, relative to ``data/sample/released/``."""

SITE_BASE_TOKEN = "__SITE_BASE__"
"""Placeholder in robots.txt and sitemaps that the server replaces with ``http://127.0.0.1:PORT``."""

HOSTILE_HOST = "https://sample.rwpost.invalid"
"""Canonical host of generated pages that have no released record (hostile and synthetic pages)."""

PAGE_SIZE = 10
"""Articles per listing page (the archive and each category)."""


# Display words of the released upper-case labels (the Snopes rating wording).
_RATING_WORDS = {
    "FALSE": "False",
    "TRUE": "True",
    "MIXTURE": "Mixture",
    "UNPROVEN": "Unproven",
    "SATIRE": "Satire",
    "OUTDATED": "Outdated",
}


@dataclass
class SiteEvidence:
    """One evidence item of a released record, rendered as a body paragraph with its source link."""

    content: str
    source: str | None
    url: str | None


@dataclass
class SiteArticle:
    """One article page of the sample site: released fields plus where the page lives."""

    news_url: str
    id: str
    path: str
    claim: str
    rating: str
    category: str | None
    date: str | None
    headline: str
    post_text: str | None
    post_link: str | None
    image_link: str | None
    ocr: str | None
    reasoning_logic: str | None
    evidence: list[SiteEvidence] = field(default_factory=list)
    source_file: str = ""
    image_path: str | None = None
    image_size: tuple[int, int] | None = None

    @property
    def layout(self) -> str:
        """Pages dated 2020 or later use the 2020s theme (with ClaimReview JSON-LD), older ones WordPress."""
        if self.date and int(self.date[:4]) >= 2020:
            return LAYOUT_2020S
        return LAYOUT_WORDPRESS

    @property
    def slug(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


def _clean(value: Any) -> str | None:
    """A released text field, or None for the release's empty markers ("None", "", null)."""
    if value is None:
        return None
    text = str(value).strip()
    return None if text in ("", "None", "null") else text


def _page_path(news_url: str) -> str:
    """Local path of a released article: the news URL's path, cleaned of the release's stray quotes."""
    path = urlsplit(news_url.strip().strip('"')).path.replace('"', "")
    path = re.sub(r"/{2,}", "/", path)
    return path if path.endswith("/") else path + "/"


def _headline(claim: str, rating: str) -> str:
    """A generated headline (the release carries none): the claim, shortened, with the rating."""
    words = claim.split()
    short = " ".join(words[:14]) + ("..." if len(words) > 14 else "")
    return f"Fact check ({rating}): {short}"


def article_from_released(row: dict[str, Any], *, source: str, line: int) -> SiteArticle:
    """Map one released record (flat dev format or nested demo format) to a site article."""
    news_url = _clean(row.get("news_url"))
    claim = _clean(row.get("claim"))
    if not news_url or not claim:
        raise RecordError("needs news_url and claim", source=source, line=line)
    steps = row.get("steps_in_groundtruth_generated")
    if isinstance(steps, dict):  # demo format: fields nested by pipeline step
        post = steps.get("Post") or {}
        post_text, post_link = _clean(post.get("text")), _clean(post.get("post_link"))
        image_link, ocr = _clean(post.get("image_link")), _clean(post.get("OCR"))
        reasoning = _clean((steps.get("Sub_step_1") or {}).get("reasoning_logic"))
        raw_evidence = (steps.get("Sub_step_5") or {}).get("fact_checking_evidence") or []
        evidence = [
            SiteEvidence(
                content=str(item.get("evidence_content") or ""),
                source=_clean(item.get("evidence_source")),
                url=_clean(item.get("evidence_url")),
            )
            for item in raw_evidence
        ]
        rating = str(row.get("label_original"))
    else:
        post_text, post_link = _clean(row.get("post_text")), _clean(row.get("post_link"))
        image_link, ocr = _clean(row.get("image_link")), _clean(row.get("OCR"))
        reasoning = _clean(row.get("reasoning_logic"))
        evidence = [
            SiteEvidence(
                content=str(item.get("content") or ""),
                source=_clean(item.get("source")),
                url=_clean(item.get("url")),
            )
            for item in row.get("fact_checking_evidence") or []
        ]
        label = str(row.get("label") or "").strip()
        if label.upper() not in _RATING_WORDS:
            raise RecordError(f"unknown label {label!r}", source=source, line=line, field="label")
        rating = _RATING_WORDS[label.upper()]
    return SiteArticle(
        news_url=news_url,
        id=record_id(news_url),
        path=_page_path(news_url),
        claim=claim,
        rating=rating,
        category=_clean(row.get("category")),
        date=_clean(row.get("claim_time")),
        headline=_headline(claim, rating),
        post_text=post_text,
        post_link=post_link,
        image_link=image_link,
        ocr=ocr,
        reasoning_logic=reasoning,
        evidence=evidence,
        source_file=source,
    )


def load_released_articles(released_dir: Path) -> list[SiteArticle]:
    """Read the released records (JSON read directly, all three files) as site articles."""
    articles: list[SiteArticle] = []
    seen: set[str] = set()
    for name in RELEASED_FILES:
        path = released_dir / name
        if not path.exists():
            raise RwpostError(f"{path}: released file not found (needed to build the sample site)")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            article = article_from_released(json.loads(line), source=name, line=number)
            if article.id in seen:
                continue
            seen.add(article.id)
            articles.append(article)
    return articles


# --- images ---------------------------------------------------------------------------------------

_IMAGE_SIZES: tuple[tuple[int, int], ...] = (
    (480, 360),
    (640, 360),
    (400, 400),
    (160, 160),
    (600, 315),
    (360, 480),
    (180, 120),
    (512, 288),
)
"""Stand-in image sizes: social-media-like shapes, two of them below 200x200 (the size filter's case)."""


def draw_stand_in_image(seed: str, size: tuple[int, int], text: str | None) -> bytes:
    """A generated photo-like JPEG (gradient sky, ground, shapes) with ``text`` (the record's OCR) on it."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    rng = random.Random(seed)
    width, height = size
    top = tuple(rng.randint(40, 200) for _ in range(3))
    bottom = tuple(rng.randint(20, 160) for _ in range(3))
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    for y in range(height):
        t = y / max(1, height - 1)
        draw.line(
            [(0, y), (width, y)], fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True))
        )
    horizon = int(height * rng.uniform(0.5, 0.75))
    ground = tuple(rng.randint(30, 120) for _ in range(3))
    points = [(0, height), (0, horizon)]
    for x in range(0, width + 40, 40):
        points.append((x, horizon + int(12 * math.sin(x / 37 + rng.random()))))
    points.append((width, height))
    draw.polygon(points, fill=ground)
    for _ in range(rng.randint(3, 7)):
        x, y = rng.randint(0, width), rng.randint(0, height)
        r = rng.randint(max(4, width // 30), max(8, width // 6))
        colour = tuple(rng.randint(0, 255) for _ in range(3))
        if rng.random() < 0.5:
            draw.ellipse([x - r, y - r, x + r, y + r], fill=colour)
        else:
            draw.rectangle([x - r, y - r // 2, x + r, y + r], fill=colour)
    image = image.filter(ImageFilter.GaussianBlur(radius=1.2))
    if text:
        draw = ImageDraw.Draw(image)
        font = ImageFont.load_default(size=max(10, min(22, width // 24)))
        chars_per_line = max(8, int(width / (font.size * 0.55)))
        lines: list[str] = []
        for paragraph in text.splitlines():
            words, current = paragraph.split(), ""
            for word in words:
                if len(current) + len(word) + 1 > chars_per_line and current:
                    lines.append(current)
                    current = word
                else:
                    current = f"{current} {word}".strip()
            if current:
                lines.append(current)
        line_height = font.size + 4
        lines = lines[: max(1, (height - 10) // line_height)]
        box_height = line_height * len(lines) + 8
        draw.rectangle([0, 0, width, box_height], fill=(250, 250, 250))
        for index, line in enumerate(lines):
            draw.text((6, 4 + index * line_height), line, fill=(15, 15, 15), font=font)
    buffer = BytesIO()
    image.save(buffer, format="JPEG", quality=55, optimize=True)
    return buffer.getvalue()


def draw_decompression_bomb() -> bytes:
    """A tiny PNG that claims 16000x16000 pixels (1-bit): Pillow refuses it as a decompression bomb."""
    from PIL import Image

    buffer = BytesIO()
    Image.new("1", (16000, 16000)).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


# --- pages ----------------------------------------------------------------------------------------

_e = html.escape


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "uncategorized"


def _long_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def _us_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _nav(categories: list[str]) -> str:
    """Site navigation, outside every article body (extraction must drop it)."""
    links = "".join(f'<li><a href="/fact-check/category/{_slugify(c)}/">{_e(c)}</a></li>' for c in categories)
    return (
        '<header class="site-header"><a class="logo" href="/">Snopes-like sample site</a>'
        '<nav class="main-nav"><ul><li><a href="/fact-check/">Fact Checks</a></li>'
        f'<li><a href="/about/">About</a></li>{links}</ul></nav>'
        '<form class="search" action="/search/"><input name="q" placeholder="Search"></form></header>'
    )


_FOOTER = (
    '<footer class="footer-wrapper"><p>Generated sample site for testing the rwpost crawler. '
    'Content from the RW-Post release; see <a href="/README.md">README</a>.</p>'
    '<a href="https://www.facebook.com/snopes">Facebook</a> <a href="https://twitter.com/snopes">X</a></footer>'
)

_AD = (
    '<div class="outer-ad-unit-wrapper snopesad"><span class="ad-caption">Advertisement:</span>'
    '<div class="htlad-snopes_dt_incontent"><a href="https://ads.example.com/click?id=42">'
    "Buy one, get one free</a></div></div>"
)


def _share(url: str) -> str:
    return (
        '<div class="social_total">'
        f'<a class="share" href="https://www.facebook.com/sharer/sharer.php?u={_e(url)}">Share</a>'
        f'<a class="share" href="https://twitter.com/intent/tweet?url={_e(url)}">Post</a></div>'
    )


def _related(article: SiteArticle, others: list[SiteArticle]) -> str:
    links = "".join(f'<li><a href="{_e(o.path)}">{_e(o.headline)}</a></li>' for o in others)
    return f'<aside class="related"><h4>Related Articles</h4><ul>{links}</ul></aside>'


def _post_image_tag(article: SiteArticle) -> str:
    if not article.image_path:
        return ""
    width, height = article.image_size or (0, 0)
    return (
        f'<figure class="post-image"><img src="/{_e(article.image_path)}" '
        f'data-original-src="{_e(article.image_link or "")}" width="{width}" height="{height}" '
        f'alt="Image shared with the claim"><figcaption>The image shared with the claim '
        "(generated stand-in).</figcaption></figure>"
    )


def _body_parts(article: SiteArticle) -> str:
    """The article body: intro, embedded post, post image, evidence paragraphs, conclusion."""
    parts = [f"<p>A post shared online made the following claim: {_e(article.claim)}</p>"]
    if article.post_text or article.post_link:
        link = (
            f'<a class="embed-link" href="{_e(article.post_link)}">{_e(article.post_link)}</a>'
            if article.post_link
            else ""
        )
        parts.append(
            f'<blockquote class="social-embed"><p>{_e(article.post_text or "")}</p>{link}</blockquote>'
        )
    parts.append(_post_image_tag(article))
    parts.append(_AD)
    for item in article.evidence:
        anchor = f' (<a href="{_e(item.url)}">source</a>)' if item.url else ""
        origin = f"{_e(item.source)}: " if item.source else ""
        parts.append(f"<p>{origin}{_e(item.content)}{anchor}</p>")
    if article.reasoning_logic:
        parts.append(f'<p class="conclusion">{_e(article.reasoning_logic)}</p>')
    return "\n".join(p for p in parts if p)


def _sources(article: SiteArticle) -> list[str]:
    return [f"{item.source or 'Source'}. {item.url}." for item in article.evidence if item.url]


def render_2020s(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """A page in the 2022-2026 layout: Article + ClaimReview JSON-LD, ``.claim_cont``, rating title."""
    iso = f"{article.date}T12:00:00Z" if article.date else None
    ld_article = {
        "@context": "http://schema.org",
        "@type": "Article",
        "headline": article.headline,
        "url": article.news_url,
        "datePublished": iso,
        "dateModified": iso,
        "articleSection": article.category,
        "image": [f"/{article.image_path}"] if article.image_path else [],
        "author": {"@type": "Person", "name": "Sample Site Author", "url": "/author/sample-site/"},
        "description": article.claim,
    }
    ld_review = {
        "@context": "http://schema.org",
        "@type": "ClaimReview",
        "datePublished": iso,
        "url": article.news_url,
        "author": {"@type": "Organization", "url": "https://www.snopes.com"},
        "claimReviewed": article.claim,
        "reviewRating": {"@type": "Rating", "alternateName": article.rating},
    }
    rating_slug = _slugify(article.rating)
    date_line = f'<h3 class="publish_date">Published {_us_date(article.date)}</h3>' if article.date else ""
    sources = "".join(f"<p>{_e(s)}</p>" for s in _sources(article))
    cover = (
        f'<section class="cover-wrapper"><div class="article_img"><img id="cover-main" '
        f'src="/{_e(article.image_path)}" alt="cover"></div></section>'
        if article.image_path
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_e(article.headline)} | Snopes.com</title>
<link rel="canonical" href="{_e(article.news_url)}">
<meta property="og:url" content="{_e(article.news_url)}">
<meta property="article:published_time" content="{_e(article.date or "")}">
<meta property="article:section" content="{_e(article.category or "")}">
<script type="application/ld+json">{json.dumps(ld_article, ensure_ascii=False)}</script>
<script type="application/ld+json">{json.dumps(ld_review, ensure_ascii=False)}</script>
</head>
<body>{_nav(categories[:4])}
<main id="article_main"><section class="main-content">
<div class="section_title_wrap"><span class="section_title">Fact Check</span></div>
<section class="title-container"><h1>{_e(article.headline)}</h1>
<h2>{_e(article.category or "")}</h2>
<div class="author_wrap"><h3 class="author_name"><a class="author_link" href="/author/sample-site/">
Sample Site Author</a></h3></div>
<div class="published_date">{date_line}</div></section>
{cover}
{_share(article.news_url)}
<article id="article-content">
<section id="fact_check_rating_container">
<div class="claim_wrapper"><span class="wrapper_title">Claim:</span>
<div class="claim_cont">{_e(article.claim)}</div></div>
<div class="rating_wrapper"><span class="wrapper_title">Rating:</span>
<a class="rating_link_wrapper" href="/fact-check/rating/{rating_slug}">
<div class="rating_img_wrap"><img alt="{_e(article.rating)}" class="lazy-image"
 data-src="/design/rating-{rating_slug}.png"></div>
<div class="rating_title_wrap">{_e(article.rating)}<div class="about_this_rating"><p>About this rating</p>
</div></div></a></div>
</section>
<input type="hidden" id="article_url" value="{_e(article.path)}">
{_body_parts(article)}
</article>
<div class="sources_wrapper"><h4>Sources</h4><div id="sources_rows">{sources}</div></div>
{_related(article, others)}
</section></main>
{_FOOTER}
</body></html>
"""


def render_wordpress(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """A page in the 2017-2019 WordPress layout: no JSON-LD, rating in ``h5.rating-label-*`` and classes."""
    category = article.category or "Uncategorized"
    rating_slug = _slugify(article.rating)
    dates = (
        '<ul class="dates-wrapper"><li class="date-item"><span class="label">Published</span>'
        f'<span class="date date-published">{_long_date(article.date)}</span></li></ul>'
        if article.date
        else ""
    )
    citations = "".join(f"<li><p>{_e(s)}</p></li>" for s in _sources(article))
    return f"""<!DOCTYPE html>
<html lang="en-US"><head><meta charset="UTF-8">
<title>{_e(article.headline)} | Snopes.com</title>
<link rel="canonical" href="{_e(article.news_url)}">
<meta property="og:type" content="article">
</head>
<body class="single single-fact_check">{_nav(categories[:4])}
<main class="container"><div class="body-wrapper">
<article class="snopes-post fact_check type-fact_check fact_check_category-{_slugify(category)} \
fact_check_rating-{rating_slug}">
<nav class="breadcrumbs"><ol class="breadcrumb"><li class="breadcrumb-item"><a href="/">Home</a></li>
<li class="breadcrumb-item"><a href="/fact-check/">Fact Checks</a></li>
<li class="breadcrumb-item"><a href="/fact-check/category/{_slugify(category)}/">{_e(category)}</a></li>
</ol></nav>
<header class="post-header"><h1 class="title">{_e(article.headline)}</h1>
<h2 class="subtitle">{_e(category)}</h2>
<div class="authors-wrapper"><ul class="authors"><li>
<a class="author" href="/author/sample-site/">Sample Site Author</a></li></ul></div>
{dates}
</header>
{_share(article.news_url)}
<div class="claim-wrapper card"><div class="card-header">Claim</div>
<div class="claim"><p>{_e(article.claim)}</p>
</div></div>
<div class="rating-wrapper card"><div class="media rating">
<figure><a href="/fact-check/rating/{rating_slug}/">
<img src="/design/rating-{rating_slug}.png" alt="{_e(article.rating)}"></a></figure>
<div class="media-body"><h5 class="rating-label-{rating_slug}">{_e(article.rating)}</h5>
<a class="rating-help-link" href="/fact-check/rating/{rating_slug}/">About this rating</a></div></div></div>
<div class="content-wrapper card"><div class="card-header"><h2>Origin</h2></div><div class="content">
{_body_parts(article)}
</div></div>
<div class="citations card"><div class="card-header">Sources</div><ul>{citations}</ul></div>
</article>
{_related(article, others)}
</div></main>
{_FOOTER}
</body></html>
"""


def render_listing(
    title: str, items: list[SiteArticle], categories: list[str], prev_url: str | None, next_url: str | None
) -> str:
    """A listing page in the 2020s archive markup (``a.outer_article_link_wrapper``) with pagination."""
    rows = []
    for article in items:
        when = (
            f'<span class="article_date"><time datetime="{article.date}">'
            f"{_us_date(article.date)}</time></span>"
            if article.date
            else ""
        )
        rows.append(
            '<article class="article_wrapper">'
            f'<a class="outer_article_link_wrapper" href="{_e(article.path)}">'
            f'<h3 class="article_title">{_e(article.headline)}</h3>'
            f'<span class="article_byline">{_e(article.rating)}</span>{when}</a></article>'
        )
    head_links = (f'<link rel="prev" href="{prev_url}">' if prev_url else "") + (
        f'<link rel="next" href="{next_url}">' if next_url else ""
    )
    pager = (f'<a class="prev-button" href="{prev_url}">Previous</a>' if prev_url else "") + (
        f'<a class="next-button" href="{next_url}">Next</a>' if next_url else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)} | Snopes.com</title>{head_links}</head>
<body>{_nav(categories)}
<main id="main-list"><h1>{_e(title)}</h1>
<div class="article_list">{"".join(rows)}</div>
<div class="pagination">{pager}</div>
{_AD}
</main>
{_FOOTER}
</body></html>
"""


def _paginate(base: str, title: str, items: list[SiteArticle], categories: list[str]) -> dict[str, str]:
    """Listing pages for ``items``: ``base`` then ``base + 'page/N/'`` (Snopes' pagination scheme)."""
    pages: dict[str, str] = {}
    chunks = [items[i : i + PAGE_SIZE] for i in range(0, len(items), PAGE_SIZE)] or [[]]
    for number, chunk in enumerate(chunks, start=1):
        path = base if number == 1 else f"{base}page/{number}/"
        prev_url = None if number == 1 else (base if number == 2 else f"{base}page/{number - 1}/")
        next_url = f"{base}page/{number + 1}/" if number < len(chunks) else None
        pages[path] = render_listing(f"{title} (page {number})", chunk, categories, prev_url, next_url)
    return pages


# --- hostile pages --------------------------------------------------------------------------------

HOSTILE_PAGES: dict[str, str] = {
    "/fact-check/hostile-missing-rating/": "page without any rating (stored with parse_error)",
    "/fact-check/hostile-truncated/": "HTML cut off before the claim (stored with parse_error)",
    "/fact-check/hostile-gone/": "404 Not Found (stored with http_status 404)",
    "/fact-check/hostile-flaky/": "500 with Retry-After on the first request, then the page (parsed)",
    "/fact-check/hostile-busy/": "429 with Retry-After: 1 on the first request, then the page (parsed)",
    "/fact-check/hostile-loop/": "redirect loop with /fact-check/hostile-loop-back/ (stored with the reason)",
    "/fact-check/hostile-huge/": "a page of about 6 MB (over the crawler's page size cap)",
    "/fact-check/hostile-bad-image/": "images: HTML served as image/jpeg, a decompression bomb, a file: URL",
    "/fact-check/hostile-binary/": "an image where an article should be (stored with parse_error)",
    "/fact-check/hostile-alias/": "a copy of a real article (same canonical URL): dropped as a duplicate",
    "/private/hostile-disallowed/": "disallowed by robots.txt (never fetched)",
}
"""Hostile paths the listing links to, with what the crawler must do (also in ``hostile.json``)."""


def _hostile_article(slug: str, rating: str, template: SiteArticle) -> SiteArticle:
    """A generated page that borrows a released record's text but has its own invalid-host canonical URL."""
    url = f"{HOSTILE_HOST}/fact-check/{slug}/"
    return SiteArticle(
        news_url=url,
        id=record_id(url),
        path=f"/fact-check/{slug}/",
        claim=template.claim,
        rating=rating,
        category="Hostile",
        date=template.date or "2021-01-01",
        headline=f"Generated hostile page: {slug}",
        post_text=template.post_text,
        post_link=template.post_link,
        image_link=None,
        ocr=None,
        reasoning_logic=template.reasoning_logic,
        evidence=template.evidence[:2],
        source_file="generated",
    )


def _hostile_pages(template: SiteArticle, categories: list[str]) -> tuple[dict[str, str], list[SiteArticle]]:
    """Static hostile pages (the server adds the dynamic ones: flaky, busy, loop, huge)."""
    pages: dict[str, str] = {}
    listed: list[SiteArticle] = []
    missing = _hostile_article("hostile-missing-rating", "False", template)
    page = render_2020s(missing, categories, [])
    page = re.sub(
        r'<script type="application/ld\+json">\{"@context": "http://schema.org", "@type": "ClaimReview".*?'
        r"</script>",
        "",
        page,
        flags=re.S,
    )
    page = re.sub(r'<div class="rating_wrapper">.*?</a></div>', "", page, flags=re.S)
    pages[missing.path] = page
    truncated = _hostile_article("hostile-truncated", "False", template)
    full = render_wordpress(truncated, categories, [])
    pages[truncated.path] = full[: full.index('<div class="claim-wrapper')]
    for slug in ("hostile-flaky", "hostile-busy"):
        article = _hostile_article(slug, "True", template)
        pages[article.path] = render_2020s(article, categories, [])
        listed.append(article)
    bad = _hostile_article("hostile-bad-image", "Mixture", template)
    bad.image_path = "uploads/hostile-not-an-image.jpg"
    bad.image_size = (400, 300)
    page = render_2020s(bad, categories, [])
    page = page.replace(
        '<section id="fact_check_rating_container">',
        '<figure><img src="/uploads/hostile-bomb.png" alt="bomb"></figure>'
        '<figure><img src="file:///etc/passwd" alt="not http"></figure>'
        '<section id="fact_check_rating_container">',
    )
    pages[bad.path] = page
    alias = _hostile_article("hostile-alias", template.rating, template)
    render = render_2020s if template.layout == LAYOUT_2020S else render_wordpress
    pages[alias.path] = render(template, categories, [])
    listed.extend([missing, truncated, bad, alias])
    for path in (
        "/fact-check/hostile-gone/",
        "/fact-check/hostile-loop/",
        "/fact-check/hostile-huge/",
        "/fact-check/hostile-binary/",
        "/private/hostile-disallowed/",
    ):
        slug = path.rstrip("/").rsplit("/", 1)[-1]
        stub = _hostile_article(slug, "False", template)
        stub.path = path
        listed.append(stub)
    return pages, listed


# --- the whole site -------------------------------------------------------------------------------


def _sitemap(articles: list[SiteArticle]) -> str:
    urls = []
    for article in articles:
        lastmod = f"<lastmod>{article.date}</lastmod>" if article.date else ""
        urls.append(f"<url><loc>{SITE_BASE_TOKEN}{_e(article.path)}</loc>{lastmod}</url>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + "\n".join(urls) + "\n</urlset>\n"
    )


_ROBOTS = f"""User-agent: *
Disallow: /private/
Disallow: /search/

Sitemap: {SITE_BASE_TOKEN}/sitemap.xml
"""

_README = """# Sample Snopes-like site (generated)

Generated by `rwpost sample build` from the real released RW-Post records in
`data/sample/released/` ({files}). Do not edit by hand; rebuild instead.

- **Real** (from the release): every article's URL (`link rel=canonical` = the record's `news_url`),
  claim, rating (the released label word; `label_original` for the demo records), category, date
  (`claim_time`), post text, post link, original image link (kept in `data-original-src`), evidence
  sentences with their real source URLs, and the reasoning logic used as the conclusion.
- **Generated**: headlines ("Fact check (Rating): ..."), the intro sentence, the author name,
  navigation, ads, share widgets, related-article lists, listing pages, the sitemap and robots.txt,
  the hostile pages under `/fact-check/hostile-*` (canonical host `sample.rwpost.invalid`), and
  **every image**: the release carries image links but not the images, so `uploads/*.jpg` are
  stand-ins drawn with Pillow (gradients and shapes, with the record's real `OCR` text written on
  them when it has one). They are not the original images.

Pages dated 2020 or later use the 2020s Snopes layout with ClaimReview JSON-LD; older or undated
ones use the 2017-2019 WordPress layout without JSON-LD. `gold.jsonl` is the expected crawl result
per article; `hostile.json` lists what the crawler must do on each hostile page.
Serve it with `rwpost sample serve` (127.0.0.1 only).
"""


def build_site(released_dir: Path, out_dir: Path) -> dict[str, int]:
    """Write the sample site (pages, images, listings, sitemap, robots, gold) under ``out_dir``."""
    articles = load_released_articles(released_dir)
    for index, article in enumerate(articles):
        if article.image_link:
            article.image_size = _IMAGE_SIZES[index % len(_IMAGE_SIZES)]
            article.image_path = f"uploads/{article.id}.jpg"
    categories = sorted({a.category for a in articles if a.category})
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, str | bytes] = {}
    for index, article in enumerate(articles):
        others = [articles[(index + k) % len(articles)] for k in (1, 2, 3)]
        render = render_2020s if article.layout == LAYOUT_2020S else render_wordpress
        files[article.path.lstrip("/") + "index.html"] = render(article, categories, others)
        if article.image_path and article.image_size:
            files[article.image_path] = draw_stand_in_image(article.id, article.image_size, article.ocr)
    hostile_files, hostile_listed = _hostile_pages(articles[0], categories)
    for path, text in hostile_files.items():
        files[path.lstrip("/") + "index.html"] = text
    files["uploads/hostile-not-an-image.jpg"] = "<html><body>This is not an image.</body></html>\n"
    files["uploads/hostile-bomb.png"] = draw_decompression_bomb()
    newest_first = sorted(articles, key=lambda a: a.date or "0000", reverse=True)
    listing = newest_first + hostile_listed
    for path, text in _paginate("/fact-check/", "Fact Checks", listing, categories).items():
        files[path.lstrip("/") + "index.html"] = text
    for category in categories:
        members = [a for a in newest_first if a.category == category]
        base = f"/fact-check/category/{_slugify(category)}/"
        for path, text in _paginate(base, f"Category: {category}", members, categories).items():
            files[path.lstrip("/") + "index.html"] = text
    files["index.html"] = render_listing(
        "Snopes-like sample site", newest_first[:PAGE_SIZE], categories, None, "/fact-check/page/2/"
    )
    files["robots.txt"] = _ROBOTS
    files["sitemap.xml"] = _sitemap(newest_first)
    files["README.md"] = _README.format(files=", ".join(RELEASED_FILES))
    hostile = {path: {"expect": what} for path, what in HOSTILE_PAGES.items()}
    for article in hostile_listed:
        if article.path in hostile:
            hostile[article.path]["id"] = article.id
            hostile[article.path]["canonical"] = article.news_url
    files["hostile.json"] = json.dumps(hostile, indent=2, sort_keys=True) + "\n"
    for relative, content in files.items():
        target = out_dir / relative
        if isinstance(content, bytes):
            write_bytes(target, content)
        else:
            write_text(target, content)
    write_jsonl(out_dir / "gold.jsonl", (gold_row(a) for a in articles))
    return {"articles": len(articles), "hostile": len(HOSTILE_PAGES), "files": len(files) + 1}


def gold_row(article: SiteArticle) -> dict[str, Any]:
    """The expected crawl result for one article page."""
    return {
        "id": article.id,
        "news_url": article.news_url,
        "page": article.path,
        "layout": article.layout,
        "claim": article.claim,
        "rating": article.rating,
        "category": article.category,
        "date": article.date,
        "headline": article.headline,
        "post_text": article.post_text,
        "post_link": article.post_link,
        "image_link": article.image_link,
        "image_path": article.image_path,
        "image_size": list(article.image_size) if article.image_size else None,
        "evidence_urls": [e.url for e in article.evidence if e.url],
        "source_file": article.source_file,
    }


def load_gold(site_dir: Path) -> list[dict[str, Any]]:
    """The gold rows of a built site."""
    path = site_dir / "gold.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- the server -----------------------------------------------------------------------------------

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".jpg": "image/jpeg",
    ".png": "image/png",
}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (a crawler refusing a huge page, a killed crawl) is not an error."""

    # socketserver's default backlog of 5 drops connection attempts of a parallel crawler, which then
    # wait out TCP's SYN retransmission (1 s, 3 s, 7 s): a queue this deep keeps loopback crawls fast.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class SampleServer:
    """A threaded HTTP server for the sample site on 127.0.0.1, with the hostile behaviours built in.

    It records every request (method, path, status) in :attr:`requests` so tests can check what the
    crawler fetched. ``synthetic`` adds that many generated article pages (for the benchmark), listed
    under ``/synthetic/`` with pagination.
    """

    def __init__(
        self, site_dir: Path, port: int = 0, synthetic: int = 0, huge_bytes: int = 6_000_000
    ) -> None:
        self.site_dir = Path(site_dir)
        if not (self.site_dir / "robots.txt").exists():
            raise RwpostError(
                f"{self.site_dir}: not a built sample site (no robots.txt; run rwpost sample build)"
            )
        self.synthetic = synthetic
        self.huge_bytes = huge_bytes
        self.requests: list[tuple[str, str, int]] = []
        self._hits: dict[str, int] = {}
        self._lock = threading.Lock()
        self._template: str | None = None
        self.httpd = _QuietServer(("127.0.0.1", port), self._handler_class())
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> SampleServer:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="sample-site", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> SampleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def hit(self, path: str) -> int:
        """Count a request to ``path``; returns how many there have been, this one included."""
        with self._lock:
            self._hits[path] = self._hits.get(path, 0) + 1
            return self._hits[path]

    def respond(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one GET (the whole site logic, also used without a socket)."""
        count = self.hit(path)
        if path == "/fact-check/hostile-flaky/" and count == 1:
            return 500, {"Retry-After": "1", "Content-Type": "text/plain"}, b"temporary failure"
        if path == "/fact-check/hostile-busy/" and count == 1:
            return 429, {"Retry-After": "1", "Content-Type": "text/plain"}, b"too many requests"
        if path == "/fact-check/hostile-loop/":
            return 302, {"Location": "/fact-check/hostile-loop-back/"}, b""
        if path == "/fact-check/hostile-loop-back/":
            return 302, {"Location": "/fact-check/hostile-loop/"}, b""
        if path == "/fact-check/hostile-binary/":
            return (
                200,
                {"Content-Type": "image/png"},
                (self.site_dir / "uploads" / "hostile-bomb.png").read_bytes(),
            )
        if path == "/fact-check/hostile-huge/":
            return 200, {"Content-Type": _CONTENT_TYPES[".html"]}, self._huge_page()
        if self.synthetic and (path.startswith("/synthetic/") or path.startswith("/fact-check/synthetic-")):
            body = self._synthetic(path)
            if body is not None:
                return 200, {"Content-Type": _CONTENT_TYPES[".html"]}, body
        target = (self.site_dir / unquote(path).lstrip("/")).resolve()
        if not str(target).startswith(str(self.site_dir.resolve())):
            return 404, {"Content-Type": "text/plain"}, b"not found"
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            return 404, {"Content-Type": "text/html"}, b"<html><body><h1>404 Not Found</h1></body></html>"
        body = target.read_bytes()
        if target.suffix in (".xml", ".txt"):
            body = body.replace(SITE_BASE_TOKEN.encode(), self.base_url.encode())
            if path == "/sitemap.xml" and self.synthetic:
                body = body.replace(b"</urlset>", self._synthetic_sitemap_entries() + b"</urlset>")
        content_type = _CONTENT_TYPES.get(target.suffix, "application/octet-stream")
        return 200, {"Content-Type": content_type}, body

    def _huge_page(self) -> bytes:
        filler = "<p>" + "padding text of a very large page " * 30 + "</p>\n"
        head = "<html><head><title>Huge page</title></head><body><main>"
        body = filler * (self.huge_bytes // len(filler) + 1)
        return (head + body + "</main></body></html>").encode()

    def _template_page(self) -> str:
        if self._template is None:
            gold = load_gold(self.site_dir)
            first = next(g for g in gold if g["layout"] == LAYOUT_2020S)
            self._template = (self.site_dir / first["page"].lstrip("/") / "index.html").read_text("utf-8")
            self._template_url = first["news_url"]
            self._template_path = first["page"]
        return self._template

    def _synthetic(self, path: str) -> bytes | None:
        match = re.fullmatch(r"/fact-check/synthetic-(\d+)/", path)
        if match and int(match.group(1)) < self.synthetic:
            number = int(match.group(1))
            page = self._template_page()
            url = f"{HOSTILE_HOST}/fact-check/synthetic-{number}/"
            page = page.replace(self._template_url, url).replace(self._template_path, path)
            return page.replace("<h1>", f"<h1>Synthetic page {number}: ", 1).encode()
        match = re.fullmatch(r"/synthetic/(?:page/(\d+)/)?", path)
        if match:
            number = int(match.group(1) or 1)
            items = [
                f"/fact-check/synthetic-{i}/"
                for i in range((number - 1) * 50, min(number * 50, self.synthetic))
            ]
            if not items:
                return None
            rows = "".join(
                f'<article class="article_wrapper"><a class="outer_article_link_wrapper" href="{p}">'
                f'<h3 class="article_title">Synthetic {p}</h3></a></article>'
                for p in items
            )
            nxt = (
                f'<a class="next-button" href="/synthetic/page/{number + 1}/">Next</a>'
                if number * 50 < self.synthetic
                else ""
            )
            return f"<html><body><div class='article_list'>{rows}</div>{nxt}</body></html>".encode()
        return None

    def _synthetic_sitemap_entries(self) -> bytes:
        return b"".join(
            f"<url><loc>{self.base_url}/fact-check/synthetic-{i}/</loc></url>\n".encode()
            for i in range(self.synthetic)
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                path = urlsplit(self.path).path
                status, headers, body = server.respond(path)
                with server._lock:
                    server.requests.append(("GET", path, status))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: requests are recorded
                return

        return Handler


def serve_site(site_dir: Path, port: int = 8000, synthetic: int = 0) -> None:
    """Serve the sample site on 127.0.0.1 until interrupted."""
    server = SampleServer(site_dir, port=port, synthetic=synthetic)
    print(f"serving {site_dir} on {server.base_url}/ (Ctrl-C to stop)", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
