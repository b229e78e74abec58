"""AgentFact end to end: the runner, the loopback LLM server (scripted agents), the loopback search server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.detectors.agentfact import AgentFactDetector
from rwpost.evaluate.detectors.agentfact.detector import explanation_text
from rwpost.evaluate.export import agentfact_row
from rwpost.evaluate.runner import read_predictions
from rwpost.evaluate.search import make_backend
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, message_text
from rwpost.testing.search import SearchServer, result
from tests.evaluate_helpers import Agents, agentfact_spec, evidence, make_sample, news, schema_of

SECRET = "sk-agentfact-secret-never-written"


def spec(llm, search, tmp_path, setting="open-web", detector="agentfact", **extra) -> RunSpec:
    return agentfact_spec(llm, search, tmp_path, setting, detector, secret=SECRET, **extra)


def agents_called(llm) -> list[str]:
    return [schema_of(b) for b in llm.requests]


def test_a_confident_answer_ends_the_run_early_with_ledger_explanation_and_layout(tmp_path):
    samples = [make_sample(0, Label.FALSE)]
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        metrics = evaluate(samples, spec(llm, search, tmp_path), tmp_path / "run", encode=None).dump()
        # the first validation sentence brings 3 items: temporary + accumulated reasoning, confident: stop
        assert search.queries == ["V1"]
        assert agents_called(llm) == [
            "agentfact_plan", "agentfact_summary", "agentfact_source",
            "agentfact_reasoning", "agentfact_reasoning", "agentfact_explanation",
        ]  # fmt: skip
    assert metrics["accuracy"] == 1.0
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    names = [(c["name"], c["agent"]) for c in row["calls"]]
    assert names == [
        ("test-model", "agent-sp"), ("search:loopback", "agent-tr-search"),
        ("test-model", "agent-tr-summarise"), ("test-model", "agent-tr-source"),
        ("test-model", "agent-r-t"), ("test-model", "agent-r-a"), ("test-model", "agent-eg"),
    ]  # fmt: skip
    # the runner's price table prices every model call by its model name (the detector prices nothing)
    model_calls = [c for c in row["calls"] if c["kind"] == "model"]
    assert all(c["cost_usd"] is None and c["tokens_in"] > 0 and c["tokens_out"] > 0 for c in model_calls)
    tokens_in, tokens_out = (
        sum(c["tokens_in"] for c in model_calls),
        sum(c["tokens_out"] for c in model_calls),
    )
    assert row["explanation"].splitlines() == [
        "The photo predates the event.",
        "- 1. The image is older. [T1, T2]",
    ]
    assert row["evidence_urls"] == ["https://example.org/V1/0", "https://example.org/V1/1"]
    ledger = metrics["ledger"]
    assert ledger["cost_usd"] == pytest.approx((tokens_in * 1.0 + tokens_out * 2.0) / 1e6)
    assert ledger["unpriced_calls"] == 1  # the search call: no price for search:loopback in the table
    assert ledger["by_name"]["test-model"]["calls"] == 6 and ledger["tool_calls"] == 1
    assert {a: t["calls"] for a, t in ledger["by_agent"].items()} == {
        "agent-eg": 1, "agent-r-a": 1, "agent-r-t": 1, "agent-sp": 1,
        "agent-tr-search": 1, "agent-tr-source": 1, "agent-tr-summarise": 1,
    }  # fmt: skip
    assert ledger["by_agent"]["agent-eg"]["cost_usd"] > 0
    assert "| agent-tr-summarise | 1 | 1 | 0 |" in (tmp_path / "run" / "report.md").read_text()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "agentfact_plan.v1" in manifest["prompt_hashes"] and len(manifest["prompt_hashes"]) == 8
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            assert SECRET not in path.read_text()

    layout = agentfact_row(
        0, samples[0], _prediction(row), setting="T+I+W", model=None, baseline=False, k=None
    )
    answer = layout["final_answer"]["updated_answer"]
    assert answer["validation_result"]["3-class_authenticity_label"] == "false"
    # the authors' layout: the key point without its ids, which are listed once beside it
    assert answer["validation_result"]["key_points"] == ["1. The image is older."]
    assert answer["validation_result"]["evidence_ids"] == ["T1", "T2"]
    assert answer["confidence_level"] == "5" and layout["post_info"]["news_url"] == samples[0].news_url


def _prediction(row):
    from rwpost.evaluate.contract import Prediction

    return Prediction.from_row(row)


def test_spent_lists_bring_a_new_plan(tmp_path):
    plans = [
        {"validation_list": [{"sentence": "V1"}], "search_list": []},
        {"validation_list": [], "search_list": [{"information_needed": "N2"}]},
    ]
    script = Agents(plans, unsure_until="query-N2")
    text = {"V1": news("V1", 1), "query N2": news("query N2", 3)}
    with FakeLLMServer(script) as llm, SearchServer(text) as search:
        evaluate([make_sample(1, Label.FALSE)], spec(llm, search, tmp_path), tmp_path / "run", encode=None)
        assert search.queries == ["V1", "query N2"]
        assert script.plan_calls == 2
        second_plan = [message_text(b, "user") for b in llm.requests if schema_of(b) == "agentfact_plan"][1]
        assert "Unproven" in second_plan and "- V1" in second_plan  # the last reasoning and what was searched
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert row["label"] == "False" and row["evidence_urls"][0].startswith("https://example.org/")


def test_fact_check_pages_never_reach_an_agent_and_are_audited(tmp_path):
    def only_fact_checks(query):
        return [
            result(
                "https://www.snopes.com/fact-check/generated-2/", "Fact check", "Rating: False", "Dec 1, 2019"
            ),
            result("https://snopes.com/news/x", "Snopes", "verdict"),
            result("https://example.org/later", "Later", "after the claim", "Mar 3, 2021"),
        ]

    with FakeLLMServer(Agents()) as llm, SearchServer(only_fact_checks) as search:
        metrics = evaluate(
            [make_sample(2, Label.FALSE)], spec(llm, search, tmp_path), tmp_path / "run", encode=None
        ).dump()
        assert search.queries == ["V1", "V2", "query N1"]
        assert "agentfact_summary" not in agents_called(llm)
        assert not any("snopes" in json.dumps(b["messages"]).lower() for b in llm.requests)
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    dropped = [c["name"] for c in row["calls"] if c["name"].startswith("leakage-guard")]
    assert dropped.count("leakage-guard:dropped:blocked:snopes.com") == 6
    assert dropped.count("leakage-guard:dropped:after-claim-time") == 3
    assert row["label"] == "Unproven" and row["evidence_urls"] == []
    assert metrics["audit"]["flagged"] == 0
    leakage = json.loads((tmp_path / "run" / "manifest.json").read_text())["leakage"]
    assert leakage["by_reason"] == {"after-claim-time": 3, "blocked:snopes.com": 6}
    assert (leakage["dropped"], leakage["predictions_with_drops"], leakage["predictions"]) == (9, 1, 1)
    assert "leakage guard: 9 retrieved results dropped" in (tmp_path / "run" / "report.md").read_text()


def test_gold_evidence_and_closed_book_need_no_search(tmp_path):
    samples = [make_sample(3, Label.FALSE, evidence=evidence(4))]
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        gold = evaluate(
            samples, spec(llm, search, tmp_path, "gold-evidence"), tmp_path / "g", encode=None
        ).dump()
        closed = evaluate(
            samples, spec(llm, search, tmp_path, "closed-book"), tmp_path / "c", encode=None
        ).dump()
        assert search.queries == []
    assert gold["accuracy"] == 1.0 and closed["coverage"]["no_label"] == 0
    row = json.loads((tmp_path / "g" / "predictions.jsonl").read_text())
    assert "[G1, G2]" in row["explanation"]


class KillingAgentFact(AgentFactDetector):
    """AgentFact that kills its own process (SIGKILL) once it has answered batch 2, before the runner can
    write that answer, while ``arm_file`` exists (removed first)."""

    class Config(AgentFactDetector.Config):
        arm_file: str

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.arm_file, self.batches = config.arm_file, 0

    def predict(self, samples, task, ctx):
        out = super().predict(samples, task, ctx)
        self.batches += 1
        if self.batches == 2 and Path(self.arm_file).exists():
            Path(self.arm_file).unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        return out


def test_a_killed_run_resumes_without_one_llm_or_search_call(tmp_path):
    samples = [make_sample(4, Label.FALSE), make_sample(5, Label.FALSE)]
    arm = tmp_path / "arm"
    arm.write_text("kill")
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        run_spec = spec(
            llm, search, tmp_path, detector="tests.test_agentfact:KillingAgentFact", arm_file=str(arm)
        )
        script = f"""
