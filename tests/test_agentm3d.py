"""AgentM3D end to end: the runner, the loopback LLM server (scripted agents, critics, judge and tools), the
loopback search server (Wikipedia in MediaWiki's format); the local path with a tiny backbone and a tiny
reward model built in the test, on CPU; and Algorithm 1's ranking by hand."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from pathlib import Path

import pytest

from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.contract import Prediction, RunContext
from rwpost.evaluate.detectors.agentm3d import AgentM3DDetector
from rwpost.evaluate.detectors.agentm3d.labels import decide, native_class
from rwpost.evaluate.detectors.agentm3d.ranking import rank, top_m_gap
from rwpost.evaluate.runner import read_predictions
from rwpost.evaluate.task import EvalTask
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.records import Image
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from rwpost.testing.search import SearchServer, wiki_page
from tests.evaluate_helpers import image_bytes, killing, make_sample, run_until_killed, schema_of

SECRET = "sk-agentm3d-secret-never-written"
AGENT_OF = {"You are a textual": "text", "You are a visual": "image", "You are a cross-modal": "cross"}


def step_of(body) -> str:
    """Which agent or tool a request to the model is (the ledger's agent names)."""
    schema, system = schema_of(body), message_text(body, "system")
    if schema == "agentm3d_detect":
        return next(a for prefix, a in AGENT_OF.items() if system.startswith(prefix))
    if schema == "agentm3d_score":
        if system.startswith("You are a reward model"):
            return "reward"
        return "image:critic" if system.startswith("According to the given news image") else "text:critic"
    if schema == "agentm3d_observation":
        return "tool:logic" if system.startswith("You are a logic") else "tool:image-analysis"
    return {"agentm3d_plan": "planner", "agentm3d_entities": "text:entities"}[schema]


class Agents:
    """Scripted AgentM3D agents for the loopback LLM server.

    ``candidates[agent]`` are ``(label, reasoning)`` pairs handed out in turn to that agent's requests (the
    N samples of one request are N requests with the same body); the judge scores a candidate by its
    reasoning from ``judge``, the critics from ``critic`` (0.5 unless given). Tools answer ``seen by <tool>``.
    """

    def __init__(self, candidates, plan="[BON level-1]", judge=None, critic=None, entities=("Paul Ryan",)):
        self.candidates, self.plan = candidates, plan
        self.judge, self.critic, self.entities = judge or {}, critic or {}, list(entities)
        self.turns = {agent: itertools.count() for agent in AGENT_OF.values()}
        self.lock = threading.Lock()

    def __call__(self, body) -> Reply:
        step, user = step_of(body), message_text(body, "user")
        if step == "planner":
            return Reply.answer({"action": self.plan})
        if step == "text:entities":
            return Reply.answer({"entities": self.entities})
        if step.startswith("tool:"):
            return Reply.answer({"result": f"seen by {step}"})
        if step in AGENT_OF.values():
            with self.lock:
                turn = next(self.turns[step])
            pairs = self.candidates[step]
            label, reasoning = pairs[turn % len(pairs)]
            return Reply.answer({"label": label, "reasoning": reasoning})
        reasoning = re.search(r"^Reasoning: (.*)$", user, re.MULTILINE).group(1)
        scores = self.judge if step == "reward" else self.critic
        return Reply.answer({"score": scores.get(reasoning, 0.5)})


def config(llm, search, tmp_path: Path, **extra) -> dict:
    return {
        "model": "test-model",
        "base_url": llm.base_url,
        "cache_path": str(tmp_path / "llm.sqlite"),
        "wikipedia": "loopback-wikipedia",
        "wikipedia_options": {"base_url": search.base_url},
        "concurrency": 4,
        "timeout_s": 10.0,
        **extra,
    }


def spec(llm, search, tmp_path, setting="T+I+W", detector="agentm3d", **extra) -> RunSpec:
    return RunSpec(
        detector,
        config=config(llm, search, tmp_path, **extra),
        secrets={"api_key": SECRET},
        setting=setting,
        n_resamples=10,
        batch_size=1,
        prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)},
    )


def with_image(n: int, label: Label, **fields):
    return make_sample(n, label, image=Image(bytes=image_bytes((10 * n, 80, 120))), **fields)


