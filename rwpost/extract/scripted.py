"""A scripted, deterministic stand-in for a model, for the LLM path's offline reports and tests.

:func:`scripted_reply` answers the three extraction prompts as a model would (JSON by tag id) by
running the offline rules over the tagged article it finds in the prompt. It is **not** a model: its
figures show that the LLM path (client, cache, schemas, grounding) works end to end, not what a
real model would score. Every eighth article (by a hash, so deterministically) it also cites a tag
id and a URL that do not exist, so the hallucination guard is exercised.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from rwpost.extract.offline import extract_evidence, extract_post, extract_rationale
from rwpost.records import Link, TaggedArticle
from rwpost.tagged import TAG_RE, _with_contexts, count_words
from rwpost.testing.llm import Reply, message_text

FABRICATED_URL = "https://fabricated.example.invalid/not-in-the-article"


def _article_from_prompt(user: str) -> TaggedArticle:
    claim = re.search(r"^Claim: (.*)$", user, re.MULTILINE)
    rating = re.search(r"^Rating: (.*)$", user, re.MULTILINE)
    text = user.split("Article (text with tagged URLs):\n", 1)[-1]
    links: dict[int, Link] = {}
    for match in TAG_RE.finditer(text):
        link_id = int(match.group(2))
        url = match.group(0).split(": ", 1)[1][:-1]
        links.setdefault(link_id, Link(id=link_id, kind=match.group(1).lower(), url=url))
    ordered = [links[k] for k in sorted(links)]
    return TaggedArticle(
        id="rw-scripted",
        news_url="https://scripted.invalid/",
        claim=claim.group(1) if claim else None,
        rating=rating.group(1) if rating else None,
        text=text,
        links=_with_contexts(text, ordered),
        word_count=count_words(text),
    )


def _task(body: dict[str, Any]) -> str:
    response_format = body.get("response_format") or {}
    name = (response_format.get("json_schema") or {}).get("name")
    if name:
        return str(name)
    system = message_text(body, "system")
    if "evidence curator" in system:
        return "evidence"
    if "original social media post" in system:
        return "post"
    return "rationale"


def scripted_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer the script gives to one chat completions request body."""
    user = message_text(body, "user")
    article = _article_from_prompt(user)
    ids = {link.url: link.id for link in article.links}
    fabricate = int(hashlib.sha256(article.text.encode("utf-8")).hexdigest()[:4], 16) % 8 == 0
    task = _task(body)
    if task == "post":
        post = extract_post(article)
        return {
            "post_text": post.text,
            "image_link_ids": [ids[u] for u in post.image_links if u in ids],
            "video_link_id": ids.get(post.video_link) if post.video_link else None,
            "post_link_id": ids.get(post.post_link) if post.post_link else None,
        }
    if task == "rationale":
        reasoning, key_points = extract_rationale(article)
        return {"reasoning_logic": reasoning or "(no conclusion found)", "key_points": key_points or ["1. -"]}
    key_points = re.findall(
        r"^\d+\. .*$", user.split("Key points:\n", 1)[-1].split("\n\nArticle", 1)[0], re.M
    )
    post = extract_post(article)
    items = [
        {
            "type": e.type,
            "description": e.description or "",
            "content": e.content,
            "source": e.source,
            "link_id": ids.get(e.url) if e.url else None,
            "key_point_ids": e.key_point_ids or [1],
        }
        for e in extract_evidence(article, post, key_points)
    ]
    if fabricate:
        items.append(dict(items[0] if items else {}, link_id=max(ids.values(), default=0) + 50, type="Text"))
        items.append(dict(items[0], link_id=FABRICATED_URL, description="A fabricated source."))
    for item in items:
        item.setdefault("description", "")
        item.setdefault("content", None)
        item.setdefault("source", None)
        item.setdefault("key_point_ids", [1])
    return {"evidence": items}


def scripted_reply(body: dict[str, Any]) -> Reply:
    """:func:`scripted_answer` as a :class:`~rwpost.testing.llm.Reply` for the test server."""
    return Reply.answer(scripted_answer(body))
