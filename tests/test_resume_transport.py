"""An outage is not an answer (issue 27): answers that failed for a transport reason (HTTP 5xx, rate
limits, timeouts, connection errors, after every retry) are asked again by a resumed ``evaluate`` or
``extract``, which says how many; refusals and invalid answers stay final."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.dataset import read_samples
from rwpost.extract.scripted import scripted_reply
from rwpost.io import write_jsonl
from rwpost.llm import LLMClient, LLMRequest, load_llm_schema
from rwpost.llm.client import is_transport_failure
from rwpost.tagged import tag_article
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from tests.conftest import free_port, real_page
from tests.evaluate_helpers import released_head

REQUEST = LLMRequest(
    key="rw-1",
    task="rationale",
    system="Extract the rationale.",
    user="article text",
    schema=load_llm_schema("rationale"),
    schema_name="rationale",
    prompt_version="rationale-test",
)
RATIONALE = {"reasoning_logic": "r", "key_points": ["a", "b", "c"]}


def failure(base_url: str, **options) -> str:
    """The stored error of one request that failed."""
    client = LLMClient(model="test-model", base_url=base_url, api_key="k", max_retries=0, **options)
    [result] = client.run([REQUEST])
    assert not result.ok
    return result.error


@pytest.mark.parametrize(
    ("reply", "transport"),
    [
        (Reply.server_error(503), True),
        (Reply.rate_limited(), True),
        (Reply.answer(RATIONALE).slow(2.0), True),  # a timeout
        (Reply(status=400, error="context length exceeded"), False),
        (Reply.text("not JSON"), False),  # an invalid answer, asked again within the run, then final
        (Reply.refused(), False),
    ],
)
def test_transport_failures_are_told_from_answers(reply, transport):
    with FakeLLMServer(lambda body: reply) as server:
        assert is_transport_failure(failure(server.base_url, timeout_s=0.5)) is transport


def test_no_connection_is_a_transport_failure():
    assert is_transport_failure(failure(f"http://127.0.0.1:{free_port()}/v1"))


class Outage:
    """A server that answers 500 while ``down`` (and, for one claim, an invalid answer in any case)."""

    def __init__(self, answer, invalid_for: str | None = None) -> None:
        self.down = True
        self.answer = answer
        self.invalid_for = invalid_for

    def __call__(self, body: dict) -> Reply:
        if self.invalid_for is not None and self.invalid_for in message_text(body, "user"):
            return Reply.text("not JSON")
        return Reply.server_error(500) if self.down else self.answer(body)


def test_a_resumed_evaluate_asks_again_for_answers_an_outage_failed(tmp_path, monkeypatch, capsys):
    data, _ = released_head(tmp_path, 3)
    samples = read_samples(data)
    out = tmp_path / "run"
    args = ["evaluate", "--data", str(data), "--detector", "vlm", "--model", "test-model", "--setting", "T"]
    args += ["--set", "max_retries=1", "--out", str(out), "--bootstrap", "5", "--no-progress"]
    answer = {"label": "True", "confidence": 0.7, "explanation": "x", "evidence_urls": []}
    outage = Outage(lambda body: Reply.answer(answer), invalid_for=samples[0].claim)
    with FakeLLMServer(outage) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-outage-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(args) == 0
        first = " ".join(capsys.readouterr().err.split())
        assert "2 answers failed for a transport reason" in first and "run the same command again" in first
        assert json.loads((out / "metrics.json").read_text())["coverage"]["answered"] == 0
        outage.down, before = False, server.chat_requests
        assert main(args) == 0
        asked = server.chat_requests - before
    second = " ".join(capsys.readouterr().err.split())
    assert asked == 2  # the two outage failures; the invalid answer is final
    assert "resumed: 2 answers that had failed for a transport reason" in second
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["retried_transport_failures"] == 2 and "transport_failures" not in manifest
    assert json.loads((out / "metrics.json").read_text())["coverage"]["answered"] == 2
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(s.id for s in samples)  # each id once
    assert "resumed: 2 answers" in (out / "report.md").read_text()
    assert main(args) == 0 and server.chat_requests - before == 2  # a third run asks nothing


def test_a_resumed_extract_asks_again_for_articles_an_outage_set_aside(tmp_path, monkeypatch, capsys):
    tagged = tmp_path / "tagged.jsonl"
    article = tag_article(real_page("robert-de-niro-trump-oscars"), "https://www.snopes.com/fact-check/x/")
    write_jsonl(tagged, [article])
    out = tmp_path / "out"
    args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "llm"]
    args += ["--cache", str(tmp_path / "c.db")]
    outage = Outage(scripted_reply)
    with FakeLLMServer(outage) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-outage-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("RWPOST_LLM_MAX_RETRIES", "1")
        assert main(args) == 0
        assert "1 articles failed for a transport reason" in " ".join(capsys.readouterr().out.split())
        assert json.loads((out / "summary.json").read_text())["set_aside"] == 1
        outage.down = False
        assert main(args) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "resumed: 1 articles set aside for a transport reason" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["extracted"], summary["set_aside"]) == (1, 0)
    assert (out / "rejects.jsonl").read_text() == ""