def agents_of(row) -> list[str]:
    return [c["agent"] for c in row["calls"]]


RANKED = [("original", f"r{i}") for i in range(1, 6)]
JUDGE = {"r1": 0.9, "r2": 0.8, "r3": 0.5, "r4": 0.4, "r5": 0.3}
CRITIC = {"r1": 0.9, "r2": 0.1}


@pytest.mark.parametrize(("tau", "critiqued", "early"), [(0.5, 2, True), (1.0, 5, False)])
def test_the_ranking_stops_critiquing_once_the_top_m_gap_exceeds_tau(tmp_path, tau, critiqued, early):
    # rewards .9 .8 .5 .4 .3 order the walk; r1 fuses to 1.8, r2 to .9: the top-2 gap .9 > .5 stops there.
    # With tau 1.0 no gap exceeds it (.9, .85, .87, .9): all five are critiqued; r1 wins either way.
    script = Agents({"text": RANKED}, judge=JUDGE, critic=CRITIC)
    with FakeLLMServer(script) as llm, SearchServer() as search:
        metrics = evaluate(
            [make_sample(1, Label.TRUE)], spec(llm, search, tmp_path, "T", tau=tau), tmp_path / "r"
        ).dump()
        steps = [step_of(b) for b in llm.requests]
    assert steps.count("text") == 5 and steps.count("reward") == 5  # N=5 sampled, all five judged
    assert steps.count("text:critic") == critiqued and steps.count("tool:logic") == 1
    assert search.wiki_queries == []  # a closed-book cell: no Wikipedia
    row = json.loads((tmp_path / "r" / "predictions.jsonl").read_text())
    assert row["label"] == "True" and metrics["accuracy"] == 1.0
    lines = row["explanation"].splitlines()
    assert lines[0] == "AgentM3D answer: original (RW-Post view, adapted: True)"
    assert lines[1] == "Plan: [BON level-1]; N=5."
    ranked = f"{critiqued} ranked" + (" (early stop)" if early else "")
    assert lines[2] == f"- text: original (5 of 5 candidates, {ranked}, score 1.80): r1"
    assert lines[3:] == [
        "- image: skipped (no image in this cell)",
        "- cross: skipped (no image in this cell)",
    ]
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    options = manifest["detector_config"]
    assert (options["n"], options["tau"], options["planner"], options["early_stop"]) == (5, tau, True, True)
    assert options["reward"] == {"reward_model": "llm-judge (fallback)"}
    assert options["labels"].startswith("RW-Post 3-class (adapted")
    assert len(manifest["prompt_hashes"]) == 10


def test_a_distorted_text_ends_the_cascade_before_the_image_agent(tmp_path):
    script = Agents({"text": [("textual_veracity_distortion", "the senator never said it")]})
    with FakeLLMServer(script) as llm, SearchServer() as search:
        evaluate([with_image(2, Label.FALSE)], spec(llm, search, tmp_path, "T+I"), tmp_path / "r")
        steps = [step_of(b) for b in llm.requests]
    assert not {"image", "cross", "tool:image-analysis", "image:critic"} & set(steps)
    row = json.loads((tmp_path / "r" / "predictions.jsonl").read_text())
    assert row["label"] == "False"
    assert row["explanation"].splitlines()[0] == (
        "AgentM3D answer: textual_veracity_distortion (RW-Post view, adapted: False)"
    )
    assert row["explanation"].splitlines()[-2:] == [
        "- image: skipped (the text agent found a distortion)",
        "- cross: skipped (the text agent found a distortion)",
    ]
    # five identical candidates: the judge and the critic rank them, the first wins at the top
    assert agents_of(row).count("text") == 5 and agents_of(row).count("image") == 0


def test_a_planned_standard_pass_runs_every_agent_once_greedily(tmp_path):
    # [BON level-0]: one greedy answer per agent, nothing to rank; text and image original, cross mismatch
    script = Agents(
        {"text": [("original", "t")], "image": [("original", "i")], "cross": [("mismatch", "c")]},
        plan="[BON level-0]",
    )
    with FakeLLMServer(script) as llm, SearchServer() as search:
        run_spec = spec(llm, search, tmp_path, "T+I", view="native")
        metrics = evaluate([with_image(3, Label.FALSE)], run_spec, tmp_path / "r").dump()
        temperatures = {step_of(b): b.get("temperature") for b in llm.requests}
    row = json.loads((tmp_path / "r" / "predictions.jsonl").read_text())
    assert agents_of(row) == ["planner", "text", "tool:image-analysis", "image", "cross"]
    assert temperatures["text"] in (0, 0.0, None)
    assert row["label"] == "False" and metrics["accuracy"] == 1.0
    assert native_class(Prediction.from_row(row)) == "mismatch"
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["images"]["sent"] == 1  # one sample (planner, image analysis, image, cross carried it)


