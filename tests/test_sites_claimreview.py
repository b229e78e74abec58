"""ClaimReview markup variants the real pages do not all show: ``@graph``, ``@type`` arrays, several
ClaimReviews, ``claimReviewed`` as an array, broken JSON, microdata, RDFa, and the feed as a fallback.
The pages here are small generated HTML written in each test (not real pages)."""

from __future__ import annotations

import json

from rwpost.labels import Label
from rwpost.records import ClaimReviewFacts
from rwpost.sites.claimreview import jsonld
from rwpost.sites.reader import label_of, merge_feed, read_page
from rwpost.sites.registry import Registry
from rwpost.snopes.select import as_tree

BODY = (
    "<article><p>Das angebliche Zitat ist frei erfunden. Die Pressestelle der Stadt sagt, der Satz sei nie "
    "gefallen, und ein Foto von 2015 zeigt eine andere Szene. Wir haben den Beitrag geprüft und die "
    'Quelle gefunden: <a href="https://example.org/quelle">die Originalseite</a>.</p>'
    "<p>Der Beitrag wurde tausendfach geteilt, bevor er gelöscht wurde. Die Behauptung ist falsch, weil "
    "das Dokument gefälscht ist und die Stadtverwaltung es nie veröffentlicht hat.</p></article>"
)


def _page(head: str = "", body: str = "") -> str:
    return f"<html lang='en'><head><title>Faktencheck</title>{head}</head><body>{body}{BODY}</body></html>"


def _script(data: object) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f'<script type="application/ld+json">{text}</script>'


REVIEW = {
    "@type": "ClaimReview",
    "claimReviewed": "Die Oberbürgermeisterin hat das gesagt",
    "datePublished": "2019-09-20",
    "author": {"@type": "Organization", "name": "Beispiel Faktencheck"},
    "itemReviewed": {
        "@type": "Claim",
        "author": {"@type": "Person", "name": "Ein Nutzer"},
        "datePublished": "2019-09-07",
        "appearance": [{"@type": "CreativeWork", "url": "https://social.example/post/1"}],
        "firstAppearance": {"@type": "CreativeWork", "url": "https://social.example/post/0"},
    },
    "reviewRating": {"@type": "Rating", "alternateName": "Falsch", "ratingValue": 1, "bestRating": 5},
}


def _read(html: str):
    return read_page(html, "https://faktencheck.example/a/1", registry=Registry([]))


def test_a_claimreview_inside_a_graph_with_a_type_array_is_read():
    graph = {
        "@context": "https://schema.org",
        "@graph": [{"@type": "WebPage"}, {**REVIEW, "@type": ["Review", "ClaimReview"]}],
    }
    page = _read(_page(_script(graph)))
    review = page.review
    assert review is not None and review.source == "json-ld"
    assert (review.claim_reviewed, review.rating_alternate_name, review.rating_value) == (
        "Die Oberbürgermeisterin hat das gesagt",
        "Falsch",
        1,
    )
    assert review.appearances == ["https://social.example/post/1", "https://social.example/post/0"]
    assert (review.item_reviewed_author, review.claim_date) == ("Ein Nutzer", "2019-09-07")
    assert page.appearances == review.appearances
    assert page.language == "de" and page.language_declared == "en"
    assert label_of(page).label is Label.FALSE


def test_several_claimreviews_and_a_claimreviewed_array_give_one_review_per_claim():
    second = {**REVIEW, "claimReviewed": ["Erste Behauptung", "Zweite Behauptung"]}
    page = _read(_page(_script([REVIEW, second])))
    assert [r.claim_reviewed for r in page.claim_reviews] == [
        "Die Oberbürgermeisterin hat das gesagt",
        "Erste Behauptung",
        "Zweite Behauptung",
    ]
    assert page.claim == "Die Oberbürgermeisterin hat das gesagt"


def test_broken_json_is_repaired_and_an_unreadable_script_is_named():
    broken = json.dumps(REVIEW, ensure_ascii=False)[:-2] + ",}"  # a trailing comma, the last brace lost
    found = jsonld(as_tree(_page(_script(broken) + _script("<<<"))))
    assert found.repaired == 1
    assert [o["claimReviewed"] for o in found.objects] == ["Die Oberbürgermeisterin hat das gesagt"]
    page = _read(_page(_script(broken) + _script("<<<")))
    assert page.review is not None and page.review.rating_alternate_name == "Falsch"
    assert page.problems == ["JSON-LD script 2: not JSON, and nothing could be repaired"]


