"""The LLM client against a real OpenAI-compatible HTTP server on 127.0.0.1 (rwpost.testing.llm)."""

from __future__ import annotations

import json
import time

import pytest

from rwpost.errors import ConfigError, RwpostError
from rwpost.llm import (
    ImageInput,
    LLMAccessError,
    LLMCache,
    LLMCallError,
    LLMClient,
    LLMRequest,
    Price,
    load_llm_schema,
)
from rwpost.testing.llm import FakeLLMServer, Recorder, Replayer, Reply, message_text

RATIONALE = {"reasoning_logic": "The photo predates the event.", "key_points": ["1. a", "2. b", "3. c"]}


def make_request(key: str = "rw-1", user: str = "article text", **kw) -> LLMRequest:
    return LLMRequest(
        key=key,
        task="rationale",
        system="Extract the rationale.",
        user=user,
        schema=load_llm_schema("rationale"),
        schema_name="rationale",
        prompt_version="rationale-test",
        **kw,
    )


def make_client(server: FakeLLMServer, **kw) -> LLMClient:
    options = {"timeout_s": 5.0}
    options.update(kw)
    return LLMClient(model="test-model", base_url=server.base_url, api_key="test-key", **options)


def test_rerun_is_served_entirely_from_cache_with_zero_http_calls(tmp_path):
    requests = [make_request(f"rw-{i}", user=f"article {i}") for i in range(5)]
    with FakeLLMServer(lambda body: Reply.answer(RATIONALE)) as server:
        first = make_client(server, cache=LLMCache(tmp_path / "cache.sqlite")).run(requests)
        assert server.chat_requests == 5
        rerun_client = make_client(server, cache=LLMCache(tmp_path / "cache.sqlite"))
        again = rerun_client.run(requests)
        assert server.chat_requests == 5, "the rerun made HTTP calls"
    assert [r.data for r in again] == [r.data for r in first]
    assert all(r.cached for r in again)
    assert rerun_client.report()["total"]["cache_hits"] == 5
    assert rerun_client.report()["total"]["http_calls"] == 0


def test_cache_key_changes_with_prompt_version_and_image_bytes(tmp_path):
    cache = LLMCache(tmp_path / "cache.sqlite")
    with FakeLLMServer(lambda body: Reply.answer(RATIONALE)) as server:
        client = make_client(server, cache=cache)
        client.run([make_request(images=(ImageInput(b"one", "image/png"),))])
        client.run([make_request(images=(ImageInput(b"one", "image/png"),))])
        assert server.chat_requests == 1
        client.run([make_request(images=(ImageInput(b"two", "image/png"),))])
        assert server.chat_requests == 2
        bumped = LLMRequest(**{**make_request().__dict__, "prompt_version": "rationale-test-2"})
        client.run([bumped])
        assert server.chat_requests == 3
        image_part = server.requests[0]["messages"][1]["content"][1]
        assert image_part["image_url"]["url"].startswith("data:image/png;base64,")


def test_429_storm_ends_in_success_within_the_concurrency_bound(tmp_path):
    state = {"n": 0}

    def storm(body):
        state["n"] += 1
        if state["n"] <= 40:
            return Reply.rate_limited(retry_after=0.01).slow(0.005)
        return Reply.answer(RATIONALE, delay_s=0.01)

    requests = [make_request(f"rw-{i}", user=f"article {i}") for i in range(20)]
    with FakeLLMServer(storm) as server:
        client = make_client(server, concurrency=4, max_retries=20)
        results = client.run(requests)
        assert server.status_counts[429] == 40
        assert server.max_in_flight <= 4
    assert all(r.ok for r in results)
    assert client.max_in_flight <= 4


@pytest.mark.parametrize(
    "busy",
    [
        Reply.rate_limited(retry_after=0.3),
        Reply(status=429, headers={"retry-after-ms": "300"}, error="slow down"),
    ],
    ids=["retry-after", "retry-after-ms"],
)
def test_retry_after_header_is_honoured(tmp_path, busy):
    replies = [busy, Reply.answer(RATIONALE)]
    with FakeLLMServer(replies) as server:
        client = make_client(server)
        started = time.monotonic()
        [result] = client.run([make_request()])
        waited = time.monotonic() - started
    assert result.ok and result.attempts == 2
    assert waited >= 0.3  # a lower bound set by the server, not a speed assertion


def test_server_errors_and_timeouts_are_retried(tmp_path):
    replies = [Reply.server_error(503), Reply.answer(RATIONALE).slow(2.0), Reply.answer(RATIONALE)]
    with FakeLLMServer(replies) as server:
        [result] = make_client(server, timeout_s=0.5).run([make_request()])
    assert result.ok
    assert result.attempts == 3


