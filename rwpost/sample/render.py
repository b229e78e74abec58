"""HTML of the sample site: one article renderer per Snopes layout, and the listing pages.

The markup follows the real pages in ``tests/fixtures/snopes_html/`` (see ``SOURCES.md`` there): the
2020s theme with Article and ClaimReview JSON-LD, and the 2017-2019 WordPress theme without JSON-LD.
Navigation, ads, share widgets and related-article lists sit outside the article body, as on Snopes,
so the tagger must leave them out.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from datetime import date

from rwpost.sample.records import SiteArticle
from rwpost.snopes.layouts import LAYOUT_2020S, LAYOUT_WORDPRESS

PAGE_SIZE = 10
"""Articles per listing page (the archive and each category)."""

_e = html.escape


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "uncategorized"


def _long_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def _us_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _nav(categories: list[str]) -> str:
    """Site navigation, outside every article body (extraction must drop it)."""
    links = "".join(f'<li><a href="/fact-check/category/{slugify(c)}/">{_e(c)}</a></li>' for c in categories)
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
    rating_slug = slugify(article.rating)
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
    rating_slug = slugify(article.rating)
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
<article class="snopes-post fact_check type-fact_check fact_check_category-{slugify(category)} \
fact_check_rating-{rating_slug}">
<nav class="breadcrumbs"><ol class="breadcrumb"><li class="breadcrumb-item"><a href="/">Home</a></li>
<li class="breadcrumb-item"><a href="/fact-check/">Fact Checks</a></li>
<li class="breadcrumb-item"><a href="/fact-check/category/{slugify(category)}/">{_e(category)}</a></li>
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


def paginate(base: str, title: str, items: list[SiteArticle], categories: list[str]) -> dict[str, str]:
    """Listing pages for ``items``: ``base`` then ``base + 'page/N/'`` (Snopes' pagination scheme)."""
    pages: dict[str, str] = {}
    chunks = [items[i : i + PAGE_SIZE] for i in range(0, len(items), PAGE_SIZE)] or [[]]
    for number, chunk in enumerate(chunks, start=1):
        path = base if number == 1 else f"{base}page/{number}/"
        prev_url = None if number == 1 else (base if number == 2 else f"{base}page/{number - 1}/")
        next_url = f"{base}page/{number + 1}/" if number < len(chunks) else None
        pages[path] = render_listing(f"{title} (page {number})", chunk, categories, prev_url, next_url)
    return pages


Renderer = Callable[[SiteArticle, list[str], list[SiteArticle]], str]
"""An article page from the article, the site's categories (for the navigation) and related articles."""

RENDERERS: dict[str, Renderer] = {LAYOUT_2020S: render_2020s, LAYOUT_WORDPRESS: render_wordpress}
"""The renderer of each layout an article can have (:attr:`SiteArticle.layout`)."""


def render_article(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """The article's page in its own layout."""
    return RENDERERS[article.layout](article, categories, others)
