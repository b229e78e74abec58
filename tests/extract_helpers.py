"""Helpers of the extraction tests: a client of a fake LLM server, its scripted extraction answers, and
the bundled sample site's articles tagged."""

from __future__ import annotations

import json

from rwpost.llm import LLMCache, LLMClient
from rwpost.records import TaggedArticle
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.killing import SITE

__all__ = ["SITE", "answers", "make_client", "sample_articles"]


def make_client(server: FakeLLMServer, cache: LLMCache | None = None, **kw) -> LLMClient:
    """A client of ``server`` (test model and key), with ``cache`` and any other options."""
    return LLMClient(
        model="test-model",
        base_url=server.base_url,
        api_key="k",
        cache=cache,
        **kw,
    )


def answers(post=None, rationale=None, evidence=None):
    """A fake LLM server's responder: each extraction task's answer, the given one or a default."""
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


def sample_articles(n: int) -> list[TaggedArticle]:
    """The first ``n`` gold articles of the bundled sample site, tagged from their pages."""
    gold = [json.loads(line) for line in (SITE / "gold.jsonl").read_text(encoding="utf-8").splitlines()[:n]]
    return [
        tag_article((SITE / g["page"].strip("/") / "index.html").read_text(encoding="utf-8"), g["news_url"])
        for g in gold
    ]