def test_the_sdks_retries_are_counted_in_the_report():
    replies = [Reply.server_error(502), Reply.rate_limited(retry_after=0.01), Reply.answer(RATIONALE)]
    with FakeLLMServer(replies) as server:
        client = make_client(server)
        [result] = client.run([make_request()])
        assert server.chat_requests == 3
    assert result.ok and result.attempts == 3
    assert client.report()["tasks"]["rationale"]["http_calls"] == 3


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (
            Reply.server_error(503),
            "InternalServerError after 1 attempt(s): Error code: 503 - server error 503",
        ),
        (
            Reply(status=409, error="a conflict"),
            "ConflictError after 1 attempt(s): Error code: 409 - a conflict",
        ),
        (Reply.rate_limited(), "RateLimitError after 1 attempt(s): Error code: 429 - rate limit reached"),
        (Reply.answer(RATIONALE).slow(1.0), "APITimeoutError after 1 attempt(s): Request timed out."),
        (Reply(status=400, error="too long"), "server refused the request: Error code: 400 - too long"),
        (
            Reply.raw("<html>bad gateway</html>", status=502),
            "InternalServerError after 1 attempt(s): Error code: 502",
        ),
    ],
    ids=["503", "409", "429", "timeout", "400", "502-html"],
)
def test_a_failed_call_is_worded_as_the_sdk_words_it(reply, words):
    """The ``openai`` error's class and message, as stored failures and resumed runs recognise them."""
    with FakeLLMServer([reply]) as server:
        [result] = make_client(server, max_retries=0, timeout_s=0.3).run([make_request()])
    assert not result.ok and result.error is not None
    assert result.error.startswith(f"rw-1: {words}"), result.error


def test_spent_retries_fail_the_call_with_every_attempt_counted():
    with FakeLLMServer(lambda body: Reply.server_error(503)) as server:
        client = make_client(server, max_retries=2)
        [result] = client.run([make_request()])
        assert server.chat_requests == 3
    assert not result.ok and "InternalServerError after 3 attempt(s)" in result.error
    task = client.report()["tasks"]["rationale"]
    assert task["http_calls"] == 3 and task["failures"] == 1


def test_a_transport_failure_is_an_rwpost_error():
    assert issubclass(LLMCallError, RwpostError)


def test_invalid_json_twice_then_valid_succeeds():
    replies = [Reply.text("{not json"), Reply.answer({"reasoning_logic": 3}), Reply.answer(RATIONALE)]
    with FakeLLMServer(replies) as server:
        client = make_client(server)
        [result] = client.run([make_request()])
        assert server.chat_requests == 3
    assert result.ok and result.data == RATIONALE
    assert result.raw_responses[:2] == ["{not json", '{"reasoning_logic": 3}']


def test_invalid_forever_sets_the_record_aside_with_its_raw_response(tmp_path):
    cache = LLMCache(tmp_path / "cache.sqlite")
    with FakeLLMServer(lambda body: Reply.text("Sorry, I cannot help.")) as server:
        client = make_client(server, cache=cache, invalid_retries=2)
        [result] = client.run([make_request()])
        assert server.chat_requests == 3
    assert not result.ok
    assert result.raw == "Sorry, I cannot help."
    assert result.raw_responses == ["Sorry, I cannot help."] * 3
    assert "not valid JSON" in result.error
    assert len(cache) == 0, "an invalid answer must never be cached"
    assert client.report()["tasks"]["rationale"]["failures"] == 1


def test_falls_back_to_json_object_mode_when_json_schema_is_refused():
    with FakeLLMServer(lambda body: Reply.answer(RATIONALE), json_schema_supported=False) as server:
        client = make_client(server)
        [result] = client.run([make_request()])
        assert result.ok
        last = server.requests[-1]
        assert last["response_format"] == {"type": "json_object"}
        assert '"key_points"' in message_text(last, "system"), "the schema must be in the prompt"
        assert client.response_mode == "json_object"


def test_fenced_json_answers_are_accepted():
    with FakeLLMServer([Reply.text("```json\n" + json.dumps(RATIONALE) + "\n```")]) as server:
        [result] = make_client(server).run([make_request()])
    assert result.ok and result.data == RATIONALE


def test_a_refused_key_is_not_retried_and_stops_the_caller():
    with FakeLLMServer([Reply(status=401, error="bad key")]) as server:
        with pytest.raises(LLMAccessError, match="HTTP 401: bad key"):
            make_client(server).run([make_request()])
        assert server.chat_requests == 1