def full_script() -> Agents:
    return Agents(
        {"text": RANKED, "image": [("original", f"i{i}") for i in range(1, 6)], "cross": [("original", "c")]},
        judge=JUDGE | {"i1": 0.9},
        critic=CRITIC | {"i1": 0.8},
    )


WIKI = {"Paul Ryan": [wiki_page("Paul Ryan", "Paul Davis Ryan is an American politician.\nMore.")]}


def test_the_ledger_counts_calls_per_agent_and_tool(tmp_path):
    with FakeLLMServer(full_script()) as llm, SearchServer(wiki=WIKI) as search:
        metrics = evaluate([with_image(4, Label.TRUE)], spec(llm, search, tmp_path), tmp_path / "r").dump()
        assert search.wiki_queries == ["Paul Ryan"]
    calls = {agent: row["calls"] for agent, row in metrics["ledger"]["by_agent"].items()}
    assert calls == {
        "planner": 1,
        "text:entities": 1,
        "tool:Wikipedia": 1,
        "text": 5,
        "text:reward": 5,
        "tool:logic": 1,
        "text:critic": 2,  # r1 1.8, r2 .9: the gap stops the walk
        "tool:image-analysis": 1,
        "image": 5,
        "image:reward": 5,
        "image:critic": 2,  # i1 .9 + .8, then one of i2-i5 .5 + .5: gap .7
        "cross": 5,
        "cross:reward": 5,  # no critique for the cross-modal agent
    }
    row = json.loads((tmp_path / "r" / "predictions.jsonl").read_text())
    assert row["label"] == "True" and row["evidence_urls"] == [f"{search.base_url}/wiki/Paul_Ryan"]
    critic_text = [message_text(b, "user") for b in llm.requests if step_of(b) == "text:critic"][0]
    assert "seen by tool:logic" in critic_text and "Paul Davis Ryan is an American politician." in critic_text
    assert metrics["ledger"]["cost_usd"] > 0
    for path in (tmp_path / "r").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            assert SECRET not in path.read_text()


KillingAgentM3D = killing(AgentM3DDetector)


def test_a_killed_run_resumes_without_one_model_or_tool_call(tmp_path):
    samples = [with_image(5, Label.TRUE), with_image(6, Label.TRUE)]
    arm = tmp_path / "arm"
    arm.write_text("kill")
    with FakeLLMServer(full_script()) as llm, SearchServer(wiki=WIKI) as search:
        run_spec = spec(
            llm, search, tmp_path, detector="tests.test_agentm3d:KillingAgentM3D", arm_file=str(arm)
        )
        run_until_killed(run_spec, samples, tmp_path / "run")
        assert not arm.exists()
        assert len(read_predictions(tmp_path / "run" / "predictions.jsonl")) == 1
        asked, searched = llm.chat_requests, list(search.wiki_queries)
        assert asked > 0 and searched

        metrics = evaluate(samples, run_spec, tmp_path / "run").dump()
        assert llm.chat_requests == asked  # zero model calls: the LLM cache answers every sample and judge
        assert search.wiki_queries == searched  # zero searches: the tool cache answers
    assert metrics["n_samples"] == 2 and metrics["accuracy"] == 1.0
    rows = read_predictions(tmp_path / "run" / "predictions.jsonl")
    resumed = rows[(0, samples[1].id)]["calls"]
    assert len(resumed) > 20 and all(c["cached"] for c in resumed)


