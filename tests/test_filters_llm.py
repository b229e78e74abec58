"""The LLM second opinions (Tables S1, S2) through rwpost's real LLM client and a loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image
from skimage import data as skdata

from rwpost.filters.cache import MeasurementCache
from rwpost.filters.llm import client_judges
from rwpost.filters.necessity import NecessityFilter
from rwpost.filters.runner import run_filters
from rwpost.filters.watermark import WatermarkFilter
from rwpost.llm import LLMCache, LLMClient
from rwpost.records import Candidate
from rwpost.testing.llm import FakeLLMServer, Reply


def _respond(body: dict) -> Reply:
    """A scripted model: reads the task from the prompt, answers in the prompt's format."""
    messages = json.dumps(body["messages"])
    if "watermark-like labels" in messages:
        has_image = "data:image/" in messages
        return Reply.answer(
            {"watermarked": has_image, "matched_keywords": ["satire"] if has_image else [], "reason": "stamp"}
        )
    if "Pope" in messages:
        return Reply.answer({"image_required": "unsure", "reason": "could go either way"})
    if "photograph" in messages:
        return Reply.answer({"image_required": "yes", "reason": "the photo is the evidence"})
    return Reply.text("not json")


def test_llm_judges_answer_through_the_client_and_are_cached(tmp_path: Path) -> None:
    photo = tmp_path / "p.jpg"
    Image.fromarray(skdata.rocket()).save(photo)
    candidates = [
        Candidate(id="rw-a", claim="A photograph shows a rocket.", image_path=str(photo), ocr_text=""),
        Candidate(id="rw-b", claim="The Pope wore a puffer jacket.", image_path=str(photo), ocr_text=""),
        Candidate(id="rw-c", claim="Garbled", image_path=str(photo), ocr_text=""),
    ]
    with FakeLLMServer(_respond) as server:
        client = LLMClient(
            model="test-model",
            base_url=server.base_url,
            api_key="test",
            cache=LLMCache(tmp_path / "llm.sqlite"),
            max_retries=0,
        )
        vision, text = client_judges(client)
        filters = [
            NecessityFilter(judge=text, judge_id="test-model"),
            WatermarkFilter(judge=vision, judge_id="test-model"),
        ]
        with MeasurementCache(tmp_path / "m.sqlite") as cache:
            result = run_filters(candidates, filters, {}, cache=cache, measure_all=True, progress=False)
            calls = server.chat_requests
            again = run_filters(candidates, filters, {}, cache=cache, measure_all=True, progress=False)
        assert server.chat_requests == calls  # the rerun asked nothing
    assert [s["measured"] for s in again.cache_use] == [0, 0]
    by = {(d.id, d.filter): d for d in result.decisions}
    assert by[("rw-a", "necessity")].details["image_required"] == "yes"
    assert by[("rw-b", "necessity")].reason == "image_required_uncertain"  # 'unsure' reads as uncertain
    assert by[("rw-c", "necessity")].reason == "image_required_uncertain"  # invalid answer: fail closed
    assert by[("rw-c", "necessity")].details["source"] == "llm"
    wm = by[("rw-a", "watermark")]
    assert wm.reason == "watermark" and wm.details["llm"]["matched_keywords"] == ["satire"]
