"""The offline extractor on real Snopes articles (issue 17), not on the generated site's phrasing.

Real pages: the 2018 pages of ``tests/fixtures/snopes_html/2018/`` with hand-labelled post links
(``labels.json``: 12 with a post, 1 without) and the four with the authors' released RW-Post record
(``with-rwpost-gold/*.rwpost.json``, dev split) for the evidence URLs. The rules were written reading the
tagged text of all 13 of these pages, so no real 2018 page is held out: these are tuning figures. The
checks outside that set are the 2025 and 2026 pages of ``test_extract.py`` (post link right on both) and
the regenerated sample site, whose prose was written without these rules in view. The figures are printed
side by side with the sample site's by ``python -m benchmarks.extract_quality``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.extract_quality import load_real, post_reference, run_real, score_real
from rwpost.extract.offline import OfflineExtractor, evidence_links, is_never_evidence, link_key
from rwpost.records import Link, TaggedArticle

REAL = Path(__file__).parent / "fixtures" / "snopes_html"
GOLD_DIR = "with-rwpost-gold/"


@pytest.fixture(scope="module")
def figures() -> dict:
    return run_real(REAL)


def test_post_link_goals_on_real_pages(figures):
    assert figures["post_link_pages"] >= 12 and figures["no_post_pages"] >= 1
    assert figures["post_link_correct"] >= 0.76, figures["misses"]
    assert figures["post_link_false_positive"] <= 0.14, figures["misses"]


def test_post_false_positive_is_measured_on_the_sample_site_and_the_real_pages(figures):
    """Pages whose article has no post link (the post is only an image, or there is none): the extractor
    must not name one. Measured on the generated site's records without a post link and on the real pages
    whose labelled post is an image or nothing (issue 17: false positives <= .14)."""
    from benchmarks.extract_quality import load_sample, run_offline, score

    gold, articles = load_sample(REAL.parents[2] / "data" / "sample" / "site")
    sample = score(gold, articles, run_offline(articles))
    assert sample["no_post_link_pages"] == sum(not g["post_link"] for g in gold) >= 30
    assert sample["post_false_positive"] is not None and sample["post_false_positive"] <= 0.14
    assert figures["no_post_link_pages"] >= 8 and figures["post_false_positive"] <= 0.14, figures["misses"]


def test_post_link_on_the_pages_without_a_gold_record_alone():
    """The nine pages without an authors' record reach the goal by themselves (not only on average)."""
    pages = [p for p in load_real(REAL) if p["gold"] is None]
    extractor = OfflineExtractor()
    subset = score_real(pages, {p["name"]: extractor.extract(p["article"]) for p in pages})
    assert subset["post_link_pages"] >= 8
    assert subset["post_link_correct"] >= 0.76, subset["misses"]
    assert subset["post_link_false_positive"] <= 0.14


def test_evidence_recall_goal_on_real_pages(figures):
    assert figures["evidence_gold_urls_in_body"] >= 20
    assert figures["evidence_url_recall"] >= 0.8
    assert figures["evidence_url_precision"] >= 0.65  # the first rules: about .5; then .61


def test_evidence_budget_figures_are_the_first_k_in_order(figures):
    """The budget sweep (what a cap on evidence per article would give) is consistent with the headline
    figure: recall never falls as the budget grows, and a budget past every article's count is no cap."""
    sweep = figures["evidence_first_k"]
    recalls = [sweep[k]["recall"] for k in sorted(sweep, key=int)]
    assert recalls == sorted(recalls) and recalls[0] < recalls[-1]
    widest = sweep[max(sweep, key=int)]
    assert widest == {
        "precision": figures["evidence_url_precision"],
        "recall": figures["evidence_url_recall"],
    }


@pytest.mark.xfail(
    reason="not reached by general prose rules: .66 at recall 1.0 on the four gold pages (issue 17)",
    strict=True,
)
def test_evidence_precision_goal_on_real_pages(figures):
    assert figures["evidence_url_precision"] >= 0.9


