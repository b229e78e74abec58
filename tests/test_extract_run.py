"""Extraction runs over a tagged file: resume, cache, cut-short lines, records set aside (extract/run.py)."""

from __future__ import annotations

import json

import pytest

from rwpost.errors import ConfigError
from rwpost.extract import LLMExtractor, OfflineExtractor
from rwpost.extract.run import extract_tagged
from rwpost.extract.scripted import scripted_reply
from rwpost.io import iter_jsonl, write_jsonl
from rwpost.llm import LLMCache, LLMClient
from rwpost.testing.llm import FakeLLMServer, Reply
from tests.extract_helpers import answers as _answers
from tests.extract_helpers import make_client, sample_articles


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


def test_a_folder_of_another_backend_model_or_prompt_is_not_resumed(tmp_path):
    # issue 39 M3: offline into a folder of LLM extractions skipped all of them and rewrote summary.json
    # as offline while every record said llm
    articles = sample_articles(3)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, articles)
    out = tmp_path / "out"
    with FakeLLMServer(scripted_reply) as server:
        extract_tagged(tagged, out, LLMExtractor(make_client(server)))
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        with pytest.raises(ConfigError, match=r"holds the extractions of another run \(3 by backend llm, "):
            extract_tagged(tagged, out, OfflineExtractor())
        other_model = LLMClient(model="another-model", base_url=server.base_url, api_key="k")
        with pytest.raises(ConfigError, match="model another-model"):
            extract_tagged(tagged, out, LLMExtractor(other_model))
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written
        again = extract_tagged(tagged, out, LLMExtractor(make_client(server)))  # the same run resumes
    assert again["counts"]["skipped"] == 3
    offline = tmp_path / "offline"
    extract_tagged(tagged, offline, OfflineExtractor())
    with pytest.raises(ConfigError, match="this run is backend llm"):
        extract_tagged(tagged, offline, LLMExtractor(make_client(server)))


def test_records_are_flushed_to_disk_once_per_run_not_once_each(tmp_path, monkeypatch):
    """Issue 35: an fsync per appended record was half of a sharded extraction's time. The appends go to
    the kernel (a killed run keeps them: the kill tests), and the run flushes its files once at its end,
    before a shard's marker; so the fsyncs of a run do not grow with its records."""
    import os

    articles = sample_articles(12)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, articles)
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    report = extract_tagged(tagged, tmp_path / "out", OfflineExtractor())
    records = report["counts"]["extracted"] + report["counts"].get("set_aside", 0)
    assert records == 12
    fsyncs_of_12 = len(synced)
    write_jsonl(tagged, sample_articles(4))
    synced.clear()
    extract_tagged(tagged, tmp_path / "out4", OfflineExtractor())
    assert len(synced) == fsyncs_of_12 < records  # the same few commits whatever the number of records
