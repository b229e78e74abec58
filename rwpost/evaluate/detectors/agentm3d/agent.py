"""AgentM3D on one sample: the planning agent, the hierarchical cascade of detection agents, Best-of-N
with critique-aware ranking, and the tools (paper sections 3.1-3.3, Algorithm 1, appendix A.3).

The toolkit's :class:`~rwpost.evaluate.toolkit.ask.Asker` puts the prompt files
(``rwpost/prompts/agentm3d_*.v1.md``) to one :class:`~rwpost.llm.chat.ChatModel` and writes a ledger row
per answer, tagged with the agent that asked (``planner``, ``text``, ``image``, ``cross``, ``text:critic``,
``image:critic``, ``<agent>:reward``, ``text:entities``, ``tool:logic``, ``tool:image-analysis``); the search
and forgery tools are the toolkit's (:mod:`rwpost.evaluate.toolkit.tools`: tool cache, leakage guard,
``tool:Wikipedia`` and ``tool:Detect`` rows). :class:`Cascade` runs one sample:

1. the planner picks standard reasoning (``[BON level-0]``: one greedy answer per agent) or Best-of-N
   (``[BON level-1]``: N sampled candidates per agent, one ``sample(request, N)`` call);
2. the text agent (eq. 5) sees the news and its Wikipedia knowledge T_text (open-web cells); the image agent
   (eq. 6) runs only when the text is ``original`` and sees the image and the image analysis tool's
   description T_image; the cross-modal agent (eq. 7) runs only when both are, with the text, the image and
   T_image (eq. 9);
3. N candidates are scored by the reward model R (all at once) and, for the text and image agents, by their
   critique agent (eq. 12: T_logic, the logic consistency tool, and the Wikipedia knowledge for the text;
   T_forgery, the forgery classifier or else the image analysis, for the image), and ranked with the
   early-stopping top-m gap (:mod:`.ranking`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rwpost.evaluate.contract import Call
from rwpost.evaluate.detectors.agentm3d.labels import (
    AGENTS,
    NOT_ENOUGH_EVIDENCE,
    Decision,
    agent_labels,
    decide,
    distorted,
)
from rwpost.evaluate.detectors.agentm3d.ranking import Ranking, rank
from rwpost.evaluate.detectors.agentm3d.reward import FALLBACK, LocalRewardModel, Scored
from rwpost.evaluate.toolkit.ask import Asker, ModelFailed, ModelUnavailable, together
from rwpost.evaluate.toolkit.ask import prompt_hashes as toolkit_prompt_hashes
from rwpost.evaluate.toolkit.ask import schema_hashes as toolkit_schema_hashes
from rwpost.evaluate.toolkit.tools import Case, Toolbox, ToolFailed, Trace

PROMPTS: tuple[str, ...] = (
    "agentm3d_plan.v1",
    "agentm3d_text.v1",
    "agentm3d_image.v1",
    "agentm3d_cross.v1",
    "agentm3d_text_critic.v1",
    "agentm3d_image_critic.v1",
    "agentm3d_judge.v1",
    "agentm3d_logic.v1",
    "agentm3d_image_analysis.v1",
    "agentm3d_entities.v1",
)
"""Every prompt file of the detector (their hashes enter the run identity)."""

LEVELS = {"[BON level-0]": False, "[BON level-1]": True}
"""The planner's actions: whether Best-of-N is used."""

UNPROVEN_RULE = (
    f"\n- {NOT_ENOUGH_EVIDENCE}: the evidence you have neither supports nor refutes it (RW-Post's Unproven)."
)
"""What the RW-Post view appends to each detection agent's labels."""


def prompt_hashes() -> dict[str, str]:
    return toolkit_prompt_hashes(PROMPTS)


def schema_hashes() -> dict[str, str]:
    return toolkit_schema_hashes(PROMPTS)


def detect_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The detection answer schema with its label enum narrowed to one agent's ``labels``."""
    from rwpost.llm import load_llm_schema

    schema = load_llm_schema("agentm3d_detect")
    properties = dict(schema["properties"])
    properties["label"] = {"type": "string", "enum": list(labels)}
    return {**schema, "properties": properties}


@dataclass
class CascadeOptions:
    """The detector's options a sample's run needs."""

    n: int = 5
    """N, the candidates per agent under Best-of-N (paper: 5)."""
    tau: float = 0.5
    """The early-stopping threshold on the top-m average gap (paper section 4.5.1: best at 0.5)."""
    planner: bool = True
    critique: bool = True
    early_stop: bool = True
    temperature: float = 0.7
    """Sampling temperature of Best-of-N candidates (standard reasoning is greedy)."""
    view: str = "rw-post"
    web: bool = False
    """Open-web cell: the text agent's Wikipedia knowledge is searched."""
    entities: int = 3
    """The most entities looked up on Wikipedia per sample."""


@dataclass
class Candidate:
    """One detection candidate: its label and reasoning."""

    label: str
    reasoning: str

    def text(self) -> str:
        """The candidate as the reward model and the critique agents read it."""
        return f"Label: {self.label}\nReasoning: {self.reasoning}"


