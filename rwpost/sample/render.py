"""HTML of the sample site: one article renderer per Snopes layout, and the listing pages.

The markup follows the real pages in ``tests/fixtures/snopes_html/`` (see ``SOURCES.md`` there): the
2017 to mid-2018 theme (schema.org microdata), the late-2018 card theme, the 2019-2021 WordPress theme
(none of them with JSON-LD) and the 2022+ theme with Article and ClaimReview JSON-LD. The article text
is written from the released record in varied, article-like prose (where the claim was shared, the
post's text and image introduced as real articles introduce them, one sentence per finding with its
source linked on a varied anchor, the conclusion), never in one fixed phrasing a rule could learn.
Navigation, ads, share widgets and related-article lists sit outside the article body, as on Snopes,
so the tagger must leave them out.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import TypeVar

from rwpost.ids import stable_seed
from rwpost.sample.records import SiteArticle
from rwpost.snopes.layouts import LAYOUT_2018_LATE, LAYOUT_2018_MICRODATA, LAYOUT_2020S, LAYOUT_WORDPRESS
from rwpost.urls import url_host

T = TypeVar("T")

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
        f'<figure class="wp-caption aligncenter"><img src="/{_e(article.image_path)}" '
        f'data-original-src="{_e(article.image_link or "")}" width="{width}" height="{height}" alt="">'
        "<figcaption>Generated stand-in image.</figcaption></figure>"
    )


def _pick(article: SiteArticle, salt: str, options: Sequence[T]) -> T:
    """One of ``options``, chosen by the article's id (deterministic, varied across articles)."""
    # the seed's top 32 bits: the committed sample site was generated from the digest's first 4 bytes
    return options[(stable_seed(article.id, salt) >> 32) % len(options)]


_PLATFORMS = (
    ("facebook.com", "Facebook"),
    ("fb.watch", "Facebook"),
    ("twitter.com", "Twitter"),
    ("x.com", "X"),
    ("instagram.com", "Instagram"),
    ("tiktok.com", "TikTok"),
    ("reddit.com", "Reddit"),
    ("youtube.com", "YouTube"),
    ("pinterest.com", "Pinterest"),
    ("archive.", "social media"),
    ("web.archive.org", "social media"),
)


def _platform(url: str) -> str | None:
    host = url_host(url)
    for domain, name in _PLATFORMS:
        if domain in host:
            return name
    return None


def _month_year(article: SiteArticle) -> str:
    if not article.date:
        return "recent months"
    d = date.fromisoformat(article.date)
    return f"{d.strftime('%B')} {d.year}"


_COMMON_OPENERS = frozenset(
    "a an the this that these those there it its some several many no one two three people photographs "
    "photograph photo photos image images picture pictures video videos footage clip meme post posts "
    "article story quote text message document map chart screenshot someone former".split()
)


def _lower_first(text: str) -> str:
    """``text`` without its final stop, its first word lowercased when it is a common word (not a name)."""
    text = text.strip().rstrip(".")
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first.lower() in _COMMON_OPENERS else text


def _a(url: str, anchor: str) -> str:
    return f'<a href="{_e(url)}" target="_blank" rel="noopener">{_e(anchor)}</a>'


def _origin_parts(article: SiteArticle) -> list[str]:
    """The origin text: where the claim was shared (the post link in a sentence that says so), the post's
    text as a quotation and its image introduced with a colon, worded differently from article to
    article, as real Snopes articles are."""
    when, claim = _month_year(article), _lower_first(article.claim)
    parts: list[str] = []
    link = article.post_link if article.post_link and "://" in article.post_link else None
    platform = _platform(link) if link else None
    if link and platform:
        sentence = _pick(
            article,
            "origin",
            (
                f"In {when}, a {platform} {_a(link, 'post')} claimed that {_e(claim)}.",
                f"In {when}, a claim spread on {platform}: a widely shared {_a(link, 'post')} said that "
                f"{_e(claim)}.",
                f"A rumor that {_e(claim)} circulated on {platform} in {when}, where one user "
                f"{_a(link, 'posted')} it to their followers.",
                f"Readers asked us in {when} about a viral {platform} {_a(link, 'post')} claiming that "
                f"{_e(claim)}.",
            ),
        )
        parts.append(f"<p>{sentence}</p>")
    elif link:
        sentence = _pick(
            article,
            "origin-web",
            (
                f"In {when}, an article published by the website {_a(link, url_host(link) or link)} "
                f"claimed that {_e(claim)}.",
                f"A story that {_e(claim)} was shared widely in {when} after a web site "
                f"{_a(link, 'published')} it.",
            ),
        )
        parts.append(f"<p>{sentence}</p>")
    else:
        parts.append(
            "<p>"
            + _pick(
                article,
                "origin-none",
                (
                    f"In {when}, a claim that {_e(claim)} was making the rounds online.",
                    f"We received several inquiries in {when} about a claim that {_e(claim)}.",
                    f"A meme claiming that {_e(claim)} circulated on social media in {when}.",
                ),
            )
            + "</p>"
        )
    if article.post_text and article.post_text.strip() != article.claim.strip():
        intro = _pick(article, "quote", ("The post read:", "It stated:", "The text of the message read:"))
        parts.append(f"<p>{intro}</p><blockquote><p>{_e(article.post_text)}</p></blockquote>")
    if article.image_path:
        intro = _pick(
            article,
            "image",
            (
                "The image that was shared along with it looked like this:",
                "The following image accompanied the claim:",
                "Screenshots of the post circulated widely:",
                "The meme was posted with this picture:",
            ),
        )
        parts.append(f"<p>{intro}</p>")
        parts.append(_post_image_tag(article))
    return parts


