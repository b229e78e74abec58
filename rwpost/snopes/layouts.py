"""The Snopes page layouts the page model knows, each a theme the site used, as data: where the theme keeps
each fact (selectors in ``tests/fixtures/snopes_html/SOURCES.md``).

A selector is CSS ending, as in Scrapy/parsel, in ``::text`` (the element's own text nodes) or
``::attr(name)`` (an attribute). A fact is looked up in every layout in :data:`LAYOUTS` order, so a page
that mixes themes still gives its facts; adding a theme is one more :class:`Layout` in that tuple.
"""

from __future__ import annotations

from dataclasses import dataclass

LAYOUT_2020S = "snopes-2020s"
"""The 2020s theme (2020-2026): ``main#article_main``, ``#fact_check_rating_container``."""
LAYOUT_WORDPRESS = "snopes-wordpress-2017"
"""The 2019-2021 WordPress theme: ``article.snopes-post``, ``.claim-wrapper``, ``.rating-wrapper``."""
LAYOUT_2018_LATE = "snopes-2018-cards"
"""The late-2018 theme: ``article.post-N``, ``.claim-card``, ``.rating-card``, ``.post-body-card``."""
LAYOUT_2018_MICRODATA = "snopes-2018-microdata"
"""The 2017 to early-2018 theme: ``div.entry-content.article-text``, claim and rating as schema.org
microdata (``itemprop="claimReviewed"``, ``itemprop="reviewRating"`` > ``itemprop="alternateName"``)."""
LAYOUT_JSONLD = "jsonld-only"
"""No known markup, but a ``ClaimReview`` JSON-LD block."""
LAYOUT_UNKNOWN = "unknown"


@dataclass(frozen=True)
class Layout:
    """Where one Snopes theme keeps the facts of a fact-check page (empty: the theme does not show it)."""

    name: str
    markers: str
    """Elements only this theme has (a CSS group): any of them present means the page uses it."""
    headline: tuple[str, ...] = ()
    subtitle: tuple[str, ...] = ()
    claim: tuple[str, ...] = ()
    rating: tuple[str, ...] = ()
    """The rating word as text."""
    rating_image: tuple[str, ...] = ()
    """The rating read from the rating icon (the last resort)."""
    rating_box_class: str = ""
    """Class of the rating box: its icons are not article images."""
    author: tuple[str, ...] = ()
    date_published: tuple[str, ...] = ()
    date_modified: tuple[str, ...] = ()
    category_crumbs: str = ""
    """Breadcrumb links; the last one that is not the home or fact-check index is the category."""
    category_script_key: str = ""
    """A JSON key of an inline script that holds the category."""
    post_classes: str = ""
    """The article element whose classes name the rating and category (``<prefix><slug>``)."""
    rating_class_prefix: str = ""
    category_class_prefix: str = ""
    body: str = ""
    """The body container (a CSS group; the first match in document order) of the crawl record's text."""
    cover_images: str = ""
    """The article's cover image, outside the body."""
    lead_image: tuple[str, str] | None = None
    """The lead image and its caption, which open the tagged text."""
    sources: str = ""
    """One paragraph per cited source."""
    boilerplate: str = ""
    """Nodes inside the body that are not article text (claim and rating boxes, headings, icons, bylines,
    tags, source lists, ads): the tagger drops them, the crawl record's text and images skip them."""


SNOPES_2020S = Layout(
    name=LAYOUT_2020S,
    markers="#fact_check_rating_container, main#article_main, article#article-content",
    headline=("section.title-container h1::text",),
    subtitle=("section.title-container h2::text",),
    claim=("#fact_check_rating_container .claim_cont::text", ".claim_cont::text"),
    # the rating word is the first text node of .rating_title_wrap (the rest is "About this rating")
    rating=("#fact_check_rating_container .rating_title_wrap::text", ".rating_title_wrap::text"),
    rating_image=(".rating_img_wrap img::attr(alt)",),
    rating_box_class="rating_img_wrap",
    author=("section.title-container .author_name a.author_link::text", ".author_name a.author_link::text"),
    date_published=("h3.publish_date::text",),
    category_crumbs="nav.breadcrumbs li.breadcrumb-item a::text",
    category_script_key="snopes_category_1",
    body="article#article-content",
    cover_images="section.cover-wrapper img",
    lead_image=("section.cover-wrapper img#cover-main", "section.cover-wrapper .article_img_desc"),
    sources="#sources_rows > p",
)

