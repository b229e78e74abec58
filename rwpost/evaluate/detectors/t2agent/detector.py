"""``--detector t2agent``: T2Agent (multi-source verification MCTS with a toolset) inside the runner."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from rwpost.evaluate.contract import (
    Capabilities,
    Detector,
    DetectorInputs,
    ModelFolder,
    Prediction,
    ResultsPerQuery,
    RunContext,
)
from rwpost.evaluate.detectors.chat import ChatOptions
from rwpost.evaluate.detectors.t2agent.agent import Result, run_case
from rwpost.evaluate.detectors.t2agent.backbone import backbone, prompt_hashes, schema_hashes
from rwpost.evaluate.detectors.t2agent.labels import SUBTASKS, SubTask, normalize_answer
from rwpost.evaluate.detectors.t2agent.tree import SearchOptions
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.evaluate.toolkit.ask import Asker
from rwpost.evaluate.toolkit.ask import prompt_hashes as toolkit_prompt_hashes
from rwpost.evaluate.toolkit.cases import cases_of
from rwpost.evaluate.toolkit.tools import (
    CARDS,
    Case,
    ForgeryTool,
    ModelFailed,
    ModelTool,
    Tool,
    Toolbox,
    ToolFailed,
    Trace,
)
from rwpost.evaluate.toolkit.toolsets import read_toolset
from rwpost.labels import MAIN_LABELS
from rwpost.records import Sample

VIEWS = {
    "rw-post": "RW-Post 3-class (adapted: NOT ENOUGH EVIDENCE answers and the Unproven rule)",
    "native": "T2Agent native (real -> True, fake -> False; the 4-class answer in the explanation)",
}

MODEL_TOOL_PROMPTS = {
    "VQA": "t2agent_vqa.v1",
    "Entity": "t2agent_entity.v1",
    "Counterfactual": "t2agent_counterfactual.v1",
}
"""The prompt of each tool run through the backbone model."""

SIMULATIONS_MAX = 200
"""The most simulations per sample (the port's default is 12): each simulation asks the model."""
DEPTH_MAX = 20
"""The deepest tree (the port's default is 4)."""
CHILDREN_MAX = 10
"""The most children per expansion (the paper's is 2): each child is a model-proposed step that runs."""

CUSTOM_PROMPTS = ("t2agent_subtask.v1", "t2agent_init_sources.v1")
"""The prompts of a user-defined sub-task set (their hashes enter the run identity when one is set)."""


class SubTaskOption(BaseModel):
    """A user-defined sub-task of the tree's first layer: one forgery source (the paper: "adaptively
    pre-defined by the user", e.g. AMG's five)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    source: str = Field(min_length=1)
    """The native class of news whose forgery comes from here (the answer when this sub-task wins)."""
    task: str = Field(min_length=1)
    """What the sub-task checks, as the task line of its expansion prompt."""
    support: str = Field(min_length=1)
    """The Finish answer that finds no such forgery (e.g. ``TIME CONSISTENT``)."""
    refute: str = Field(min_length=1)
    """The Finish answer that finds it (e.g. ``TIME INCONSISTENT``)."""
    needs_image: bool = True
    tools_of: Literal["text", "image", "match"] = "image"
    """The built-in sub-task whose tools this one may call."""

    def subtask(self) -> SubTask:
        support, refute = normalize_answer(self.support), normalize_answer(self.refute)
        return SubTask(
            self.name,
            "t2agent_subtask.v1",
            self.source,
            support,
            refute,
            self.needs_image,
            self.task,
            self.tools_of,
        )


class T2AgentDetector(Detector):
    """T2Agent (Cui et al.): the tree is initialised with sub-task nodes (textual veracity; with an image
    also visual veracity and cross-modal consistency), each of ``simulations`` simulations selects with the
    modified UCT, expands ``children`` steps proposed by the model, scores them with the dual reward and
    backpropagates; a confident refutation stops early, a confident support prunes its sub-task; the
    answer is the argmax of eqs. 4-6. Web tools search in the open-web cells only, through the run's
    leakage guard. Options default to the paper's (``children`` 2, ``exploration`` 2, ``alpha`` 0.5) and
    to the MIT port's where the paper gives none (``simulations`` 12, ``depth`` 4, ``confidence`` 0.8).
    """

    name = "t2agent"
    capabilities = Capabilities(retrieves=True, reads_images=True)
    labels = MAIN_LABELS
    labels_hint = "evaluate it on the main set (or MMFakeBench's binary view)"

    class Config(ChatOptions):
        tool_cache_path: str | None = None
        """The sqlite cache of tool results; None: ``cache_path`` (when given)."""
        temperature: float = 0.0
        max_tokens: PositiveInt | None = 800
        view: Literal["rw-post", "native"] = "rw-post"
        """``rw-post``: True/False/Unproven, adapted; ``native``: real/fake as True/False (MMFakeBench)."""
        simulations: int = Field(default=SearchOptions.simulations, ge=1, le=SIMULATIONS_MAX)
        """K, the most simulations per sample (each costs model calls: bounded)."""
        depth: int = Field(default=SearchOptions.depth, ge=1, le=DEPTH_MAX)
        children: int = Field(default=SearchOptions.children, ge=1, le=CHILDREN_MAX)
        """n, the steps proposed at each expansion (paper: 2; bounded, as each is run)."""
        exploration: NonNegativeFloat = SearchOptions.exploration
        alpha: float = Field(default=SearchOptions.alpha, ge=0.0, le=1.0)
        confidence: float = Field(default=SearchOptions.confidence, ge=0.0, le=1.0)
        early_stop: bool = SearchOptions.early_stop
        prune: bool = SearchOptions.prune
        unproven_at_most: float = Field(default=0.5, ge=0.0, le=1.0)
        """RW-Post view: Unproven when the winning probability of eq. 6 is at most this."""
        tools: list[str] | None = None
        """The toolset (action names: ``Wikipedia``, ``Google``, ``VQA``...); None: every tool."""
        toolset: str | None = None
        """A toolset file written by ``--select-tools``: its tools are ``tools`` (give one of the two)."""
        search: str = "serper"
        search_options: dict[str, Any] = {}
        wikipedia: str = "wikipedia"
        wikipedia_options: dict[str, Any] = {}
        image_search: str | None = None
        image_search_options: dict[str, Any] = {}
        results_per_query: ResultsPerQuery = 5
        forgery_model: ModelFolder | None = None
        """A local image-classification model folder for Detect[image]; None: the tool is absent."""
        subtasks: list[str | SubTaskOption] | None = None
        """The sub-task set, in order: built-in names (``text``, ``image``, ``match``) and user-defined
        sub-tasks (:class:`SubTaskOption`); None: MMFakeBench's three (``[text, image, match]``)."""

        @field_validator("subtasks")
        @classmethod
        def _known_subtasks(cls, value: list[str | SubTaskOption] | None) -> list[str | SubTaskOption] | None:
            if value is None:
                return None
            if not value:
                raise ValueError("give at least one sub-task (None: text, image, match)")
            unknown = [s for s in value if isinstance(s, str) and s not in SUBTASKS]
            if unknown:
                raise ValueError(f"unknown sub-tasks {unknown}; built in: {', '.join(SUBTASKS)}")
            names = [s if isinstance(s, str) else s.name for s in value]
            if len(set(names)) != len(names):
                raise ValueError(f"sub-task names repeat: {names}")
            for s in value:
                if not isinstance(s, str) and normalize_answer(s.support) == normalize_answer(s.refute):
                    raise ValueError(f"sub-task {s.name}: support and refute are the same answer")
            return value

        @field_validator("tools")
        @classmethod
        def _known_tools(cls, value: list[str] | None) -> list[str] | None:
            if value is not None and not value:
                raise ValueError("give at least one tool (None: every tool)")
            unknown = [t for t in value or [] if t not in CARDS]
            if unknown:
                raise ValueError(f"unknown tools {unknown}; known: {', '.join(CARDS)}")
            return value

        @model_validator(mode="after")
        def _load_toolset(self) -> T2AgentDetector.Config:
            if self.toolset is not None:
                if self.tools is not None:
                    raise ValueError("give tools or toolset (a file of them), not both")
                self.tools = read_toolset(self.toolset, CARDS)
            return self

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        o = self.options
        self.search_options = SearchOptions(**{f.name: getattr(o, f.name) for f in fields(SearchOptions)})
        if o.local:
            from rwpost.llm.local import pick_device

            self.device = pick_device(o.device)
        else:
            self.device = o.remote_device()
        self.subtasks: dict[str, SubTask] = {
            (s if isinstance(s, str) else s.name): (SUBTASKS[s] if isinstance(s, str) else s.subtask())
            for s in (o.subtasks if o.subtasks is not None else list(SUBTASKS))
        }
        """The run's sub-task set, by name, in the initialization's order."""
        self.results: dict[str, Result] = {}
        """The last search of each sample (tree, decision, ledger), by sample id."""

    # --- what the run records -------------------------------------------------------------------

    def toolset(self) -> list[str]:
        """The selected tools, in card order."""
        chosen = self.options.tools
        return [name for name in CARDS if chosen is None or name in chosen]

    def usable_tools(self, cell: Cell) -> list[str]:
        """The selected tools the ``cell`` allows (web tools in open-web cells, image tools in image cells)
        and this configuration can run: what ``--select-tools`` chooses among."""
        absent = self.absent_tools()
        return [
            name
            for name in self.toolset()
            if name not in absent
            and (cell.evidence is EvidenceSource.WEB or not CARDS[name].web)
            and (cell.image or not CARDS[name].needs_image)
        ]

    def prepare(self, ctx: RunContext) -> None:
        """Refuse before anything is written: an API model without a key or a server, a local one that
        reads no images in an image cell, a ``forgery_model`` that is no image classifier (image cells), a
        search tool of an open-web cell without its key."""
        if ctx.cell is None:
            return
        model = self.model(ctx, vision=ctx.cell.image)
        if ctx.cell.image and self.options.forgery_model and "Detect" in self.toolset():
            ForgeryTool(self.options.forgery_model).load()  # a folder that is no image classifier
        if ctx.cell.evidence is EvidenceSource.WEB:
            toolbox = self.toolbox(ctx.cell, ctx, backbone(model))
            asyncio.run(toolbox.aclose())

    def absent_tools(self) -> dict[str, str]:
        """Selected tools this configuration cannot run, with the reason (the manifest says so)."""
        o, absent = self.options, {}
        if "Detect" in self.toolset() and not o.forgery_model:
            absent["Detect"] = "no forgery_model folder given (the paper uses PSCC-Net)"
        if "ReverseImage" in self.toolset() and not o.image_search:
            absent["ReverseImage"] = "no image_search backend given"
        return absent

    def config(self) -> dict[str, Any]:
        o = self.options
        return {
            "model": o.llm.model,
            **({"backend": "local", "batch_size": o.batch_size} if o.local else {}),
            "base_url": o.llm.base_url,
            "cache_path": o.cache_path,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
            "view": o.view,
            "labels": VIEWS[o.view],
            **asdict(self.search_options),
            "unproven_at_most": o.unproven_at_most,
            "tools": self.toolset(),
            **({"toolset": o.toolset} if o.toolset else {}),
            "absent_tools": self.absent_tools(),
            "search": o.search,
            "search_options": o.search_options,
            "wikipedia": o.wikipedia,
            "wikipedia_options": o.wikipedia_options,
            "image_search": o.image_search,
            "image_search_options": o.image_search_options,
            "results_per_query": o.results_per_query,
            "forgery_model": o.forgery_model,
            **(
                {"subtasks": [s if isinstance(s, str) else s.model_dump() for s in o.subtasks]}
                if o.subtasks
                else {}
            ),
        }

    def custom(self) -> bool:
        """Whether the sub-task set is not MMFakeBench's three (its own prompts then run)."""
        return list(self.subtasks) != list(SUBTASKS) or any(s.task for s in self.subtasks.values())

    def inputs(self) -> DetectorInputs:
        toolset = (self.options.toolset,) if self.options.toolset else ()
        prompts = prompt_hashes() | (toolkit_prompt_hashes(CUSTOM_PROMPTS) if self.custom() else {})
        return DetectorInputs(files=toolset, prompts=prompts, schemas=schema_hashes())

    def notes(self, predictions: Sequence[Prediction], task: EvalTask, ctx: RunContext) -> list[str]:
        """The RW-Post view marked as adapted, and each selected tool this configuration could not run."""
        lines = []
        if self.options.view == "rw-post":
            lines.append(
                f"Labels: {VIEWS['rw-post']}; the paper's T2Agent answers real / fake only, so this view "
                "is adapted (Unproven when no sub-task is verified, or when the winning probability of eq. 6 "
                f"is at most {self.options.unproven_at_most})."
            )
        lines += [f"Tool {name} absent: {why}." for name, why in self.absent_tools().items()]
        return lines

    # --- prediction -----------------------------------------------------------------------------

    def model(self, ctx: RunContext, *, vision: bool = False) -> Any:
        """The backbone chat model, answers cached at ``cache_path``: the project's client with the run's
        API key, or (``backend=local``) the local model folder, refused unless it reads images when
        ``vision``."""
        return ctx.model(self.options, vision=vision)

    def toolbox(self, cell: Cell, ctx: RunContext, backbone: Asker) -> Toolbox:
        """The selected tools the task's cell allows (web tools only in open-web cells, image tools only
        in image cells), with the tool cache."""
        from rwpost.cache import SqliteStore

        o = self.options
        web = cell.evidence is EvidenceSource.WEB
        tools: dict[str, Tool] = {}
        for name in self.toolset():
            card = CARDS[name]
            if (card.web and not web) or (card.needs_image and not cell.image) or name in self.absent_tools():
                continue
            if name == "Wikipedia":
                tools[name] = ctx.tools.wikipedia()
            elif name == "Google":
                tools[name] = ctx.tools.search()
            elif name == "ReverseImage":
                tools[name] = ctx.tools.reverse_image()
            elif name == "Detect":
                tools[name] = ForgeryTool(o.forgery_model or "")
            else:
                tools[name] = ModelTool(card, backbone, MODEL_TOOL_PROMPTS[name])
        path = o.tool_cache_path or o.cache_path
        return Toolbox(tools, SqliteStore(path) if path else None)

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        return asyncio.run(self._predict(samples, task, ctx))

    async def _predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        o = self.options
        model = self.model(ctx, vision=task.cell.image)
        asker = backbone(model, temperature=o.temperature, max_tokens=o.max_tokens)
        toolbox = self.toolbox(task.cell, ctx, asker)
        cases, failed = cases_of(samples, task, ctx)
        try:
            answers = await asyncio.gather(
                *(self._one(asker, toolbox, case, ctx.transcript(case.key)) for case in cases)
            )
        finally:
            await asker.model.aclose()
            await toolbox.aclose()
        by_id = {p.id: p for p in answers} | failed
        return [by_id[s.id] for s in samples]

    async def _one(self, backbone: Asker, toolbox: Toolbox, case: Case, trace: Trace) -> Prediction:
        """The prediction of one case; its calls are recorded in ``trace``, the sample's transcript of the
        run (which counts the images it sent)."""
        o = self.options
        try:
            result = await run_case(
                backbone,
                toolbox,
                case,
                self.search_options,
                view=o.view,
                unproven_at_most=o.unproven_at_most,
                trace=trace,
                subtasks=self.subtasks,
            )
        except (ToolFailed, ModelFailed) as exc:
            return Prediction(id=case.key, calls=trace.calls, error=str(exc))
        self.results[case.key] = result
        return self.prediction(case.key, result)

    def prediction(self, sample_id: str, result: Result) -> Prediction:
        """The runner's :class:`Prediction` of one finished search."""
        decision, outcome = result.decision, result.outcome
        if decision.label is None:
            return Prediction(
                id=sample_id,
                calls=result.trace.calls,
                error=f"no sub-task reached an answer in {len(outcome.simulations)} simulations",
            )
        head = f"T2Agent answer: {decision.native or 'no sub-task verified'}"
        if self.options.view == "rw-post":
            head += f" (RW-Post view, adapted: {decision.label})"
        scores = ", ".join(f"p(fake {n}) {p:.2f}" for n, p in decision.p_fake.items())
        if decision.p_real is not None:
            scores = f"p(real) {decision.p_real:.2f}, {scores}"
        search = f"Search: {outcome.stopped} after {len(outcome.simulations)} simulations"
        lines = [head, search + (f"; {scores}." if scores else ".")]
        urls: list[str] = []
        for name in (c.subtask for c in outcome.root.children):
            node = outcome.subtask(name)
            best = outcome.best(name)
            if best is None:
                lines.append(f"- {name}: no verdict ({node.visits} visits)")
                continue
            lines.append(f"- {name}: {best.answer} (confidence {best.s_c:.1f}, {node.visits} visits)")
            for step in best.path():
                lines.append(f"  {step.tool}[{step.input}]: {step.observation[:300]}")
                urls += step.urls
        return Prediction(
            id=sample_id,
            label=decision.label,
            explanation="\n".join(lines),
            evidence_urls=list(dict.fromkeys(urls)),
            calls=result.trace.calls,
        )


__all__ = ["T2AgentDetector"]