def test_a_failing_wikipedia_degrades_to_the_agents_and_the_trace_keeps_the_failure(tmp_path):
    """Issue 39 (new-user D10): one failing Wikipedia lookup failed the whole sample (``tool Wikipedia
    (loopback-wikipedia) failed``); the text agent now answers without that evidence, and the failed
    lookup is a ledger row marked failed plus a line of the explanation."""
    samples = [make_sample(7, Label.TRUE), make_sample(8, Label.TRUE)]
    with FakeLLMServer(Agents({"text": [("original", "t")]})) as llm, SearchServer(wiki=WIKI) as search:
        search.failures = 2  # the first sample's lookup and its one retry
        metrics = evaluate(samples, spec(llm, search, tmp_path, "T+W"), tmp_path / "r").dump()
        texts = [message_text(b, "user") for b in llm.requests if step_of(b) == "text"]
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "r" / "predictions.jsonl").open())}
    degraded, answered = rows[samples[0].id], rows[samples[1].id]
    assert degraded["label"] == "True" and degraded["error"] is None
    assert answered["label"] == "True" and metrics["coverage"]["no_label"] == 0
    [failed] = [c for c in degraded["calls"] if c["agent"] == "tool:Wikipedia"]
    assert failed["failed"] is True
    assert "- went on without a tool: tool Wikipedia (loopback-wikipedia) failed" in degraded["explanation"]
    assert "went on without" not in answered["explanation"]
    assert any("(not looked up: the Wikipedia tool failed)" in t for t in texts)
    assert any("Paul Davis Ryan is an American politician." in t for t in texts)
    retrieval = json.loads((tmp_path / "r" / "manifest.json").read_text())["retrieval"]
    assert retrieval["failed"] == 1 and retrieval["predictions_without_retrieval"] == 1


def test_a_server_answering_500_fails_the_sample_once_and_stops_its_siblings(tmp_path):
    """Issue 39 (hostile L10): against a server answering 500, AgentM3D sent 42 requests per sample (the
    planner's failure read as "no action", then each of the N text candidates spent its own retries).
    The first call that fails for good now ends the sample: the planner's retries and nothing else; with
    the planner off, one of the N candidates' retries (one request in flight, so none races)."""
    answers_500 = lambda body: Reply(status=500, error="scripted outage")  # noqa: E731
    samples = [make_sample(9, Label.TRUE)]
    for planner, out in ((True, "planned"), (False, "unplanned")):
        with FakeLLMServer(answers_500) as llm, SearchServer(wiki=WIKI) as search:
            run_spec = spec(llm, search, tmp_path, "T", planner=planner, max_retries=1, concurrency=1)
            metrics = evaluate(samples, run_spec, tmp_path / out).dump()
            asked = llm.chat_requests
        assert asked == 2, (planner, asked)  # one call: its first attempt and its one retry
        [row] = map(json.loads, (tmp_path / out / "predictions.jsonl").open())
        assert row["label"] is None
        assert row["error"].startswith(
            "model unavailable (planner): " if planner else "model unavailable (text): "
        )
        assert "InternalServerError after 2 attempt(s)" in row["error"]
        assert metrics["coverage"]["no_label"] == 1


# --- the local path: tiny backbone and reward model on CPU --------------------------------------------

ANSWER = {"label": "original", "reasoning": "consistent", "score": 0.75, "action": "[BON level-1]"}
ANSWER |= {"result": "a scene", "entities": []}
"""What the scripted tiny backbone writes for every prompt: one object that satisfies every schema."""


@pytest.fixture(scope="module")
def local_models(tmp_path_factory):
    pytest.importorskip("transformers")
    from rwpost.testing.models import build_tiny_reward_model, build_tiny_vlm

    root = tmp_path_factory.mktemp("agentm3d-models")
    build_tiny_vlm(root / "backbone", scripted=True, answer=ANSWER)
    build_tiny_reward_model(root / "reward")
    return root


