"""Tagged text on real Snopes pages (golden tests, STYLE.md 12) and link typing rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.tagged_eval import load_page, score_page
from rwpost.snopes.links import link_identity
from rwpost.snopes.page import read_article
from rwpost.tagged import count_words, rating_outcome, strip_tags, tag_article, tag_html
from tests.conftest import EARLY, ERA_2018, LATE, LATE_URL, NOT_TEXT

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = json.loads((FIXTURES / "tagged" / "golden.json").read_text(encoding="utf-8"))
PAGES = {page["name"]: page for page in GOLDEN["pages"]}


def page_and_url(name: str) -> tuple[str, str]:
    return load_page(PAGES[name], FIXTURES / "snopes_html"), PAGES[name]["url"]


@pytest.fixture(scope="module", params=sorted(PAGES))
def scored(request):
    page = PAGES[request.param]
    tagged = tag_html(load_page(page, FIXTURES / "snopes_html"), page["url"])
    return page, tagged, score_page(page, tagged)


def test_every_body_link_is_tagged_with_the_right_kind_in_reading_order(scored):
    page, tagged, score = scored
    assert score.missing == []
    assert score.wrong_kind == []
    assert score.in_order
    assert [link.url for link in tagged.links] == [url for _, url in page["must_have"]]


def test_no_navigation_ad_bio_or_related_link_is_tagged(scored):
    _, _, score = scored
    assert score.forbidden_found == []
    assert score.extra == []


def test_body_text_is_kept_and_boilerplate_text_is_dropped(scored):
    _, _, score = scored
    assert score.texts_missing == []
    assert score.texts_forbidden == []


def test_tags_in_text_match_the_link_table(scored):
    _, tagged, _ = scored
    for link in tagged.links:
        assert f"[{link.kind.upper()} {link.id}: " in tagged.text
    assert [link.id for link in tagged.links] == list(range(1, len(tagged.links) + 1))


def test_word_count_excludes_tags(scored):
    _, tagged, _ = scored
    assert tagged.word_count == count_words(tagged.text)
    assert "WEBPAGE" not in strip_tags(tagged.text)
    assert tagged.word_count == len(strip_tags(tagged.text).split()) or tagged.word_count > 100


def test_link_context_is_the_sentence_around_the_link():
    page = PAGES["robert-de-niro-trump-oscars"]
    tagged = tag_html(load_page(page, FIXTURES / "snopes_html"), page["url"])
    tiktok = next(link for link in tagged.links if "tiktok.com" in link.url)
    assert tiktok.anchor == "clip"
    assert tiktok.context.startswith("One TikTok user posted a clip (archived) showing the Hollywood star")
    embed = next(link for link in tagged.links if "/embed/" in link.url)
    assert embed.kind == "video"
    assert "published on YouTube" in embed.context  # a standalone player: the sentence introducing it


def test_embedded_tweet_box_becomes_a_tag_with_the_id_of_its_post():
    # the tweet box (data-tweet-id) is the post an earlier x.com link names: one id, tagged twice
    page = PAGES["house-resolution-piker-antisemitism"]
    tagged = tag_html(load_page(page, FIXTURES / "snopes_html"), page["url"])
    assert tagged.text.count("[WEBPAGE 4: https://x.com/mattxiv/status/2049614589759803735]") == 2
    assert "twitter.com/i/status" not in tagged.text


def test_page_facts_give_claim_and_rating_on_real_pages():
    facts = read_article(*page_and_url("robert-de-niro-trump-oscars"))
    assert facts.claim == (
        'A video authentically shows actor Robert De Niro saying "F*** Trump" '
        "during his Oscars speech in 2025."
    )
    assert facts.rating == "Miscaptioned"
    facts = read_article(*page_and_url("house-resolution-piker-antisemitism"))
    assert facts.rating == "Mostly True"
    assert facts.claim.startswith(
        "On April 30, 2026, a bipartisan group of legislators introduced a resolution"
    )
    facts = read_article(*page_and_url("quaden-bayles-suicide-hoax"))
    assert facts.rating == "False"  # the 2019-2021 layout
    assert facts.claim == "The BBC reported in February 2020 that Quaden Bayles had committed suicide."


def test_page_without_a_known_body_container_falls_back_to_trafilatura():
    paragraph = "This is the article body with plenty of words so that extraction keeps it. " * 6
    html = (
        "<html><body><nav><a href='/menu'>Menu</a></nav><div class='main'>"
        f"<p>{paragraph}<a href='https://example.org/source'>source</a></p><p>{paragraph}</p></div>"
        "<footer><a href='/privacy'>Privacy</a></footer></body></html>"
    )
    tagged = tag_html(html, "https://example.com/page/")
    assert tagged.body == "trafilatura"
    assert [link.url for link in tagged.links] == ["https://example.org/source"]


def test_sample_site_pages_keep_every_gold_link_and_no_boilerplate():
    """On the 102 generated sample pages (nav, ads, share widgets, related lists around the body)."""
    from rwpost.tagged import tag_article

    site = Path(__file__).resolve().parents[1] / "data" / "sample" / "site"
    gold = [json.loads(line) for line in (site / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in gold:
        html = (site / row["page"].strip("/") / "index.html").read_text(encoding="utf-8")
        article = tag_article(html, row["news_url"])
        urls = {link.url for link in article.links}
        expected = {u for u in row["evidence_urls"] + [row["post_link"]] if u and "://" in u}
        assert expected <= urls, f"{row['id']}: missing {expected - urls}"
        # the post image is the site's served stand-in, the same URL the crawler downloads
        assert any(u.endswith("/" + row["image_path"]) for u in urls), f"{row['id']}: no post image"
        stand_ins = {u for u in urls - expected if "/uploads/rw-" in u}  # generated images without a source
        assert urls - expected - stand_ins == set(), f"{row['id']}: boilerplate {urls - expected - stand_ins}"
        assert article.claim == row["claim"] and article.rating == row["rating"]


def test_embedded_posts_and_players_become_tags_in_place():
    html = """<html><body><article id="article-content">
    <p>First the post:</p>
    <blockquote class="twitter-tweet"><p>Look at this <a href="https://t.co/abc">pic.twitter.com/abc</a></p>
      &mdash; Someone (@someone) <a href="https://twitter.com/someone/status/123">May 1, 2020</a></blockquote>
    <blockquote class="instagram-media" data-instgrm-permalink="https://www.instagram.com/reel/Cxyz/"></blockquote>
    <blockquote class="tiktok-embed" cite="https://www.tiktok.com/@u/video/42"><section>clip</section></blockquote>
    <div class="embed_container"><iframe data-src="https://player.vimeo.com/video/99"></iframe></div>
    <video src="/media/clip.mp4"></video>
    <p>Then an image <img data-src="https://media.snopes.com/2020/05/a.png" src="data:image/gif;base64,"></p>
    </article></body></html>"""
    tagged = tag_html(html, "https://www.snopes.com/fact-check/x/")
    assert [(link.kind, link.url) for link in tagged.links] == [
        ("webpage", "https://t.co/abc"),
        ("webpage", "https://twitter.com/someone/status/123"),
        ("video", "https://www.instagram.com/reel/Cxyz/"),
        ("video", "https://www.tiktok.com/@u/video/42"),
        ("video", "https://player.vimeo.com/video/99"),
        ("video", "https://www.snopes.com/media/clip.mp4"),
        ("image", "https://media.snopes.com/2020/05/a.png"),
    ]
    assert "> Look at this" in tagged.text  # quoted posts are marked as quotes


def test_late_2018_tagged_text_opens_with_the_lead_image_and_keeps_boxes_out():
    tagged = tag_html(LATE.read_text(encoding="utf-8"), LATE_URL)
    assert tagged.text.startswith("[IMAGE 1: https://www.snopes.com/tachyon/2018/11/xmasstory.jpg")
    urls = [link.url for link in tagged.links]
    assert "https://www.snopes.com/fact-check/rating/false/" not in urls
    assert not any("/author/" in u or "/tag/" in u or "rating-false" in u for u in urls)
    # the full-size link around the body image and the image itself: one id
    assert sum("christmas-story.jpg" in u for u in urls) == 1
    for absent in (*NOT_TEXT, "TBS canceled a planned marathon", "Bell, Amanda"):
        assert absent not in tagged.text


def test_hand_labelled_post_links_are_tagged():
    labels = json.loads((ERA_2018 / "labels.json").read_text(encoding="utf-8"))
    assert labels["hand_labelled"] is True
    urls = {e["file"].removeprefix("2018/"): e["url"] for e in EARLY} | {LATE.name: LATE_URL}
    for name, label in labels["pages"].items():
        tagged = tag_html((ERA_2018 / name).read_text(encoding="utf-8"), urls[name])
        ids = {link_identity(link.url) for link in tagged.links}
        for url in filter(None, [label["post_link"], *label["also_acceptable"]]):
            assert link_identity(url) in ids, (name, url)


def test_unknown_and_missing_ratings_do_not_raise():
    assert rating_outcome("No Rating") == (None, "unrated")
    assert rating_outcome(None) == (None, "unrated")
    assert rating_outcome("Totally Bogus") == (None, "unknown-rating: Totally Bogus")
    assert rating_outcome("Incorrect Attribution")[0] == "False"
    html = LATE.read_text(encoding="utf-8").replace("False", "Totally Bogus")  # box and JSON-LD
    tagged = tag_article(html, LATE_URL)
    assert tagged.rating == "Totally Bogus" and tagged.label is None
