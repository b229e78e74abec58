"""The LLM extraction backend through a real loopback server (extract/llm.py): tag ids become exact URLs,
invented ones never reach the output, the evidence prompt carries the key points."""

from __future__ import annotations

import json

from rwpost.extract import LLMExtractor
from rwpost.records import Extraction
from rwpost.testing.llm import FakeLLMServer, message_text
from tests.extract_helpers import answers as _answers
from tests.extract_helpers import make_client


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
