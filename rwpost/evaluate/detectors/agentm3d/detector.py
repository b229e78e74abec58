"""``--detector agentm3d``: AgentM3D (hierarchical agents with adaptive Best-of-N) inside the runner."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, NonNegativeFloat, PositiveInt

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import (
    Capabilities,
    Detector,
    DetectorInputs,
    ModelFolder,
    Prediction,
    ResultsPerQuery,
    RunContext,
)
from rwpost.evaluate.detectors.agentm3d.agent import (
    Cascade,
    CascadeOptions,
    JudgeReward,
    Result,
    prompt_hashes,
    schema_hashes,
)
from rwpost.evaluate.detectors.agentm3d.labels import HEAD, VIEWS
from rwpost.evaluate.detectors.agentm3d.reward import FALLBACK, LocalRewardModel
from rwpost.evaluate.detectors.chat import ChatOptions
from rwpost.evaluate.task import EvalTask, EvidenceSource
from rwpost.evaluate.toolkit.ask import Asker
from rwpost.evaluate.toolkit.cases import cases_of
from rwpost.evaluate.toolkit.tools import (
    Case,
    ForgeryTool,
    ModelFailed,
    SearchTool,
    Tool,
    Toolbox,
    ToolFailed,
    Trace,
)
from rwpost.labels import MAIN_LABELS
from rwpost.records import Sample


class AgentM3DDetector(Detector):
    """AgentM3D (Jiang et al., 2026): a planning agent chooses standard reasoning or Best-of-N; the text
    agent always runs, the image agent when the text is original, the cross-modal agent when both are; each
    agent's ``n`` candidates are ranked by a reward model plus, for text and image, a critique agent, with
    the early-stopping top-m gap ``tau`` (see :mod:`.agent`). Defaults are the paper's: ``n`` 5, ``tau``
    0.5, the planner, the critiques and the early stop on. The model is an API model or a local folder
    (``backend=local``: the N candidates of every sample at a stage are one batched generation); the reward
    model a local sequence-classification folder (``reward_model``), else an LLM judge (named as the
    fallback). Wikipedia is searched in the open-web cells only, through the run's leakage guard.
    """

    name = "agentm3d"
    capabilities = Capabilities(retrieves=True, reads_images=True)
    labels = MAIN_LABELS
    labels_hint = "evaluate it on the main set (or MMFakeBench's binary view)"

    class Config(ChatOptions):
        tool_cache_path: str | None = None
        """The sqlite cache of tool results; None: ``cache_path`` (when given)."""
        temperature: NonNegativeFloat = CascadeOptions.temperature
        """Best-of-N sampling temperature (standard reasoning is greedy)."""
        max_tokens: PositiveInt | None = 600
        n: PositiveInt = CascadeOptions.n
        """N, the candidates per agent under Best-of-N (paper: 5)."""
        tau: NonNegativeFloat = CascadeOptions.tau
        """The early-stopping threshold on the top-m average gap of fused scores (paper: 0.5)."""
        planner: bool = CascadeOptions.planner
        """The planning agent (off: Best-of-N for every sample, the paper's "w/o PA")."""
        critique: bool = CascadeOptions.critique
        """The critique agents (off: reward only, the paper's "w/o ACA")."""
        early_stop: bool = CascadeOptions.early_stop
        """The early-stopping ranking (off: every candidate critiqued, the paper's "w/o ESR")."""
        view: Literal["rw-post", "native"] = "rw-post"
        """``rw-post``: True/False/Unproven, adapted; ``native``: original -> True, distortion -> False."""
        reward_model: str | None = None
        """A local sequence-classification reward model folder; None: the LLM judge (fallback)."""
        reward_device: str | None = None
        reward_dtype: str | None = None
        reward_batch_size: PositiveInt = 32
        wikipedia: str = "wikipedia"
        wikipedia_options: dict[str, Any] = {}
        results_per_query: ResultsPerQuery = 3
        entities: int = Field(default=CascadeOptions.entities, ge=1)
        """The most entities of a text looked up on Wikipedia."""
        forgery_model: ModelFolder | None = None
        """A local image-classification folder as T_forgery; None: the image analysis stands in."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        o = self.options
        self.chat: Any = None
        self.device = o.remote_device()
        if o.local:  # loaded now: a folder that is no model is refused up front
            self.chat = o.chat_model({})
            self.device = self.chat.device
            self.capabilities = Capabilities(retrieves=True, reads_images=True, uses_gpu=True)
        self.reward: LocalRewardModel | None = None
        if o.reward_model:
            self.reward = LocalRewardModel(
                o.reward_model, device=o.reward_device, dtype=o.reward_dtype, batch_size=o.reward_batch_size
            )
            self.capabilities = Capabilities(retrieves=True, reads_images=True, uses_gpu=True)
        self.results: dict[str, Result] = {}
        """The last cascade of each sample (stages, rankings, ledger), by sample id."""

    def cascade_options(self, web: bool) -> CascadeOptions:
        o = self.options
        return CascadeOptions(
            n=o.n,
            tau=o.tau,
            planner=o.planner,
            critique=o.critique,
            early_stop=o.early_stop,
            temperature=o.temperature,
            view=o.view,
            web=web,
            entities=o.entities,
        )

    def config(self) -> dict[str, Any]:
        o = self.options
        if o.local:
            local = self.chat.config()
            model = {
                k: local.get(k) for k in ("model", "model_path", "model_type", "dtype", "max_new_tokens")
            }
        else:
            model = {"model": o.llm.model, "base_url": o.llm.base_url, "max_tokens": o.max_tokens}
        return {
            "backend": o.backend,
            **model,
            "cache_path": o.cache_path,
            "temperature": o.temperature,
            "n": o.n,
            "tau": o.tau,
            "planner": o.planner,
            "critique": o.critique,
            "early_stop": o.early_stop,
            "view": o.view,
            "labels": VIEWS[o.view],
            "reward": self.reward.config() if self.reward else {"reward_model": FALLBACK},
            "text_tool": f"Wikipedia ({o.wikipedia}, open-web cells only), {o.entities} entities",
            "forgery_tool": o.forgery_model or "absent: the image analysis stands in for T_forgery (adapted)",
            "wikipedia_options": o.wikipedia_options,
            "results_per_query": o.results_per_query,
        }

    def inputs(self) -> DetectorInputs:
        return DetectorInputs(prompts=prompt_hashes(), schemas=schema_hashes())

    def prepare(self, ctx: RunContext) -> None:
        self.chat_model(ctx)  # an API model without a key or a server is refused here
        if self.options.forgery_model and (ctx.cell is None or ctx.cell.image):
            ForgeryTool(self.options.forgery_model).load()  # a folder that is no image classifier

    def chat_model(self, ctx: RunContext) -> Any:
        """The backbone the run builds from the typed settings (:meth:`RunContext.model`)."""
        self.chat = ctx.model(self.options)
        return self.chat

    def toolbox(self, task: EvalTask, ctx: RunContext) -> Toolbox:
        """Wikipedia in the open-web cells, the forgery classifier in the image cells, with the tool cache."""
        from rwpost.cache import SqliteStore

        o = self.options
        tools: dict[str, Tool] = {}
        if task.cell.evidence is EvidenceSource.WEB:
            tools["Wikipedia"] = ctx.tools.wikipedia(SearchTool)
        if task.cell.image and o.forgery_model:
            tools["Detect"] = ForgeryTool(o.forgery_model)
        path = o.tool_cache_path or o.cache_path
        return Toolbox(tools, SqliteStore(path) if path else None)

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        model = self.chat_model(ctx)
        if task.cell.image and not getattr(model, "reads_images", True):
            raise ConfigError(
                f"agentm3d: the local model {model.name} reads no images; use a text cell (T, T+W)"
            )
        return asyncio.run(self._predict(model, samples, task, ctx))

    async def _predict(
        self, model: Any, samples: Sequence[Sample], task: EvalTask, ctx: RunContext
    ) -> list[Prediction]:
        o = self.options
        # greedy unless a request samples; the task name keeps the answer cache's keys
        asker = Asker(model, task="agentm3d", temperature=0.0, max_tokens=o.answer_limit(o.max_tokens))
        reward = self.reward or JudgeReward(asker)
        toolbox = self.toolbox(task, ctx)
        options = self.cascade_options(task.cell.evidence is EvidenceSource.WEB)
        cases, failed = cases_of(samples, task, ctx)
        try:
            answers = await asyncio.gather(
                *(
                    self._one(asker, reward, toolbox, case, options, ctx.transcript(case.key))
                    for case in cases
                )
            )
        finally:
            await model.aclose()
            if self.reward is not None:
                await self.reward.aclose()
            await toolbox.aclose()
        by_id = {p.id: p for p in answers} | failed
        return [by_id[s.id] for s in samples]

    async def _one(
        self, asker: Asker, reward: Any, toolbox: Toolbox, case: Case, options: CascadeOptions, trace: Trace
    ) -> Prediction:
        """The prediction of one case; its calls are recorded in ``trace``, the sample's transcript of the
        run (which counts the images it sent)."""
        try:
            result = await Cascade(asker, reward, toolbox, case, options, trace).run()
        except (ToolFailed, ModelFailed) as exc:
            return Prediction(id=case.key, calls=trace.calls, error=str(exc))
        self.results[case.key] = result
        return self.prediction(case.key, result)

    def prediction(self, sample_id: str, result: Result) -> Prediction:
        """The runner's :class:`Prediction` of one finished cascade."""
        decision = result.decision
        head = HEAD + decision.native
        if self.options.view == "rw-post":
            head += f" (RW-Post view, adapted: {decision.label})"
        n = max((s.n for s in result.stages.values()), default=1)
        lines = [head, f"Plan: {result.plan}; N={n}."]
        for agent, stage in result.stages.items():
            how = f"{len(stage.candidates)} of {stage.n} candidates"
            r = stage.ranking
            if r is not None:
                how += f", {r.m} ranked" + (" (early stop)" if r.stopped_early else "")
                scores = r.fused[r.chosen]
                how += f", score {scores:.2f}"
            lines.append(f"- {agent}: {stage.chosen.label} ({how}): {stage.chosen.reasoning[:400]}")
        lines += [f"- {agent}: skipped ({why})" for agent, why in result.skipped.items()]
        lines += [f"- went on without a tool: {why}" for why in result.trace.tool_failures]
        return Prediction(
            id=sample_id,
            label=decision.label,
            explanation="\n".join(lines),
            evidence_urls=result.urls,
            calls=result.trace.calls,
        )


__all__ = ["AgentM3DDetector"]