def _evidence_part(
    article: SiteArticle, index: int, content: str, source: str | None, url: str | None
) -> str:
    """One finding in a sentence of its own, with its source linked on a varied anchor."""
    content = content.strip()
    if not url:
        return f"<p>{_e(content)}</p>"
    name = source or url_host(url) or "the source"
    body = _lower_first(content)
    templates = (
        f"According to {_a(url, name)}, {_e(body)}.",
        f"{_e(content.rstrip('.'))} ({_a(url, 'source')}).",
        f"As {_e(name)} {_a(url, 'reported')}, {_e(body)}.",
        f"We found that {_e(body)}, as {_e(name)} {_a(url, 'noted')}.",
        f"{_e(name)} {_a(url, 'explained')} that {_e(body)}.",
    )
    return f"<p>{_pick(article, f'evidence-{index}', templates)}</p>"


def _body_parts(article: SiteArticle) -> str:
    """The article body: origin (post link, quoted text, introduced image), findings, conclusion."""
    evidence = list(enumerate(article.evidence))
    opening: list[str] = []
    linked = [(i, e) for i, e in evidence if e.url and e.url != article.post_link]
    if len(linked) >= 3 and _pick(article, "context-first", (True, False, False)):
        # as many real articles do, open with background from a source before saying where the claim spread
        index, item = linked[0]
        evidence.remove((index, item))
        opening.append(_evidence_part(article, index, item.content, item.source, item.url))
    parts = opening + _origin_parts(article)
    parts.append(_AD)
    for index, item in evidence:
        parts.append(_evidence_part(article, index, item.content, item.source, item.url))
    if article.reasoning_logic:
        lead = _pick(article, "verdict", ("", "In sum, ", "In short, ", ""))
        parts.append(f'<p class="conclusion">{_e(lead)}{_e(article.reasoning_logic)}</p>')
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


def _head(article: SiteArticle, lang: str = "en-US") -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="UTF-8">\n'
        f"<title>{_e(article.headline)} | Snopes.com</title>\n"
        f'<link rel="canonical" href="{_e(article.news_url)}">\n<meta property="og:type" content="article">\n'
        "</head>"
    )


def _crumbs(category: str) -> str:
    return (
        '<nav class="breadcrumbs"><ol class="breadcrumb"><li class="breadcrumb-item"><a href="/fact-check/">'
        f'Fact Check</a></li><li class="breadcrumb-item"><a href="/fact-check/category/{slugify(category)}/">'
        f"{_e(category)}</a></li></ol></nav>"
    )