def test_the_local_path_generates_n_candidates_per_sample_in_one_batch_on_cpu(local_models, tmp_path):
    samples = [with_image(9, Label.TRUE), with_image(10, Label.TRUE)]
    options = {
        "backend": "local",
        "model": str(local_models / "backbone"),
        "reward_model": str(local_models / "reward"),
        "device": "cpu",
        "reward_device": "cpu",
        "max_new_tokens": 8,
        "temperature": 0.1,
    }
    detector = AgentM3DDetector.build(options)
    task = EvalTask.of("T+I", samples)
    predictions = detector.predict([task.blind(s) for s in samples], task, RunContext(seed=3))
    assert [p.label for p in predictions] == [Label.TRUE, Label.TRUE], [p.error for p in predictions]
    model = detector.chat
    report = model.report()
    # per agent and sample: N=5 candidates; both samples' candidates of a stage are one generate() call
    assert report["tasks"]["agentm3d-text"]["requests"] == 10
    assert report["tasks"]["agentm3d-cross"]["requests"] == 10
    stages = ["planner", "text", "tool:logic", "text:critic", "tool:image-analysis", "image", "image:critic"]
    stages.append("cross")
    critic_rounds = max(sum(c.agent == "text:critic" for c in p.calls) for p in predictions)
    critic_rounds += max(sum(c.agent == "image:critic" for c in p.calls) for p in predictions)
    assert report["batches"] == len(stages) - 2 + critic_rounds
    for p in predictions:
        rows = [c for c in p.calls if c.agent == "text"]
        assert len(rows) == 5 and len({c.latency_s for c in rows}) == 1  # shares of one batch
        reward = [c for c in p.calls if c.agent.endswith(":reward")]
        assert [c.agent for c in reward] == ["text:reward", "image:reward", "cross:reward"]
        assert all(c.name == "reward:reward" and c.tokens_in > 0 and c.cost_usd == 0.0 for c in reward)
    # the reward model scored each stage's 10 candidates (both samples) in one forward pass
    assert detector.reward.batches == 3
    config = detector.config()
    assert config["backend"] == "local" and config["reward"]["reward_model_type"] == "gemma2"
    assert config["reward"]["reward_dtype"] == "float32"


def test_a_reward_model_folder_that_is_no_model_is_refused(tmp_path):
    from rwpost.errors import ConfigError

    with pytest.raises(ConfigError, match="reward model: .* is not a local model folder"):
        AgentM3DDetector.build(
            {"model": "m", "base_url": "http://127.0.0.1:9/v1", "reward_model": str(tmp_path)}
        )
    with pytest.raises(ConfigError, match="bad configuration \\(n: "):
        AgentM3DDetector.build({"model": "m", "base_url": "http://127.0.0.1:9/v1", "n": 0})


# --- Algorithm 1 and the decision by hand ---------------------------------------------------------------


def test_top_m_gap_and_the_ranking_follow_algorithm_1():
    assert top_m_gap([1.0, 0.2, 0.6], 2) == pytest.approx(0.4)
    assert top_m_gap([1.0, 0.2, 0.6], 3) == pytest.approx(0.6)
    asked: list[int] = []

    async def critique(i: int) -> float:
        asked.append(i)
        return [0.3, 1.0, 0.25, 0.5][i]

    # rewards order the walk 2, 0, 1, 3; fused 2: .95, 0: .8 (gap .15), 1: 1.45 (gap 1.45 - .875 = .575)
    rewards = [0.5, 0.45, 0.7, 0.1]
    ranking = asyncio.run(rank(rewards, critique, 0.5))
    assert asked == [2, 0, 1] and (ranking.m, ranking.stopped_early, ranking.chosen) == (3, True, 1)
    assert ranking.gaps == pytest.approx([0.15, 0.575])
    asked.clear()
    full = asyncio.run(rank(rewards, critique, 0.5, early_stop=False))
    assert asked == [2, 0, 1, 3] and (full.m, full.chosen) == (3, 1)
    # reward only (the cross-modal agent): the best reward wins; m* is the first gap above tau
    alone = asyncio.run(rank([0.2, 0.9, 0.85], None, 0.3))
    assert (alone.chosen, alone.m, alone.stopped_early) == (1, 3, False)


def test_the_decision_follows_the_cascade_and_the_views():
    assert (
        decide({"text": "textual_veracity_distortion"}, view="rw-post").native
        == "textual_veracity_distortion"
    )
    full = decide({"text": "original", "image": "original", "cross": "mismatch"}, view="native")
    assert (full.native, full.label) == ("mismatch", Label.FALSE)
    unsure = decide({"text": "not_enough_evidence", "image": "original", "cross": "original"}, view="rw-post")
    assert (unsure.native, unsure.label) == ("original", Label.UNPROVEN)
    assert decide({"text": "original"}, view="native").label == Label.TRUE