import json, sys
from rwpost.evaluate import RunSpec, evaluate
from tests.evaluate_helpers import make_sample
from rwpost.labels import Label
spec = RunSpec(**json.loads(sys.argv[1]))
samples = [make_sample(4, Label.FALSE), make_sample(5, Label.FALSE)]
evaluate(samples, spec, {str(tmp_path / "run")!r}, encode=None)
"""
        fields = {k: getattr(run_spec, k) for k in ("detector", "config", "secrets", "batch_size")}
        fields["setting"] = str(run_spec.setting)
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        done = subprocess.run([sys.executable, "-c", script, json.dumps(fields)], env=env, timeout=60)
        assert done.returncode == -signal.SIGKILL and not arm.exists()
        assert len(read_predictions(tmp_path / "run" / "predictions.jsonl")) == 1
        asked, searched = llm.chat_requests, len(search.queries)
        # sample 5 asks what sample 4 asked (the same V1 search, example.org judged once): cached
        assert asked == 6 + 5 and searched == 1

        metrics = evaluate(samples, run_spec, tmp_path / "run", encode=None).dump()
        assert llm.chat_requests == asked and len(search.queries) == searched  # zero HTTP calls
    assert metrics["n_samples"] == 2 and metrics["accuracy"] == 1.0
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(c["cached"] for c in rows[1]["calls"])


def test_backends_by_name_keys_from_the_environment_only(monkeypatch):
    from rwpost.errors import ConfigError

    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="SERPER_API_KEY"):
        make_backend("serper")
    backend = make_backend("serper", {"environ": {"SERPER_API_KEY": SECRET}})
    assert SECRET not in repr(backend) and SECRET not in repr(backend.api)
    with pytest.raises(ConfigError, match="unknown search backend"):
        make_backend("nope")
    assert explanation_text("why", ["1. a [T3]"]) == ("why\n- 1. a [T3]", ["T3"])  # issue 24: no doubled ids


def test_a_local_model_folder_answers_the_agents_batched_and_free(tmp_path):
    """``--set backend=local``: the agents ask a model folder in-process; calls that arrive together (one
    per sample) are generated together. The tiny scripted model always writes a verdict, which is no
    agent's answer: every sample is a counted failure naming the agent, never dropped."""
    pytest.importorskip("transformers")
    from rwpost.evaluate.contract import RunContext
    from rwpost.evaluate.task import EvalTask
    from tests.evaluate_helpers import build_tiny_vlm

    build_tiny_vlm(tmp_path / "tiny", scripted=True)
    detector = AgentFactDetector.build({"model": str(tmp_path / "tiny"), "backend": "local", "device": "cpu"})
    assert detector.device == "cpu" and detector.capabilities.uses_gpu
    config = detector.config()
    assert (config["backend"], config["model"], config["model_type"]) == ("local", "tiny", "idefics3")
    samples = [make_sample(i, Label.FALSE, evidence=evidence(2)) for i in range(3)]
    answers = detector.predict(samples, EvalTask.of("T+E", samples), RunContext())
    assert [p.id for p in answers] == [s.id for s in samples]
    assert all(p.label is None and p.error.startswith("model answer rejected: agent-eg: ") for p in answers)
    calls = [c for p in answers for c in p.calls]
    assert len(calls) == 4 * len(samples) and {c.name for c in calls} == {"tiny"}
    assert all(c.cost_usd == 0 and c.tokens_in > 0 and c.tokens_out > 0 for c in calls)
    assert detector.model.batches < len(calls)  # the samples' concurrent calls shared batches