def render_2018_microdata(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """A page in the 2017 to mid-2018 theme: claim and rating only as schema.org microdata inside
    ``div.entry-content.article-text`` (CLAIM / RATING / ORIGIN headings, rating icon), no JSON-LD."""
    category = article.category or "Uncategorized"
    rating_slug = slugify(article.rating)
    published = f"{article.date}T12:00:00+00:00" if article.date else ""
    date_meta = f'<meta itemprop="datePublished" content="{published}">' if published else ""
    date_line = (
        f'<p><span class="label">Published:</span><span class="date-wrapper">{_long_date(article.date)}'
        "</span></p>"
        if article.date
        else ""
    )
    sources = "".join(f"<p>{_e(s)}</p>" for s in _sources(article))
    return f"""{_head(article)}
<body class="single single-fact_check">{_nav(categories[:4])}
<main class="main-content-area"><div class="body-wrapper">
{_crumbs(category)}
<article class="post-{article.id[-6:]} fact_check type-fact_check">
<header class="article-header"><h1 class="article-title">{_e(article.headline)}</h1>
<h2 class="article-description">{_e(category)}</h2></header>
{_share(article.news_url)}
<div class="entry-content article-text">
<div class="article-text-inner">
<h3 itemprop="description" class="section-break claim"><span>CLAIM</span></h3>
<p>{_e(article.claim)}</p>
<meta itemprop="claimReviewed" content="{_e(article.claim)}">
<span itemprop="itemReviewed" itemscope itemtype="http://schema.org/CreativeWork">{date_meta}
<span itemprop="author" itemscope itemtype="http://schema.org/Organization">
<meta itemprop="name" content="Internet"></span></span>
<span itemprop="reviewRating" itemscope itemtype="http://schema.org/Rating" style="display:none">
<span itemprop="alternateName">{_e(article.rating)}</span></span>
<h3 itemprop="description" class="section-break"><span>RATING</span></h3>
<a class="claim {rating_slug}" href="/fact-check/rating/{rating_slug}">
<img src="/design/rating-{rating_slug}.png"><span>{_e(article.rating)}</span></a>
<h3 class="section-break"><span>ORIGIN</span></h3>
{_body_parts(article)}
<footer class="article-footer"><div class="article-info-box">
<p class="author-box"><span class="label">Fact Checker:</span>
<a href="/author/sample-site/" class="author-link">Sample Site Author</a></p>
{date_line}</div>
<div class="article-sources-box"><span class="label">Sources:</span>{sources}</div></footer>
<div class="additional-articles"><div class="header"><h3 class="title">More From Snopes.com</h3>
<h5 class="loading-msg">Loading...</h5></div></div>
</div></div>
</article>
{_related(article, others)}
</div></main>
{_FOOTER}
</body></html>
"""


def render_2018_cards(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """A page in the late-2018 theme: ``article.post-N`` of cards (``claim-card``, ``rating-card``,
    ``post-body-card`` with the byline, dates, sources and tags at its end), no JSON-LD."""
    category = article.category or "Uncategorized"
    rating_slug = slugify(article.rating)
    dates = (
        '<div class="post-dates"><span class="date"><span class="prefix">Published</span> '
        f'<span class="date-published">{_long_date(article.date)}</span></span></div>'
        if article.date
        else ""
    )
    byline = (
        '<div class="byline"><span class="prefix">By</span> '
        '<a class="author" href="/author/sample-site/">Sample Site Author</a></div>'
    )
    sources = "".join(f'<li class="post-list-item"><p>{_e(s)}</p></li>' for s in _sources(article))
    return f"""{_head(article)}
<body class="single single-fact_check">{_nav(categories[:4])}
<main class="container"><div class="body-wrapper">
<article class="post-{article.id[-6:]} fact_check type-fact_check fact_check_category-{slugify(category)} \
fact_check_rating-{rating_slug}">
<header class="post-header-card post-card card">{_crumbs(category)}
<div class="card-body"><h1 class="heading">{_e(article.headline)}</h1>
<h2 class="subheading">{_e(category)}</h2>{byline}{dates}</div>
{_share(article.news_url)}</header>
<div class="claim-card post-card card"><div class="card-header"><h3 class="title">Claim</h3></div>
<div class="card-body"><p class="claim">{_e(article.claim)}</p></div></div>
<div class="rating-card post-card card"><div class="card-header"><h3 class="title">Rating</h3></div>
<div class="rating card-body"><div class="rating-wrapper">
<a class="rating-link" href="/fact-check/rating/{rating_slug}/"><img alt="" class="rating-icon" \
src="/design/rating-{rating_slug}.png"></a>
<div class="rating-text"><span class="rating-name rating-label-{rating_slug}">{_e(article.rating)}</span>
<a class="rating-link" href="/fact-check/rating/{rating_slug}/">About this rating</a></div></div></div></div>
<div class="post-body-card post-card card"><div class="card-header"><h3 class="title">Origin</h3></div>
<div class="card-body">
{_body_parts(article)}
<div class="list-section"><div class="card-header"><h5 class="post-label">Sources</h5></div>
<ul class="sources post-list">{sources}</ul></div>
{byline}{dates}
<div class="post-tags"><span class="prefix">Filed Under</span> \
<a href="/tag/{slugify(category)}/">{_e(category.lower())}</a></div>
</div></div>
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

RENDERERS: dict[str, Renderer] = {
    LAYOUT_2020S: render_2020s,
    LAYOUT_WORDPRESS: render_wordpress,
    LAYOUT_2018_LATE: render_2018_cards,
    LAYOUT_2018_MICRODATA: render_2018_microdata,
}
"""The renderer of each layout an article can have (:attr:`SiteArticle.layout`)."""


def render_article(article: SiteArticle, categories: list[str], others: list[SiteArticle]) -> str:
    """The article's page in its own layout."""
    return RENDERERS[article.layout](article, categories, others)