def test_tokens_and_cost_are_accounted_per_task():
    with FakeLLMServer(lambda body: Reply.answer(RATIONALE)) as server:
        client = make_client(server, prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)})
        client.run([make_request("a", user="x"), make_request("b", user="y")])
    report = client.report()
    task = report["tasks"]["rationale"]
    assert task["requests"] == 2 and task["http_calls"] == 2
    assert task["prompt_tokens"] > 0 and task["completion_tokens"] > 0
    expected = (task["prompt_tokens"] * 1.0 + task["completion_tokens"] * 2.0) / 1e6
    assert task["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert "test-key" not in json.dumps(report) and "test-key" not in repr(client)


def test_dry_run_estimate_makes_no_calls_and_skips_cached(tmp_path):
    cache = LLMCache(tmp_path / "cache.sqlite")
    with FakeLLMServer(lambda body: Reply.answer(RATIONALE)) as server:
        client = make_client(
            server, cache=cache, prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=1.0)}
        )
        client.run([make_request("a", user="cached one")])
        estimate = client.estimate([make_request("a", user="cached one"), make_request("b", user="new")])
        assert server.chat_requests == 1
    row = estimate["tasks"]["rationale"]
    assert row["requests"] == 2 and row["cached"] == 1
    assert row["prompt_tokens"] > 0 and estimate["total"]["cost_usd"] > 0


def test_record_then_replay_answers_without_the_original_responder(tmp_path):
    recording = tmp_path / "answers.jsonl"
    requests = [make_request(f"rw-{i}", user=f"article {i}") for i in range(3)]
    with FakeLLMServer(Recorder(lambda body: Reply.answer(RATIONALE), recording)) as server:
        recorded = make_client(server).run(requests)
    replayer = Replayer(recording)
    with FakeLLMServer(replayer) as server:
        replayed = make_client(server).run(requests)
        [missing] = make_client(server).run([make_request("rw-x", user="never recorded")])
    assert [r.data for r in replayed] == [r.data for r in recorded]
    assert not missing.ok and replayer.misses == 1


def test_models_endpoint_lists_models():
    import httpx

    with FakeLLMServer([], models=("a", "b")) as server:
        data = httpx.get(server.base_url + "/models").json()
    assert [m["id"] for m in data["data"]] == ["a", "b"]


def test_cache_is_shared_safely_between_processes(tmp_path):
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from rwpost.llm import LLMCache, LLMRequest, load_llm_schema\n"
        "cache = LLMCache(sys.argv[1])\n"
        "schema = load_llm_schema('rationale')\n"
        "for i in range(60):\n"
        "    r = LLMRequest(key=str(i), task='t', system='s', user=str(i), schema=schema,\n"
        "                   schema_name='rationale', prompt_version='v')\n"
        "    cache.put(f'{sys.argv[2]}-{i % 40}', model='m', request=r, answer={'i': i}, raw='{}',\n"
        "              prompt_tokens=1, completion_tokens=1)\n"
    )
    path = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), name], stderr=subprocess.PIPE)
        for name in ("a", "b", "c")
    ]
    errors = [p.communicate()[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    cache = LLMCache(path)
    assert len(cache) == 120
    assert cache.get("a-5").answer == {"i": 5}, "the first writer of a key wins"


def test_a_bad_request_unrelated_to_the_schema_fails_without_switching_mode():
    with FakeLLMServer([Reply(status=400, error="maximum context length exceeded")]) as server:
        client = make_client(server)
        [result] = client.run([make_request()])
        assert server.chat_requests == 1
    assert not result.ok and "context length" in result.error
    assert client.response_mode == "auto"


def test_usage_is_estimated_when_the_server_reports_none():
    class NoUsage(FakeLLMServer):
        def _answer(self, body):
            status, data, headers = super()._answer(body)
            data.pop("usage", None)
            return status, data, headers

    with NoUsage(lambda body: Reply.answer(RATIONALE)) as server:
        client = make_client(server)
        [result] = client.run([make_request(user="x" * 400)])
    assert result.ok and result.prompt_tokens >= 100 and result.completion_tokens > 0


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:9/v1?api-key=KEYSECRET8", "http://[1]/v1", "ftp://h/v1"]
)
def test_a_base_url_every_request_would_miss_is_refused_up_front(base_url):
    # issue 39 L12: an Azure-style ?api-key= base URL made every request 404, and the run exited 0
    with pytest.raises(ConfigError, match="LLM base URL"):
        LLMClient(model="m", base_url=base_url, api_key="k")
    LLMClient(model="m", base_url="http://127.0.0.1:9/v1", api_key="k")  # a plain one is fine