class Outdated(Agents):
    """The scripted agents, but Agent-EG answers Outdated (a server that ignores the answer schema)."""

    def __call__(self, body):
        from rwpost.testing.llm import Reply

        if schema_of(body) != "agentfact_explanation":
            return super().__call__(body)
        result = {"3-class_authenticity_label": "Outdated", "reasoning_logic": "old", "key_points": []}
        return Reply.answer({"validation_result": result, "confidence_level": "5"})


def _verdict_enum(body) -> list[str]:
    schema = body["response_format"]["json_schema"]["schema"]
    return schema["properties"]["validation_result"]["properties"]["3-class_authenticity_label"]["enum"]


def test_the_explanation_answers_only_the_subsets_labels(tmp_path):
    """On the 3-class main split Agent-EG's schema offers True, False, Unproven only (Outdated would be a
    class the split does not have, scored as Other and exported into the authors' 3-class layout); on the
    challenging split it offers that split's labels. A server that answers Outdated anyway on the main
    split fails the sample instead of scoring it."""
    main = [make_sample(0, Label.FALSE)]
    challenging = [make_sample(1, Label.OUTDATED), make_sample(2, Label.MIXTURE)]
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        evaluate(main, spec(llm, search, tmp_path), tmp_path / "main", encode=None)
        [eg] = [b for b in llm.requests if schema_of(b) == "agentfact_explanation"]
        assert {x.lower() for x in _verdict_enum(eg)} == {"true", "false", "unproven"}
        llm.requests.clear()
        evaluate(challenging, spec(llm, search, tmp_path), tmp_path / "challenging", encode=None)
        enums = [_verdict_enum(b) for b in llm.requests if schema_of(b) == "agentfact_explanation"]
        assert enums and all({x.lower() for x in e} == {"mixture", "outdated"} for e in enums), enums
    (tmp_path / "fresh").mkdir()  # another answer cache: the first run's explanation is not reused
    with FakeLLMServer(Outdated()) as llm, SearchServer(news) as search:
        metrics = evaluate(
            main, spec(llm, search, tmp_path / "fresh"), tmp_path / "outdated", encode=None
        ).dump()
    row = json.loads((tmp_path / "outdated" / "predictions.jsonl").read_text())
    assert row["label"] is None and "agent-eg" in row["error"] and "Outdated" in row["error"]
    assert metrics["accuracy"] == 0.0
