"""The scripted LLM answers (extract/scripted.py): they exercise the hallucination guard, and their
recording replays the whole sample."""

from __future__ import annotations

import json

from rwpost.extract import LLMExtractor
from rwpost.extract.scripted import FABRICATED_URL, scripted_reply
from rwpost.testing.llm import FakeLLMServer
from tests.extract_helpers import SITE, make_client, sample_articles


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