def test_boxes_author_tags_related_and_share_links_are_never_evidence():
    for url in (
        "https://www.snopes.com/fact-check/rating/false/",
        "https://www.snopes.com/author/bethania/",
        "https://www.snopes.com/tag/parkland-shooting/",
        "https://www.snopes.com/fact-check/emma-gonzalez-flag-patch/",
        "https://www.facebook.com/sharer/sharer.php?u=x",
        "https://twitter.com/intent/tweet?url=x",
        "https://twitter.com/hashtag/NYCSubway?src=hash",
        "https://twitter.com/Starbucks?ref_src=twsrc%5Etfw",
        "https://t.co/sWhqymJbZG",
        "https://www.flickr.com/photos/wozischra/",
    ):
        assert is_never_evidence(url), url
    for url in (
        "https://www.snopes.com/uploads/2018/04/x.jpg",
        "https://us-east-1.tchyn.io/snopes-production/uploads/2018/04/x.jpg",
        "https://twitter.com/missydepino/status/984539713016094721",
        "https://www.youtube.com/watch?v=8oAzdbd0J2A",
        "https://www.facebook.com/786888781492026/videos/942478112599758/",
    ):
        assert not is_never_evidence(url), url
    for page in load_real(REAL):
        urls = [link.url for link in evidence_links(page["article"])]
        assert not any(u.endswith("rating-false.png") or "/author/" in u or "/tag/" in u for u in urls)


NEVER_EVIDENCE = {
    "rating icon or page": r"rating-[a-z-]+\.(?:png|svg|jpe?g)|/rating/",
    "author": r"/author/",
    "tag": r"/tag/",
    "related article": r"snopes\.com/+(?:fact-check|news|articles)/",
    "share": r"sharer|/intent/|addtoany|/share\b|mailto:",
}
"""Links of every real page that are never evidence, by what they point to."""


def test_no_rating_icon_author_tag_related_or_share_link_of_a_real_page_is_evidence():
    """Every real page (2018 fragments, the late-2018 page, the 2025 and 2026 pages): the links of each kind
    in its HTML never come out as evidence; tag and related-article links reach the tagged text inline,
    so it is the extractor's rules, not only the tagger, that keep them out."""
    import re
    from urllib.parse import urljoin

    from rwpost.tagged import tag_article
    from tests.conftest import REAL_PAGES, real_page

    pages = [(p["article"], (REAL / "2018" / p["name"]).read_text(encoding="utf-8")) for p in load_real(REAL)]
    pages += [(tag_article(real_page(name), url), real_page(name)) for name, url in REAL_PAGES.items()]
    in_html = dict.fromkeys(NEVER_EVIDENCE, 0)
    in_text = dict.fromkeys(NEVER_EVIDENCE, 0)
    for article, html in pages:
        hrefs = {urljoin(article.news_url, h) for h in re.findall(r'(?:href|src|data-src)="([^"]+)"', html)}
        evidence = {link_key(link.url) for link in evidence_links(article)}
        for kind, pattern in NEVER_EVIDENCE.items():
            urls = {u for u in hrefs if re.search(pattern, u) and u != article.news_url}
            in_html[kind] += len(urls)
            in_text[kind] += sum(bool(re.search(pattern, link.url)) for link in article.links)
            assert not {link_key(u) for u in urls} & evidence, (article.news_url, kind)
    assert all(in_html.values()), in_html
    assert in_text["tag"] and in_text["related article"], in_text


def test_a_picture_a_cited_page_introduces_is_that_page_cited_once():
    articles = {p["name"]: p["article"] for p in load_real(REAL)}
    tennis = [
        link.url
        for link in evidence_links(articles[GOLD_DIR + "daredevils-playing-tennis-airplane.fragment.html"])
    ]
    assert (
        "https://www.newspapers.com/image/327200226/?terms=ivan+unger+tennis" in tennis
    )  # "Here is a blurb [..]:"
    assert not [
        u for u in tennis if u.endswith(("/unger-and-roy.jpg", "/plane-stunt.jpg"))
    ]  # its clipping, photo
    assert tennis[0].endswith("/history-lovers-club.jpg")  # introduced by a sentence citing nothing: stays
    # after a post or a capture, the image is the post's own picture and stays
    meme = [
        link.url
        for link in evidence_links(articles[GOLD_DIR + "liberals-protesting-trump-photo.fragment.html"])
    ]
    assert meme[:2] == [
        "https://archive.li/3UP65",
        "https://us-east-1.tchyn.io/snopes-production/uploads/2018/04/30226441_1745278768844782_6072494758747824213_n.jpg",
    ]