SNOPES_WORDPRESS = Layout(
    name=LAYOUT_WORDPRESS,
    markers="article.snopes-post, div.claim-wrapper, div.rating-wrapper",
    headline=("header.post-header h1.title::text", "h1.title::text"),
    subtitle=("header.post-header h2.subtitle::text",),
    claim=("div.claim-wrapper div.claim p::text", "div.claim p::text"),
    rating=("div.rating-wrapper h5[class^=rating-label-]::text", "h5[class^=rating-label-]::text"),
    rating_box_class="rating-wrapper",
    author=(".authors-wrapper ul.authors li a.author::text",),
    date_published=("span.date.date-published::text",),
    date_modified=("span.date.date-updated::text",),
    post_classes="article.snopes-post",
    rating_class_prefix="fact_check_rating-",
    category_class_prefix="fact_check_category-",
    body="div.content-wrapper div.content, div.entry-content",
    cover_images=".featured-media-wrapper img",
    lead_image=(".featured-media-wrapper figure.featured-media img", ".featured-media-wrapper figcaption"),
    sources="div.citations li p",
)

SNOPES_2018_LATE = Layout(
    name=LAYOUT_2018_LATE,
    markers="div.claim-card, div.post-body-card",
    headline=("header.post-header-card h1.heading::text",),
    subtitle=("header.post-header-card h2.subheading::text",),
    claim=("div.claim-card p.claim::text",),
    rating=("div.rating-card span.rating-name::text",),
    rating_box_class="rating-card",
    author=("header.post-header-card .byline a.author::text", ".post-body-card .byline a.author::text"),
    date_published=("header.post-header-card span.date-published::text",),
    date_modified=("header.post-header-card span.date-updated::text",),
    category_crumbs="nav.breadcrumbs li.breadcrumb-item a::text",
    post_classes="article.fact_check",
    rating_class_prefix="fact_check_rating-",
    category_class_prefix="fact_check_category-",
    body="div.post-body-card div.card-body",
    cover_images="header.post-header-card .featured-asset img",
    lead_image=("header.post-header-card .featured-asset img", "header.post-header-card figcaption"),
    sources="div.post-body-card ul.sources li p",
    boilerplate=(
        "div.post-body-card div.list-section, div.post-body-card div.byline, "
        "div.post-body-card div.post-dates, div.post-body-card div.post-tags, div.post-body-card div.creative"
    ),
)

SNOPES_2018_MICRODATA = Layout(
    name=LAYOUT_2018_MICRODATA,
    markers="div.article-text-inner, [itemprop=reviewRating], [itemprop=claimReviewed]",
    headline=("h1.article-title::text",),
    subtitle=("h2.article-description::text",),
    claim=("[itemprop=claimReviewed]::attr(content)", "h3.section-break.claim + p::text"),
    rating=(
        "[itemprop=reviewRating] [itemprop=alternateName]::text",
        "h3.section-break + a.claim span::text",
    ),
    author=("p.author-box a.author-link::text",),
    date_published=(
        "[itemprop=itemReviewed] [itemprop=datePublished]::attr(content)",
        "[itemprop=datePublished]::attr(content)",
        "div.article-info-box span.date-wrapper::text",
    ),
    date_modified=("[itemprop=dateModified]::attr(content)",),
    body="div.article-text-inner",
    cover_images="div.featured-media img",
    sources="div.article-sources-box p",
    boilerplate=(
        "h3.section-break, h3.section-break.claim + p, [itemprop=reviewRating], [itemprop=itemReviewed], "
        "meta, h3.section-break + a.claim, div#snopes_skin_1x1, div.additional-articles, "
        "footer.article-footer"
    ),
)

LAYOUTS: tuple[Layout, ...] = (SNOPES_2020S, SNOPES_2018_LATE, SNOPES_WORDPRESS, SNOPES_2018_MICRODATA)
"""Every known theme, newest first: the order facts are looked up in."""

BY_NAME: dict[str, Layout] = {layout.name: layout for layout in LAYOUTS}
