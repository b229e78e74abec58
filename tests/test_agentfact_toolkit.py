"""AgentFact on the detector toolkit (issue 35): its agents ask through the toolkit's Asker, a local model's
answers cost nothing by the toolkit's one rule, and the run's transcript is the one it records into."""

from __future__ import annotations

import asyncio

from rwpost.evaluate.contract import RunContext
from rwpost.evaluate.contract import Trace as ContractTrace
from rwpost.evaluate.detectors.agentfact import AgentFactDetector
from rwpost.evaluate.detectors.agentfact.agents import Agents as AgentFactAgents
from rwpost.evaluate.detectors.agentfact.workflow import Trace
from rwpost.evaluate.task import EvalTask
from rwpost.evaluate.toolkit.ask import Asker, runs_locally
from rwpost.labels import Label
from rwpost.llm.chat import ChatResult
from rwpost.testing.llm import FakeLLMServer
from tests.evaluate_helpers import Agents, evidence, make_sample


class Model:
    """A chat model that answers every request ``{"ok": true}`` and keeps the requests; ``backend``
    ``local``: a model folder in this process."""

    name = "fake-model"

    def __init__(self, backend: str) -> None:
        self.backend, self.requests = backend, []
        self.local = backend == "local"

    def config(self) -> dict:
        return {"backend": self.backend, "model": self.name}

    async def complete(self, request) -> ChatResult:
        self.requests.append(request)
        return ChatResult(
            key=request.key,
            task=request.task,
            cache_key="k",
            ok=True,
            data={"ok": True},
            prompt_tokens=7,
            completion_tokens=3,
            latency_s=0.5,
        )


def test_a_local_models_answers_cost_nothing_for_every_asker_an_api_models_are_priced_by_the_run():
    """One rule in the toolkit: AgentFact, T2Agent, AgentM3D and FactGuard all ask through Asker."""
    assert runs_locally(Model("local")) and not runs_locally(Model("api")) and not runs_locally(object())
    for backend, cost in (("local", 0.0), ("api", None)):
        asker, trace = Asker(Model(backend), task="t2agent"), ContractTrace()
        asyncio.run(asker.ask("t2agent_vqa.v1", "s1", trace, agent="tool:VQA", input="who is shown?"))
        [row] = trace.calls
        assert (row.name, row.agent, row.cost_usd, row.tokens_in, row.latency_s) == (
            "fake-model", "tool:VQA", cost, 7, 0.5,
        )  # fmt: skip
    assert Asker(Model("api"), task="x", local=True).local  # a model that cannot tell: said by the caller


def test_agentfact_asks_its_profiles_prompt_through_the_asker_with_an_images_text_apart_from_attachments():
    model = Model("local")
    agents = AgentFactAgents(model, temperature=None, max_tokens=2000, profile="authors-code")
    prompt = agents.prompts["agent-r-a"]
    values = {slot: f"<{slot}>" for slot in prompt.slots} | {"images": "IMAGE ANALYSIS TEXT"}
    trace = Trace()
    data, error = asyncio.run(agents.ask(trace, "agent-r-a", "s1", temperature=0.1, **values))
    assert data == {"ok": True} and error is None
    [request] = model.requests
    assert request.prompt_version == prompt.version and request.task == "agentfact-agent-r-a"
    assert "IMAGE ANALYSIS TEXT" in request.user and request.images == ()  # a slot, not an attachment
    assert (request.temperature, request.max_tokens) == (0.1, 2000)
    [row] = trace.calls
    assert (row.agent, row.cost_usd) == ("agent-r-a", 0.0) and trace.images_sent == 0


def test_agentfact_records_into_the_runs_transcript_which_is_its_predictions_ledger(tmp_path):
    samples = [make_sample(i, Label.FALSE, evidence=evidence(2)) for i in range(2)]
    with FakeLLMServer(Agents()) as llm:
        options = {"model": "test-model", "base_url": llm.base_url, "cache_path": str(tmp_path / "c.sqlite")}
        detector = AgentFactDetector.build(options)
        ctx = RunContext(options=detector.options, secrets={"api_key": "sk-test"})
        answers = detector.predict(samples, EvalTask.of("T+E", samples), ctx)
    for sample, answer in zip(samples, answers, strict=True):
        trace = ctx.transcripts[sample.id]
        assert isinstance(trace, Trace) and trace is detector.traces[sample.id]
        assert answer.label is Label.FALSE and answer.calls == trace.calls
        assert [c.agent for c in trace.calls] == ["agent-sp", "agent-r-a", "agent-eg"]
        assert trace.images_sent == 0  # no image left the sample: no reverse image search in T+E
