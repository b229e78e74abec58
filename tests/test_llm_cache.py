"""LLM answers in the one sqlite store: unchanged keys, reopening, first writer wins (llm/cache.py)."""

from __future__ import annotations

from rwpost.llm import ImageInput, LLMCache, LLMRequest
from rwpost.llm.cache import cache_key


def _request(**kw) -> LLMRequest:
    return LLMRequest(
        key="rw-1",
        task="rationale",
        system="sys",
        user="user text",
        schema={"type": "object"},
        schema_name="rationale",
        prompt_version="v1",
        **kw,
    )


def test_llm_cache_keys_are_unchanged():
    # Values computed by the cache_key of commit f3b9421: a changed key would re-bill every cached answer.
    assert cache_key("test-model", _request()) == (
        "84aaeeccd00389d51478ae8e847ed1965233367311cd03212528fe91be06254a"
    )
    with_image = _request(images=(ImageInput(b"\x89PNG fake", "image/png"),))
    assert cache_key("test-model", with_image) == (
        "cca4c4f602b484864f382405a2ba8e8d1492b29bf1be8735632bc0ac7046c5fd"
    )


def test_llm_answers_survive_reopening_and_the_first_writer_wins(tmp_path):
    path = tmp_path / "llm.sqlite"
    answer = {"answer": {"a": 1}, "raw": '{"a": 1}', "prompt_tokens": 10, "completion_tokens": 5}
    with LLMCache(path) as cache:
        cache.put("k1", model="m", request=_request(), **answer)
        cache.put("k1", model="m", request=_request(), **{**answer, "answer": {"a": 2}})
    with LLMCache(path) as cache:
        assert len(cache) == 1 and "k1" in cache
        hit = cache.get("k1")
        assert hit is not None
        assert (hit.answer, hit.raw) == ({"a": 1}, '{"a": 1}')
        assert (hit.prompt_tokens, hit.completion_tokens) == (10, 5)