def test_microdata_and_rdfa_claimreviews_are_read():
    microdata = (
        '<div itemscope itemtype="https://schema.org/ClaimReview">'
        '<span itemprop="claimReviewed">Der Mond ist aus Käse</span>'
        '<meta itemprop="datePublished" content="2020-01-02">'
        '<div itemprop="reviewRating" itemscope itemtype="https://schema.org/Rating">'
        '<meta itemprop="ratingValue" content="1"><meta itemprop="bestRating" content="5">'
        '<span itemprop="alternateName">Falsch</span></div>'
        '<div itemprop="itemReviewed" itemscope itemtype="https://schema.org/Claim">'
        '<link itemprop="appearance" href="https://social.example/p/2"></div></div>'
    )
    rdfa = (
        '<div vocab="https://schema.org/" typeof="ClaimReview">'
        '<span property="claimReviewed">Der Himmel ist grün'
        '</span><div property="reviewRating" typeof="Rating"><span property="alternateName">Faux</span>'
        '<meta property="ratingValue" content="1"></div><div property="itemReviewed" typeof="Claim">'
        '<a property="appearance" href="https://social.example/p/3">Beitrag</a></div>'
        '<meta property="datePublished" content="2021-03-04"></div>'
    )
    page = _read(_page(body=microdata + rdfa))
    assert [
        (r.source, r.claim_reviewed, r.rating_alternate_name, r.rating_value, r.appearances)
        for r in page.claim_reviews
    ] == [
        ("microdata", "Der Mond ist aus Käse", "Falsch", "1", ["https://social.example/p/2"]),
        ("rdfa", "Der Himmel ist grün", "Faux", "1", ["https://social.example/p/3"]),
    ]
    assert (page.date_published, page.date_source) == ("2020-01-02", "ClaimReview")


def test_a_page_without_claimreview_is_marked_and_dated_from_its_article():
    article = {
        "@type": "NewsArticle",
        "headline": "Ein Artikel",
        "datePublished": "2022-05-01T10:00:00+02:00",
    }
    page = _read(_page(_script(article) + '<meta property="og:title" content="Ein Artikel">'))
    assert page.metadata_only and page.claim_reviews == []
    assert (page.date_published, page.date_source, page.headline) == (
        "2022-05-01T10:00:00+02:00",
        "Article JSON-LD",
        "Ein Artikel",
    )
    assert label_of(page).reason == "no-claimreview"


def _feed_review(**fields: object) -> ClaimReviewFacts:
    return ClaimReviewFacts(source="feed", **fields)


def test_page_fields_win_over_the_feeds_and_each_field_says_where_it_came_from():
    page_review = ClaimReviewFacts(claim_reviewed="Claim", rating_alternate_name="False", source="json-ld")
    feed = _feed_review(
        claim_reviewed="Claim (feed wording)",
        rating_alternate_name="Mostly false",
        appearances=["https://x/p"],
    )
    merged, sources = merge_feed([page_review], [feed])
    assert (merged[0].claim_reviewed, merged[0].rating_alternate_name, merged[0].appearances) == (
        "Claim",
        "False",
        ["https://x/p"],
    )
    assert (sources["claim_reviewed"], sources["rating_alternate_name"], sources["appearances"]) == (
        "json-ld",
        "json-ld",
        "feed",
    )


def test_the_feed_alone_gives_the_review_of_a_page_without_markup():
    feed = [
        _feed_review(claim_reviewed="Ein Zitat", rating_alternate_name="Falsch", date_published="2019-09-20")
    ]
    page = read_page(_page(), "https://faktencheck.example/a/1", registry=Registry([]), feed=feed)
    assert not page.metadata_only
    assert page.review is not None and page.review.source == "feed"
    assert (page.date_published, page.field_sources["claim_reviewed"]) == ("2019-09-20", "feed")


def test_a_site_whose_markup_needs_it_names_its_body_selector_as_data():
    from rwpost.sites.registry import Selectors, Site

    site = Site(
        name="story-site",
        publisher="Story Site",
        domains=["faktencheck.example"],
        terms="t",
        selectors=Selectors(body=["div.story"]),
    )
    html = _page(
        body='<div class="story"><p>Nur dieser Absatz ist der Artikel, mit <a href="https://q.example/">Quelle</a>.</p></div>'
    )
    page = read_page(html, "https://faktencheck.example/a/1", registry=Registry([site]))
    assert (
        page.tagged.body == "div.story" and page.publisher == "Story Site" and page.site_name == "story-site"
    )
    assert page.tagged.text.startswith("Nur dieser Absatz") and [link.url for link in page.tagged.links] == [
        "https://q.example/"
    ]
    assert _read(html).tagged.body == "trafilatura"  # no entry: the generic reading