def _covered(body_cites_cover: bool) -> TaggedArticle:
    """An article as the tagger writes it: the cover (the page's lead image, outside the body) tagged
    first with its alt text as anchor and no sentence, then the body, whose post image is the cover again
    (``body_cites_cover``) or another image."""
    cover, other = "https://www.snopes.com/uploads/cover.jpg", "https://www.snopes.com/uploads/post.jpg"
    post = "[IMAGE 1: " + cover + "]" if body_cites_cover else "[IMAGE 2: " + other + "]"
    page = "https://news.example.org/council-statement"
    introduces = "The image that was shared along with it looked like this:"
    text = (
        f"[IMAGE 1: {cover}]\n\nIn March 2024 a claim spread on Facebook that a photograph showed a town "
        f"hall painted gold overnight by its mayor.\n\n{introduces}\n\n{post}\n\nThe town council said "
        f"the photograph was edited [WEBPAGE 3: {page}].\n\nWe rated this claim false: it was edited."
    )
    council = f"The town council said the photograph was edited [WEBPAGE 3: {page}]."
    links = [
        Link(id=1, kind="image", url=cover, anchor="cover", context=""),
        Link(id=2, kind="image", url=other, context=introduces),
        Link(id=3, kind="webpage", url=page, anchor="", context=council.replace(f" [WEBPAGE 3: {page}]", "")),
    ]
    return TaggedArticle(
        id="covered", news_url="https://www.snopes.com/fact-check/gold-town-hall/", rating="False",
        text=text, links=links if not body_cites_cover else [links[0], links[2]], word_count=60,
    )  # fmt: skip


def test_the_cover_is_no_evidence_unless_the_body_cites_it_and_then_where_the_body_does():
    """Issue 39 (round 3 D16): the cover was the first evidence item of many demo articles, described as
    its alt text ``cover`` and aligned to no key point; it illustrates the article. Cited again in the
    body (the post's image shown as the cover), it is evidence in the body's place, described by the
    body's sentence."""
    alone = OfflineExtractor().extract(_covered(body_cites_cover=False))
    assert [e.url.rsplit("/", 1)[-1] for e in alone.evidence] == ["post.jpg", "council-statement"]
    cited = OfflineExtractor().extract(_covered(body_cites_cover=True))
    assert [e.url.rsplit("/", 1)[-1] for e in cited.evidence] == ["cover.jpg", "council-statement"]
    first = cited.evidence[0]
    assert first.description == first.content == "The image that was shared along with it looked like this:"
    assert [e.id for e in cited.evidence] == [1, 2]
    assert all(e.description != "cover" for e in alone.evidence + cited.evidence)


def test_one_key_per_linked_thing():
    assert link_key("https://www.youtube.com/embed/8oAzdbd0J2A") == link_key(
        "https://www.youtube.com/watch?v=8oAzdbd0J2A"
    )
    assert link_key("https://us-east-1.tchyn.io/snopes-production/uploads/2018/04/a.jpg") == link_key(
        "https://www.snopes.com/uploads/2018/04/a.jpg"
    )
    assert link_key("http://www.bbc.com/news/x") == link_key("https://www.bbc.com/news/x/")


def test_posts_of_each_kind():
    posts = {p["name"]: OfflineExtractor().extract(p["article"]).post for p in load_real(REAL)}
    liberals = posts["with-rwpost-gold/liberals-protesting-trump-photo.fragment.html"]
    assert liberals.post_link == "https://archive.li/3UP65"  # "posted to the Facebook page [capture]"
    hogg = posts["with-rwpost-gold/david-hogg-give-nazi-salute.fragment.html"]
    assert hogg.post_link is None and hogg.image_links[0].endswith("/2018/03/nazi-salute.jpg")
    cohen = posts["2018-04_michael-cohen-the-fixer-ads.fragment.html"]
    assert "status/987450802397696001" in cohen.post_link  # the embed's status, not its t.co picture link
    late = posts["2018-11_christmas-story-marathon-tbs.html"]
    assert post_reference_of(late) == "https://www.snopes.com/tachyon/2018/11/christmas-story.jpg"


def post_reference_of(post) -> str | None:
    return post.post_link or (post.image_links[0] if post.image_links else None)


def test_post_reference_is_the_link_else_the_image():
    extraction = OfflineExtractor().extract(load_real(REAL)[0]["article"])
    assert post_reference(extraction) == post_reference_of(extraction.post)


