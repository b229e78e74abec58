"""Hostile pages of the sample site, each with what the crawler must do about it (``hostile.json``).

The static ones are written by the build (missing rating, truncated HTML, bad images, a duplicate);
the server plays the dynamic ones (500 then success, 429 with Retry-After, a redirect loop, a very
large page, an image where an article should be; see :meth:`rwpost.sample.serve.SampleServer.respond`).
"""

from __future__ import annotations

import json
import re

from rwpost.ids import record_id
from rwpost.sample.images import draw_decompression_bomb
from rwpost.sample.records import SiteArticle
from rwpost.sample.render import render_2020s, render_article, render_wordpress

HOSTILE_HOST = "https://sample.rwpost.invalid"
"""Canonical host of generated pages that have no released record (hostile and synthetic pages)."""

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


SITEMAP_ONLY_PAGES: dict[str, str] = {
    "/news/2023/05/17/generated-rated-news-piece/": "a rated news piece: fetched by a --sitemaps run",
    "/articles/4242/generated-unrated-feature/": "an unrated feature: never fetched (not an article URL)",
}
"""Pages listed only in the monthly sitemap of May 2023 under ``/sitemaps/`` (not in any listing), for the
article URL filter of a sitemap-only crawl: rated ``/news/YYYY/MM/DD/`` pages in, ``/articles/N/`` out."""


def _hostile_article(
    slug: str, rating: str, template: SiteArticle, path: str | None = None, date: str | None = None
) -> SiteArticle:
    """A generated page that borrows a released record's text but has its own invalid-host canonical URL."""
    path = path or f"/fact-check/{slug}/"
    url = f"{HOSTILE_HOST}{path}"
    return SiteArticle(
        news_url=url,
        id=record_id(url),
        path=path,
        claim=template.claim,
        rating=rating,
        category="Hostile",
        date=date or template.date or "2021-01-01",
        headline=f"Generated hostile page: {slug}",
        post_text=template.post_text,
        post_link=template.post_link,
        image_link=None,
        ocr=None,
        reasoning_logic=template.reasoning_logic,
        evidence=template.evidence[:2],
        source_file="generated",
    )


def hostile_pages(template: SiteArticle, categories: list[str]) -> tuple[dict[str, str], list[SiteArticle]]:
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
    pages[alias.path] = render_article(template, categories, [])
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


def sitemap_only_pages(
    template: SiteArticle, categories: list[str]
) -> tuple[dict[str, str], list[SiteArticle]]:
    """The pages of :data:`SITEMAP_ONLY_PAGES` (generated, dated 2023-05) and their sitemap entries."""
    news_path, feature_path = SITEMAP_ONLY_PAGES
    news = _hostile_article("generated-rated-news-piece", template.rating, template, news_path, "2023-05-17")
    news.headline = "Generated rated news page (served only through the sitemaps)"
    feature = _hostile_article("generated-unrated-feature", "True", template, feature_path, "2023-05-20")
    pages = {
        news.path: render_2020s(news, categories, []),
        feature.path: (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>Generated unrated feature</title><link rel="canonical" href="{feature.news_url}">'
            "</head><body><main><h1>Generated unrated feature</h1><p>A generated feature page without a "
            "rating, as Snopes publishes under /articles/N/.</p></main></body></html>\n"
        ),
    }
    return pages, [news, feature]


def hostile_uploads() -> dict[str, str | bytes]:
    """The hostile files under ``uploads/``: HTML named as a JPEG, and a decompression bomb."""
    return {
        "uploads/hostile-not-an-image.jpg": "<html><body>This is not an image.</body></html>\n",
        "uploads/hostile-bomb.png": draw_decompression_bomb(),
    }


def hostile_manifest(listed: list[SiteArticle]) -> str:
    """``hostile.json``: each hostile path with what the crawler must do, and the id of a listed page."""
    hostile = {path: {"expect": what} for path, what in HOSTILE_PAGES.items()}
    for article in listed:
        if article.path in hostile:
            hostile[article.path]["id"] = article.id
            hostile[article.path]["canonical"] = article.news_url
    return json.dumps(hostile, indent=2, sort_keys=True) + "\n"