@dataclass
class Stage:
    """One detection agent's run: its candidates, how they were ranked, the one it answered."""

    agent: str
    n: int
    candidates: list[Candidate]
    failed: int
    chosen: Candidate
    ranking: Ranking | None = None


@dataclass
class Result:
    """What one sample's cascade produced."""

    best_of_n: bool
    plan: str
    stages: dict[str, Stage]
    skipped: dict[str, str]
    decision: Decision
    urls: list[str] = field(default_factory=list)
    trace: Trace = field(default_factory=Trace)


class JudgeReward:
    """The LLM-judge stand-in for the reward model (see :mod:`.reward`): one call per candidate."""

    name = FALLBACK

    def __init__(self, asker: Asker) -> None:
        self.asker = asker

    async def score(
        self, prompt: str, responses: Sequence[str], key: str, agent: str, trace: Trace
    ) -> Scored:
        async def one(response: str) -> float:
            data = await self.asker.ask(
                "agentm3d_judge.v1", key, trace, agent=f"{agent}:reward", prompt=prompt, response=response
            )
            return float(data["score"])

        scores = await together(*(one(r) for r in responses))  # an outage stops the other judges
        return Scored(scores, scores)


class Cascade:
    """AgentM3D on one sample (see the module docstring)."""

    def __init__(
        self,
        asker: Asker,
        reward: LocalRewardModel | JudgeReward,
        toolbox: Toolbox,
        case: Case,
        options: CascadeOptions,
        trace: Trace,
    ) -> None:
        self.asker, self.reward, self.toolbox, self.case = asker, reward, toolbox, case
        self.options, self.trace = options, trace
        self.urls: list[str] = []
        self._memo: dict[str, str] = {}

    # --- tools: one run per sample, shared by its candidates ------------------------------------------

    async def _once(self, name: str, make: Callable[[], Awaitable[str]]) -> str:
        if name not in self._memo:
            self._memo[name] = await make()
        return self._memo[name]

    async def evidence(self) -> str:
        """T_text: the Wikipedia knowledge of the text's entities (open-web cells only)."""
        if not self.options.web or "Wikipedia" not in self.toolbox.tools:
            return "(none: Wikipedia is searched in the open-web cells only)"

        async def search() -> str:
            data = await self.asker.ask(
                "agentm3d_entities.v1",
                self.case.key,
                self.trace,
                agent="text:entities",
                news=self.case.news,
                limit=str(self.options.entities),
            )
            names = list(dict.fromkeys(str(e).strip() for e in data["entities"] if str(e).strip()))
            blocks = []
            for entity in names[: self.options.entities]:
                try:
                    observed = await self.toolbox.call("Wikipedia", entity, self.case, self.trace)
                except ToolFailed as exc:  # the agents go on with the evidence they still have
                    self.trace.tool_failures.append(str(exc))
                    blocks.append(f"[{entity}]\n(not looked up: the Wikipedia tool failed)")
                    continue
                self.urls += observed.urls
                blocks.append(f"[{entity}]\n{observed.text}")
            return "\n\n".join(blocks) or "(no entities found)"

        return await self._once("evidence", search)

    async def logic(self) -> str:
        """T_logic: the logic consistency checking tool's result on the news text."""

        async def check() -> str:
            data = await self.asker.ask(
                "agentm3d_logic.v1", self.case.key, self.trace, agent="tool:logic", news=self.case.news
            )
            return str(data["result"]).strip() or "(nothing found)"

        return await self._once("logic", check)

    async def analysis(self) -> str:
        """T_image: the image analysis tool's grounded description of the image."""

        async def describe() -> str:
            data = await self.asker.ask(
                "agentm3d_image_analysis.v1",
                self.case.key,
                self.trace,
                agent="tool:image-analysis",
                images=(self.case.image,),
            )
            return str(data["result"]).strip() or "(nothing described)"

        return await self._once("analysis", describe)

    async def forensics(self) -> str:
        """T_forgery: the forgery classifier's finding, else (adapted) the image analysis."""
        if "Detect" not in self.toolbox.tools:
            return await self.analysis()

        async def detect() -> str:
            return (await self.toolbox.call("Detect", "", self.case, self.trace)).text

        return await self._once("forensics", detect)

    # --- critiques ----------------------------------------------------------------------------------

    async def text_critique(self, candidate: Candidate) -> float:
        logic, evidence = await self.logic(), await self.evidence()
        data = await self.asker.ask(
            "agentm3d_text_critic.v1",
            self.case.key,
            self.trace,
            agent="text:critic",
            news=self.case.news,
            result=candidate.text(),
            logic=logic,
            evidence=evidence,
        )
        return float(data["score"])

    async def image_critique(self, candidate: Candidate) -> float:
        forensics = await self.forensics()
        data = await self.asker.ask(
            "agentm3d_image_critic.v1",
            self.case.key,
            self.trace,
            agent="image:critic",
            images=(self.case.image,),
            result=candidate.text(),
            forensics=forensics,
        )
        return float(data["score"])

    # --- one agent: Best-of-N with critique-aware ranking (Algorithm 1) ------------------------------

    async def best_of_n(
        self,
        agent: str,
        prompt: str,
        n: int,
        critic: Callable[[Candidate], Awaitable[float]] | None,
        images: Sequence[Any] = (),
        **values: str,
    ) -> Stage:
        o = self.options
        labels = agent_labels(agent, o.view)
        request = self.asker.request(
            prompt,
            self.case.key,
            agent=agent,
            images=images,
            schema=detect_schema(labels),
            temperature=o.temperature if n > 1 else 0.0,
            rule=UNPROVEN_RULE if o.view == "rw-post" else "",
            **values,
        )
        results = await self.asker.sample(request, n, agent, self.trace)
        candidates = [
            Candidate(str(r.data["label"]), str(r.data.get("reasoning", "")).strip())
            for r in results
            if r.ok and r.data is not None and r.data.get("label") in labels
        ]
        if not candidates:
            raise ModelFailed(f"model answer rejected ({agent}): {results[0].error or 'no valid label'}")
        failed = len(results) - len(candidates)
        if len(candidates) == 1:
            return Stage(agent, n, candidates, failed, candidates[0])
        if isinstance(self.reward, JudgeReward):
            scored = await self.reward.score(
                request.user, [c.text() for c in candidates], self.case.key, agent, self.trace
            )
        else:
            scored = await self.reward.score(request.user, [c.text() for c in candidates])
            self.trace.calls.append(
                Call(
                    kind="model",
                    name=self.reward.name,
                    agent=f"{agent}:reward",
                    tokens_in=scored.tokens_in,
                    latency_s=scored.latency_s,
                    cost_usd=0.0,
                )
            )

        async def critique(i: int) -> float:
            return await critic(candidates[i])  # type: ignore[misc]

        ranking = await rank(
            scored.scores, critique if critic is not None else None, o.tau, early_stop=o.early_stop
        )
        return Stage(agent, n, candidates, failed, candidates[ranking.chosen], ranking)

    # --- the cascade --------------------------------------------------------------------------------

    async def plan(self) -> tuple[bool, str]:
        """Whether Best-of-N is used, and why (the planner's action, or that it is off)."""
        if self.options.n <= 1:
            return False, "N=1 (no Best-of-N)"
        if not self.options.planner:
            return True, "planner off"
        try:
            data = await self.asker.ask(
                "agentm3d_plan.v1",
                self.case.key,
                self.trace,
                agent="planner",
                images=(self.case.image,),
                news=self.case.news,
            )
        except ModelUnavailable:
            raise  # the server is out: the sample fails now, its other calls are not asked
        except ModelFailed as exc:
            return True, f"planner gave no action ({str(exc)[:120]}): Best-of-N"
        return LEVELS[data["action"]], str(data["action"])

    async def run(self) -> Result:
        """The cascade of eqs. 8-9 (raises ModelFailed: the sample fails; a failing Wikipedia lookup does
        not: the agents go on without it, the failure in :attr:`Trace.tool_failures` and the ledger)."""
        o, case = self.options, self.case
        best_of_n, plan = await self.plan()
        n = o.n if best_of_n else 1
        stages: dict[str, Stage] = {}
        skipped: dict[str, str] = {}
        text_critic = self.text_critique if o.critique else None
        image_critic = self.image_critique if o.critique else None
        stages["text"] = await self.best_of_n(
            "text", "agentm3d_text.v1", n, text_critic, news=case.news, evidence=await self.evidence()
        )
        if distorted(stages["text"].chosen.label):
            skipped = {
                "image": "the text agent found a distortion",
                "cross": "the text agent found a distortion",
            }
        elif case.image is None:
            skipped = {"image": "no image in this cell", "cross": "no image in this cell"}
        else:
            analysis = await self.analysis()
            stages["image"] = await self.best_of_n(
                "image", "agentm3d_image.v1", n, image_critic, images=(case.image,), analysis=analysis
            )
            if distorted(stages["image"].chosen.label):
                skipped = {"cross": "the image agent found a distortion"}
            else:
                stages["cross"] = await self.best_of_n(
                    "cross",
                    "agentm3d_cross.v1",
                    n,
                    None,
                    images=(case.image,),
                    news=case.news,
                    analysis=analysis,
                )
        decision = decide({a: s.chosen.label for a, s in stages.items()}, view=o.view)
        return Result(best_of_n, plan, stages, skipped, decision, list(dict.fromkeys(self.urls)), self.trace)


__all__ = [
    "AGENTS",
    "PROMPTS",
    "Asker",
    "Candidate",
    "Cascade",
    "CascadeOptions",
    "JudgeReward",
    "Result",
    "Stage",
    "detect_schema",
    "prompt_hashes",
    "schema_hashes",
]
