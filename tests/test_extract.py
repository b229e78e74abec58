"""Extraction: offline rules on real pages, the LLM backend through a real loopback server, the stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwpost.cli import main as cli_main
from rwpost.extract import LLMExtractor, OfflineExtractor
from rwpost.extract.run import extract_tagged
from rwpost.extract.scripted import FABRICATED_URL, scripted_reply
from rwpost.io import iter_jsonl, write_jsonl
from rwpost.llm import LLMCache, LLMClient
from rwpost.prompts import load_prompt
from rwpost.records import Extraction, TaggedArticle
from rwpost.reformat import reformat_store
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from tests.conftest import crawl_store, real_page

FIXTURES = Path(__file__).parent / "fixtures" / "snopes_html"
SITE = Path(__file__).resolve().parents[1] / "data" / "sample" / "site"
DE_NIRO = "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/"
PIKER = "https://www.snopes.com/fact-check/house-resolution-piker-antisemitism/"


@pytest.fixture(scope="module")
def de_niro() -> TaggedArticle:
    return tag_article(real_page("robert-de-niro-trump-oscars"), DE_NIRO)


@pytest.fixture(scope="module")
def piker() -> TaggedArticle:
    return tag_article(real_page("house-resolution-piker-antisemitism"), PIKER)


def make_client(server: FakeLLMServer, cache: LLMCache | None = None, **kw) -> LLMClient:
    return LLMClient(
        model="test-model",
        base_url=server.base_url,
        api_key="k",
        cache=cache,
        **kw,
    )


# --- offline backend on the real Snopes pages --------------------------------------------------------


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


# --- LLM backend: grounding ---------------------------------------------------------------------------


def _answers(post=None, rationale=None, evidence=None):
    defaults = {
        "post": {"post_text": "p", "image_link_ids": [1], "video_link_id": 3, "post_link_id": 2},
        "rationale": {"reasoning_logic": "r", "key_points": ["1. a", "2. b", "3. c"]},
        "evidence": {
            "evidence": [
                {
                    "type": "Video",
                    "description": "The Guardian's upload of the 2018 speech.",
                    "content": "footage",
                    "source": "The Guardian",
                    "link_id": 10,
                    "key_point_ids": [1, 7],
                }
            ]
        },
    }
    chosen = {"post": post, "rationale": rationale, "evidence": evidence}

    def responder(body):
        task = body["response_format"]["json_schema"]["name"]
        return Reply.answer(chosen[task] if chosen[task] is not None else defaults[task])

    return responder


def test_llm_backend_maps_tag_ids_to_exact_urls(de_niro):
    with FakeLLMServer(_answers()) as server:
        [extraction] = LLMExtractor(make_client(server)).run([de_niro])
    by_id = {link.id: link.url for link in de_niro.links}
    assert isinstance(extraction, Extraction)
    assert extraction.post.image_links == [by_id[1]]
    assert extraction.post.post_link == by_id[2]
    assert extraction.post.video_link == by_id[3]
    assert extraction.evidence[0].url == by_id[10] == "https://www.youtube.com/watch?v=DVWxQvlgRrM"
    assert extraction.evidence[0].key_point_ids == [1]
    assert extraction.hallucinated_urls == []
    assert extraction.provenance.backend == "llm"
    assert extraction.provenance.prompt_version == "post-v1+rationale-v1+evidence-v1"


def test_hallucinated_url_never_reaches_the_output(de_niro):
    fake = "https://made-up.example.com/story"
    post = {"post_text": f"see {fake}", "image_link_ids": [1, 999], "video_link_id": fake, "post_link_id": 2}
    evidence = {
        "evidence": [
            {
                "type": "Text",
                "description": f"A report at {fake}",
                "content": "text",
                "source": fake,
                "link_id": fake,
                "key_point_ids": [1],
            },
            {
                "type": "Text",
                "description": "d",
                "content": None,
                "source": None,
                "link_id": 404,
                "key_point_ids": [],
            },
        ]
    }
    with FakeLLMServer(_answers(post=post, evidence=evidence)) as server:
        [extraction] = LLMExtractor(make_client(server)).run([de_niro])
    dumped = json.dumps(extraction.model_dump(mode="json", exclude={"hallucinated_urls"}))
    assert fake not in dumped
    assert fake in extraction.hallucinated_urls
    assert {"tag:999", "tag:404"} <= set(extraction.hallucinated_urls)
    assert extraction.post.image_links == [de_niro.links[0].url]
    table = {link.url for link in de_niro.links}
    assert all(e.url is None or e.url in table for e in extraction.evidence)


def test_evidence_prompt_carries_the_key_points_of_the_rationale(de_niro):
    rationale = {"reasoning_logic": "r", "key_points": ["1. The clip is from the 2018 Tony Awards.", "2. b"]}
    with FakeLLMServer(_answers(rationale=rationale)) as server:
        LLMExtractor(make_client(server)).run([de_niro])
        evidence_request = next(
            r for r in server.requests if r["response_format"]["json_schema"]["name"] == "evidence"
        )
    user = message_text(evidence_request, "user")
    assert "1. The clip is from the 2018 Tony Awards." in user
    assert "[VIDEO 10: https://www.youtube.com/watch?v=DVWxQvlgRrM]" in user


def test_prompts_are_versioned_files_with_both_parts():
    for name in ("post", "rationale", "evidence"):
        prompt = load_prompt(name)
        assert prompt.version == f"{name}-v1" and prompt.schema_name == name
        assert "{article}" in prompt.user_template and prompt.system


# --- the extract stage ------------------------------------------------------------------------------


def sample_articles(n: int) -> list[TaggedArticle]:
    gold = [json.loads(line) for line in (SITE / "gold.jsonl").read_text(encoding="utf-8").splitlines()[:n]]
    return [
        tag_article((SITE / g["page"].strip("/") / "index.html").read_text(encoding="utf-8"), g["news_url"])
        for g in gold
    ]


def test_extract_stage_resumes_and_a_rerun_is_served_from_cache(tmp_path):
    articles = sample_articles(6)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, articles[:4])
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer(scripted_reply) as server:
        first = extract_tagged(tagged, tmp_path / "out", LLMExtractor(make_client(server, LLMCache(cache))))
        assert server.chat_requests == 12 and first["counts"]["extracted"] == 4
        write_jsonl(tagged, articles)  # two more articles arrive: only they are asked
        second = extract_tagged(tagged, tmp_path / "out", LLMExtractor(make_client(server, LLMCache(cache))))
        assert server.chat_requests == 18 and second["counts"]["skipped"] == 4
        calls = server.chat_requests
        again = extract_tagged(tagged, tmp_path / "fresh", LLMExtractor(make_client(server, LLMCache(cache))))
        assert server.chat_requests == calls, "a rerun into a fresh folder must be served from the cache"
    assert again["total"]["cache_hits"] == 18 and again["total"]["http_calls"] == 0
    rows = [row for _, row in iter_jsonl(tmp_path / "fresh" / "extractions.jsonl")]
    assert sorted(r["id"] for r in rows) == sorted(a.id for a in articles)
    cost = json.loads((tmp_path / "out" / "cost.json").read_text())
    assert cost["backend"] == "llm" and "k" not in json.dumps(cost).split('"')  # no key in the report


def test_a_line_a_kill_cut_short_is_redone_not_a_stop(tmp_path):
    articles = sample_articles(3)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, articles)
    out = tmp_path / "out"
    extract_tagged(tagged, out, OfflineExtractor())
    whole = (out / "extractions.jsonl").read_bytes()
    lines = whole.splitlines(keepends=True)
    (out / "extractions.jsonl").write_bytes(b"".join(lines[:2]) + lines[2][:40])  # killed mid-append
    report = extract_tagged(tagged, out, OfflineExtractor())
    assert report["counts"]["skipped"] == 2 and report["counts"]["extracted"] == 1
    assert (out / "extractions.jsonl").read_bytes() == whole


def test_invalid_answers_set_the_record_aside_with_raw_responses(tmp_path, de_niro):
    def responder(body):
        if body["response_format"]["json_schema"]["name"] == "rationale":
            return Reply.text("I think the claim is false.")
        return _answers()(body)

    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [de_niro])
    with FakeLLMServer(responder) as server:
        report = extract_tagged(tagged, tmp_path / "out", LLMExtractor(make_client(server)))
    assert report["counts"]["set_aside"] == 1
    assert not (tmp_path / "out" / "extractions.jsonl").exists()
    [(_, reject)] = list(iter_jsonl(tmp_path / "out" / "rejects.jsonl"))
    assert reject["id"] == de_niro.id and reject["stage"] == "extract"
    assert reject["data"]["task"] == "rationale"
    assert reject["data"]["raw_responses"] == ["I think the claim is false."] * 3


def test_scripted_answers_exercise_the_hallucination_guard():
    articles = sample_articles(40)
    with FakeLLMServer(scripted_reply) as server:
        outcomes = LLMExtractor(make_client(server, concurrency=8)).run(articles)
    flagged = [o for o in outcomes if o.hallucinated_urls]
    assert flagged, "the script fabricates links for one article in eight"
    for outcome in outcomes:
        assert FABRICATED_URL not in json.dumps(
            outcome.model_dump(mode="json", exclude={"hallucinated_urls"})
        )


# --- the reformat stage and the CLI ---------------------------------------------------------------


def test_reformat_stage_tags_stored_pages_and_rejects_the_rest(tmp_path):
    store = crawl_store(tmp_path / "crawl")
    report = reformat_store(store, tmp_path / "tagged", min_words=1)
    assert report["kept"] == 2 and sum(report["rejected"].values()) == 2
    tagged = [
        TaggedArticle.model_validate(row) for _, row in iter_jsonl(tmp_path / "tagged" / "articles.jsonl")
    ]
    assert {t.rating for t in tagged} == {"Miscaptioned", "Mostly True"}
    assert all(t.links and t.word_count > 200 for t in tagged)
    reasons = [row["reason"] for _, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
    assert any("HTML not found" in r for r in reasons) and any("no claim found" in r for r in reasons)


def test_cli_reformat_then_extract_offline_then_dry_run(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    store = crawl_store(tmp_path / "crawl")
    assert cli_main(["reformat", "--in", str(store), "--out", str(tmp_path / "tagged")]) == 0
    tagged = tmp_path / "tagged" / "articles.jsonl"
    out = tmp_path / "extract"
    assert cli_main(["extract", "--in", str(tagged), "--out", str(out)]) == 0  # auto -> offline
    rows = [row for _, row in iter_jsonl(out / "extractions.jsonl")]
    assert len(rows) == 2 and {r["provenance"]["backend"] for r in rows} == {"offline"}
    capsys.readouterr()
    assert (
        cli_main(
            [
                "extract",
                "--in",
                str(tagged),
                "--out",
                str(out),
                "--dry-run",
                "--json",
                "--price-in",
                "2.5",
                "--price-out",
                "10",
                "--model",
                "gpt-4o",
                "--cache",
                str(tmp_path / "cache.sqlite"),
            ]
        )
        == 0
    )
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["total"]["requests"] == 6 and estimate["total"]["cost_usd"] > 0


def test_cli_extract_llm_backend_reads_the_server_from_the_environment(tmp_path, monkeypatch, de_niro):
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [de_niro])
    with FakeLLMServer(_answers()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "secret-test-key")
        args = [
            "extract",
            "--in",
            str(tagged),
            "--out",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "c.db"),
        ]
        assert cli_main(args) == 0
        assert server.chat_requests == 3
    cost = (tmp_path / "out" / "cost.json").read_text()
    assert "secret-test-key" not in cost and json.loads(cost)["backend"] == "llm"


def test_recorded_scripted_answers_replay_the_whole_sample():
    """data/sample/llm/scripted_answers.jsonl matches today's prompts and tagger (else: --record)."""
    from benchmarks.extract_quality import DEFAULT_RECORDING, load_sample, run_llm, score

    gold, articles = load_sample(SITE)
    outcomes, report = run_llm(
        articles, SITE.parents[1] / DEFAULT_RECORDING.relative_to("data"), record=False
    )
    figures = score(gold, articles, outcomes)
    assert figures["set_aside"] == 0, "re-record: python -m benchmarks.extract_quality --record"
    assert figures["claim_exact_match"] == 1.0
    assert figures["hallucinated_links_dropped"] > 0
    assert report["total"]["http_calls"] == 3 * len(articles)


@pytest.mark.parametrize(
    ("rating", "kept_label", "reason"),
    [
        ("Incorrect Attribution", "False", None),
        ("Unproven (retired)", "Unproven", None),
        ("No Rating", None, "unrated"),
        ("Sorta Kinda", None, "unknown-rating: Sorta Kinda"),
    ],
)
def test_rating_words_flow_through_reformat_to_a_counted_reason_never_an_exception(
    tmp_path, rating, kept_label, reason
):
    store = crawl_store(tmp_path / "crawl")
    rows = [row for _, row in iter_jsonl(store / "articles.jsonl")]
    for row in rows:
        if row.get("html_sha256"):
            row["rating"] = rating
    write_jsonl(store / "articles.jsonl", rows)
    report = reformat_store(store, tmp_path / "tagged", min_words=1)
    tagged = [row for _, row in iter_jsonl(tmp_path / "tagged" / "articles.jsonl")]
    if reason is None:
        assert report["kept"] == 2 and {t["label"] for t in tagged} == {kept_label}
    else:
        assert report["kept"] == 0 and report["rejected"][reason] == 2
        reasons = [row["reason"] for _, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
        assert sum(reason in r for r in reasons) == 2
