"""The Batch API path of extraction against the loopback server's files and batches endpoints: answers
land in the same cache at the batch price, failures and an expired batch's rest are asked synchronously,
and an interrupted run resumes the batch it recorded instead of paying for it twice."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rwpost.errors import RwpostError
from rwpost.extract import LLMExtractor
from rwpost.extract.run import extract_tagged
from rwpost.extract.scripted import scripted_reply
from rwpost.io import write_jsonl
from rwpost.llm import LLMCache, LLMClient, Price
from rwpost.llm.batch import BatchRunner
from rwpost.testing.llm import FakeLLMServer, Reply, request_hash

SITE = Path(__file__).resolve().parents[1] / "data" / "sample" / "site"
PRICES = {"test-model": Price(input_per_mtok=1.0, output_per_mtok=4.0)}


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    from benchmarks.extract_quality import load_sample

    _, articles = load_sample(SITE)
    path = tmp_path_factory.mktemp("tagged") / "articles.jsonl"
    write_jsonl(path, articles[:6])
    return path


def extract(server: FakeLLMServer, tagged: Path, out: Path, *, batch: bool, **runner) -> dict:
    client = LLMClient(
        model="test-model",
        base_url=server.base_url,
        api_key="k",
        cache=LLMCache(out / "cache.sqlite"),
        prices=PRICES,
    )
    runner = BatchRunner(client, out / "batches.json", poll_s=0.01, **runner) if batch else None
    return extract_tagged(tagged, out, LLMExtractor(client), batch=runner)


def test_batch_answers_fill_the_cache_at_half_price_and_match_synchronous_calls(tagged, tmp_path):
    with FakeLLMServer(scripted_reply) as server:
        sync = extract(server, tagged, tmp_path / "sync", batch=False)
        calls = server.chat_requests
        batched = extract(server, tagged, tmp_path / "batch", batch=True)
        assert server.chat_requests == calls  # nothing synchronous: every answer came from the batches
        assert server.batch_requests == calls == 18  # 6 articles x (post, rationale, evidence)
        assert len(server.batches) == 2  # post+rationale, then evidence (it needs the key points)
    a = (tmp_path / "sync" / "extractions.jsonl").read_bytes()
    assert a == (tmp_path / "batch" / "extractions.jsonl").read_bytes()
    assert (
        batched["total"]["cache_hits"] == 18
        and batched["total"]["prompt_tokens"] == sync["total"]["prompt_tokens"]
    )
    assert batched["total"]["cost_usd"] == pytest.approx(sync["total"]["cost_usd"] / 2, rel=1e-3)
    assert batched["batch"]["answered"] == 18 and batched["batch"]["failed"] == 0
    assert json.loads((tmp_path / "batch" / "batches.json").read_text()) == {}  # nothing left in flight


def test_failed_lines_and_invalid_answers_fall_back_to_synchronous_calls(tagged, tmp_path):
    seen: set[str] = set()
    lock = threading.Lock()

    def flaky(body):  # the first time a request is seen: a 500 for posts, an invalid answer for evidence
        key = request_hash(body)
        with lock:
            first = key not in seen
            seen.add(key)
        system = body["messages"][0]["content"]
        if first and "post" in system.lower()[:200] and "evidence" not in system.lower()[:200]:
            return Reply.server_error(500)
        if first and "evidence" in system.lower()[:200]:
            return Reply.text("not json")
        return scripted_reply(body)

    with FakeLLMServer(flaky) as server:
        cost = extract(server, tagged, tmp_path / "out", batch=True)
        assert server.chat_requests > 0
        assert cost["batch"]["failed"] == server.chat_requests  # each failed line asked once, synchronously
        assert cost["batch"]["invalid"] > 0
    rows = (tmp_path / "out" / "extractions.jsonl").read_text().splitlines()
    assert len(rows) == 6  # every article extracted in the end


def test_an_expired_batch_answers_part_and_the_rest_is_asked_synchronously(tagged, tmp_path):
    with FakeLLMServer(scripted_reply) as server:
        server.batch_expire_after = 4
        cost = extract(server, tagged, tmp_path / "out", batch=True)
        # 4 lines of the first batch (2 articles' post and rationale), so 2 evidence lines in the second
        assert cost["batch"]["answered"] == 4 + 2 and cost["batch"]["failed"] == 12 - 4
        assert server.chat_requests == 18 - 6
    assert len((tmp_path / "out" / "extractions.jsonl").read_text().splitlines()) == 6


def test_an_interrupted_run_resumes_its_recorded_batch(tagged, tmp_path):
    with FakeLLMServer(scripted_reply) as server:
        server.batch_polls = 10**6
        with pytest.raises(RwpostError, match=r"batch batch_1 is still in_progress .* run again to resume"):
            extract(server, tagged, tmp_path / "out", batch=True, max_wait_s=0.05)
        recorded = json.loads((tmp_path / "out" / "batches.json").read_text())
        assert [v["batch_id"] for v in recorded.values()] == ["batch_1"]
        server.batch_polls = 0
        cost = extract(server, tagged, tmp_path / "out", batch=True)
        assert cost["batch"]["resumed"] == 1 and len(server.batches) == 2  # the same batch, then evidence
        assert server.batch_requests == 18 and server.chat_requests == 0  # nothing paid twice


def test_batch_api_needs_an_api_backend(tagged, tmp_path):
    from rwpost.errors import ConfigError
    from rwpost.stages import extract as stage

    params = stage.Params.of(input=tagged, out=tmp_path / "out", backend="offline", batch_api=True)
    with pytest.raises(ConfigError, match="batch_api needs the llm backend"):
        stage.run(params)