def test_saved_pages_crawl_reformat_extract_offline_reach_the_post_goals(tmp_path, monkeypatch):
    """Every labelled real page through the stages: saved pages -> crawl store -> reformat -> extract."""
    import json
    import shutil

    from benchmarks.extract_quality import score_real
    from rwpost.extract.run import extract_tagged
    from rwpost.io import iter_jsonl
    from rwpost.records import Extraction
    from rwpost.reformat import reformat_store

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "crawlers"))
    from snopes_crawler.saved import import_saved_pages

    pages = load_real(REAL)
    saved = tmp_path / "saved"
    saved.mkdir()
    index = []
    for number, page in enumerate(pages):
        name = f"page-{number}.html"
        shutil.copy(REAL / "2018" / page["name"], saved / name)
        index.append({"file": name, "url": page["article"].news_url})
    (saved / "index.json").write_text(json.dumps(index))
    import_saved_pages(saved, tmp_path / "crawl")
    reformat_store(tmp_path / "crawl", tmp_path / "tagged", min_words=1)
    extract_tagged(tmp_path / "tagged" / "articles.jsonl", tmp_path / "extract", OfflineExtractor())
    by_id = {
        row["id"]: Extraction.model_validate(row)
        for _, row in iter_jsonl(tmp_path / "extract" / "extractions.jsonl")
    }
    kept = [p for p in pages if p["article"].id in by_id]
    assert len(kept) >= 12  # the unrated page may be set aside; every rated one goes through
    figures = score_real(kept, {p["name"]: by_id[p["article"].id] for p in kept})
    assert figures["post_link_correct"] >= 0.76 and figures["post_link_false_positive"] <= 0.14
    assert figures["evidence_url_recall"] >= 0.8


def test_llm_backend_on_the_real_pages_through_an_openai_compatible_server(tmp_path, monkeypatch, figures):
    """``--llm-real``: the real pages through the LLM backend of the environment's endpoint (here the
    loopback server answering with the offline rules' script, so its figures must be the rules')."""
    import json

    from benchmarks.extract_quality import main
    from rwpost.extract.scripted import scripted_reply
    from rwpost.testing.llm import FakeLLMServer

    with FakeLLMServer(scripted_reply) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp_path / "llm_real.json"
        args = ["--llm-real", "--real", str(REAL), "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)]
        assert main(args) == 0
        pages = len(load_real(REAL))
        assert server.chat_requests == 3 * pages  # post, rationale, evidence per page
    real = json.loads(out.read_text())["llm_real"]
    assert real["failed"] == [] and real["pages"] == pages
    for key in ("post_link_correct", "post_false_positive", "evidence_url_precision", "evidence_url_recall"):
        assert real[key] == figures[key], key
    assert "test-key" not in out.read_text()


def test_offline_backend_finds_claim_and_rating_on_real_pages(de_niro, piker):
    assert de_niro.claim.startswith('A video authentically shows actor Robert De Niro saying "F*** Trump"')
    assert de_niro.rating == "Miscaptioned"
    assert piker.rating == "Mostly True"
    assert piker.claim.startswith("On April 30, 2026, a bipartisan group of legislators")
    extraction = OfflineExtractor().extract(de_niro)
    assert extraction.provenance.backend == "offline"
    assert extraction.provenance.model is None
    assert "miscaptioned" in (extraction.reasoning_logic or "").lower()


def test_offline_post_comes_from_the_opening_social_links_and_quote(de_niro, piker):
    post = OfflineExtractor().extract(de_niro).post
    assert post.post_link == "https://x.com/sot6ixtv/status/1896415374754918673"
    assert post.video_link == "https://www.tiktok.com/@everythingdemocrats/video/7477409691056950574"
    # the lead image ("Image courtesy of Kevin Mazur/Getty Images") illustrates the article: not the post
    assert not any(u.endswith("/2025/03/tony_awards.jpg") for u in post.image_links)
    post = OfflineExtractor().extract(piker).post
    assert post.post_link == "https://www.instagram.com/p/DXw34faDgEt/"
    assert post.text.startswith("Rep. Mike Lawler and Rep. Josh Gottheimer are teaming up")


def test_offline_evidence_urls_come_from_the_link_table_with_3_to_5_key_points(de_niro, piker):
    for article in (de_niro, piker):
        extraction = OfflineExtractor().extract(article)
        table = {link.url for link in article.links}
        assert extraction.evidence and all(e.url in table for e in extraction.evidence)
        assert 3 <= len(extraction.key_points) <= 5
    urls = [e.url for e in OfflineExtractor().extract(de_niro).evidence]
    assert "https://www.youtube.com/watch?v=1zNr8Pf1QkY" in urls
    assert "https://archive.li/kghRH" not in urls  # a capture of the post, not evidence
