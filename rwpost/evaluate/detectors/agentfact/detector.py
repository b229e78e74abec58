"""``--detector agentfact``: the RW-Post paper's multi-agent fact-checker inside the evaluation runner."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Annotated, Any, Literal

from pydantic import Field, NonNegativeInt, PositiveInt, field_validator, model_validator

from rwpost.evaluate.contract import (
    Capabilities,
    Detector,
    DetectorInputs,
    Prediction,
    ResultsPerQuery,
    RunContext,
    Temperature,
)
from rwpost.evaluate.detectors.agentfact.agents import Agents, as_label, as_score, prompt_hashes
from rwpost.evaluate.detectors.agentfact.authors import AuthorsWorkflow
from rwpost.evaluate.detectors.agentfact.sources import EXCLUDED, SourceFilter
from rwpost.evaluate.detectors.agentfact.workflow import (
    ABLATIONS,
    Options,
    SearchAgentTool,
    Tools,
    Trace,
    Workflow,
)
from rwpost.evaluate.detectors.chat import ChatOptions
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.labels import Label
from rwpost.llm.chat import ChatModel
from rwpost.records import Sample

Confidence = Annotated[int, Field(ge=1, le=5)]
"""A confidence level on the prompts' 1-5 scale."""

_POINT_IDS = re.compile(r"\b([TGI]\d+)\b")

AUTHORS_CODE: dict[str, Any] = {
    "temperature": None,  # not sent: the API's default, as their OpenAIWrapper
    "max_tokens": 2000,
    "min_pool": 2,  # their batch reasoning starts at more than one item
    "subset_size": 10,
    "stop_confidence": 4,  # > 3
    "first_stop_confidence": 5,  # > 4 on the first batch
    "max_steps": 10,
    "max_replans": None,
    "results_per_query": 10,
    "image_matches": 5,
    "drop_factcheck_sources": False,
    "date_cut_days": 1,
    "scrape_pages": True,
    "max_summaries_per_query": 3,
    "summarise_temperature": 0.1,
    "claim_date_input": False,
    "ocr_input": False,
    "exclude_unsupported": True,
    "exclude_scrape_failures": True,
}
"""Profile ``authors-code``: what the released code does (``main_workflow.py``, ``agent_utils.py``,
``retrieval_imagehash_with_google_vision.py``, ``search/serper.py`` at 70223cf). An option given
explicitly wins over the profile."""

SERPER_LOCALE = {"gl": "us", "hl": "en"}
"""The authors' Serper locale (``SerperAPI(gl='us', hl='en')``), added to a ``serper`` search in profile
``authors-code``."""


def explanation_text(reasoning_logic: str, key_points: Sequence[Any]) -> tuple[str, list[str]]:
    """The prediction's explanation (reasoning logic, then one ``- point [ids]`` line per key point, as the
    gold explanation of the paired file) and the evidence ids the key points cite, in order."""
    lines, cited = [reasoning_logic.strip()], []
    for point in key_points:
        if isinstance(point, dict):
            text = str(point.get("point", "")).strip()
            ids = [str(x).strip().strip("[]") for x in point.get("evidence_ids") or []]
        else:
            text, ids = str(point).strip(), []
        in_text = _POINT_IDS.findall(text)
        ids = ids or in_text
        cited += [i for i in ids if i not in cited]
        shown = [i for i in ids if i not in in_text]  # an id the point already names is not written twice
        lines.append(f"- {text}" + (f" [{', '.join(shown)}]" if shown else ""))
    return "\n".join(x for x in lines if x), cited


class AgentFactDetector(Detector):
    """AgentFact (paper section IV): planning, retrieval, image analysis, dual reasoning, explanation.

    Cells: open web (T+I+W) searches through the ``search`` backend (and ``image_search`` for the post
    image), every result through the run's leakage guard (:attr:`RunContext.guard`, so ``rwpost evaluate
    --blocked-domains`` reaches the search); gold evidence (T+E, T+I+E: the authors' ``open_book``)
    reasons over the gold evidence; T and T+I over none. Thresholds default to the paper's
    (:class:`~rwpost.evaluate.detectors.agentfact.workflow.Options`). The agents ask the API model of
    ``llm``, or with ``backend=local`` the local model folder ``model``
    (:class:`~rwpost.evaluate.detectors.chat.ChatOptions`).
    """

    name = "agentfact"
    capabilities = Capabilities(retrieves=True)

    class Config(ChatOptions):
        profile: Literal["paper", "authors-code"] = "paper"
        """``paper``: the appendix prompts and the paper's workflow; ``authors-code``: the released code's
        prompts, control, decoding and retrieval (:data:`AUTHORS_CODE`)."""
        search_cache_path: str | None = None
        """None: ``cache_path``."""
        temperature: Temperature | None = 0.0
        """None: the server's default (not sent)."""
        max_tokens: PositiveInt | None = 1200
        search: str = "serper"
        search_options: dict[str, Any] = {}
        image_search: str | None = None
        image_search_options: dict[str, Any] = {}
        min_pool: PositiveInt = Options.min_pool
        subset_size: PositiveInt = Options.subset_size
        stop_confidence: Confidence = Options.stop_confidence
        first_stop_confidence: Confidence | None = Options.first_stop_confidence
        max_steps: PositiveInt = Options.max_steps
        max_replans: NonNegativeInt | None = Options.max_replans
        results_per_query: ResultsPerQuery = Options.results_per_query
        image_matches: NonNegativeInt = Options.image_matches
        drop_factcheck_sources: bool = Options.drop_factcheck_sources
        date_cut_days: NonNegativeInt = Options.date_cut_days
        scrape_pages: bool = Options.scrape_pages
        page_chars: PositiveInt = Options.page_chars
        max_summaries_per_query: PositiveInt | None = Options.max_summaries_per_query
        summarise_temperature: Temperature | None = Options.summarise_temperature
        claim_date_input: bool = Options.claim_date_input
        ocr_input: bool = Options.ocr_input
        exclude_unsupported: bool = Options.exclude_unsupported
        exclude_scrape_failures: bool = Options.exclude_scrape_failures
        ablate: tuple[str, ...] = ()
        """Table V's ablations, any of ``sp,ir,tr,rt`` (:data:`~.workflow.ABLATIONS`)."""

        @field_validator("ablate", mode="before")
        @classmethod
        def _ablations(cls, value: Any) -> Any:
            names = value.split(",") if isinstance(value, str) else list(value or ())
            names = [str(x).strip().lower() for x in names if str(x).strip()]
            unknown = sorted(set(names) - set(ABLATIONS))
            if unknown:
                raise ValueError(f"unknown ablation {', '.join(unknown)} (choose from sp, ir, tr, rt)")
            return tuple(x for x in ABLATIONS if x in names)

        @model_validator(mode="after")
        def _profile_defaults(self) -> AgentFactDetector.Config:
            if self.profile == "authors-code":
                for name, value in AUTHORS_CODE.items():
                    if name not in self.model_fields_set:
                        setattr(self, name, value)
                if self.search == "serper":
                    self.search_options = {**SERPER_LOCALE, **self.search_options}
            return self

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        o = self.options
        self.workflow_options = Options(**{f.name: getattr(o, f.name) for f in fields(Options)})
        self.device = o.remote_device()
        self.traces: dict[str, Trace] = {}
        self._agents: Agents | None = None
        self.model: ChatModel | None = None
        # with a reverse image search, Agent-IR sends the post image out (open-web cells): the run counts
        # the images it sent, and refuses an image cell whose images cannot be loaded
        reads_images = o.image_search is not None
        self.capabilities = Capabilities(retrieves=True, reads_images=reads_images)
        if o.local:  # loaded now: a bad folder is refused before the run starts
            self.model = o.chat_model({})
            self.device = self.model.device
            self.capabilities = Capabilities(retrieves=True, reads_images=reads_images, uses_gpu=True)

    def config(self) -> dict[str, Any]:
        o = self.options
        return {
            "profile": o.profile,
            "model": o.llm.model,
            "base_url": o.llm.base_url,
            "cache_path": o.cache_path,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
            "search": o.search,
            "search_options": o.search_options,
            "image_search": o.image_search,
            "image_search_options": o.image_search_options,
            **asdict(self.workflow_options),
            **(self.model.config() if o.local else {}),
        }

    def agents(self, ctx: RunContext) -> Agents:
        """The five agents over the chat model, built on first use: the run's model
        (:meth:`RunContext.model`: an API model with the run's key and answer cache), or the local model
        folder loaded when the detector was built."""
        if self._agents is None:
            o = self.options
            if self.model is None:
                self.model = ctx.model(o)
            self._agents = Agents(
                self.model, temperature=o.temperature, max_tokens=o.max_tokens, profile=o.profile
            )
        return self._agents

    def prepare(self, ctx: RunContext) -> None:
        self.agents(ctx)  # an API model without a key or a server is refused here
        if ctx.cell is not None and ctx.cell.evidence is EvidenceSource.WEB:
            tools = self._tools(ctx.cell, ctx)  # so is a search backend without its key
            asyncio.run(tools.aclose())

    def inputs(self) -> DetectorInputs:
        return DetectorInputs(prompts=prompt_hashes(self.options.profile))

    def notes(self, predictions: Sequence[Prediction], task: EvalTask, ctx: RunContext) -> list[str]:
        """The report's notes: the profile, Table V's ablations (and Agent-IR off for want of a reverse-image
        backend, loudly), and what the authors' source filters removed (not leakage)."""
        o = self.options
        out = []
        if o.profile == "authors-code":
            out.append("AgentFact profile authors-code: the released code's prompts, loop and retrieval")
        rows = [ABLATIONS[x] for x in o.ablate]
        web = task.cell.evidence is EvidenceSource.WEB
        if web and not o.image_search and "ir" not in o.ablate:
            out.append(
                "Agent-IR off: Table V's w/o Agent-IR (no reverse-image backend is configured; "
                "--set image_search=google-vision runs the full system)"
            )
        if rows:
            out.append(f"Table V ablation: {', '.join(rows)}")
        excluded = Counter(
            c.name.removeprefix(EXCLUDED).split(":")[0]
            for p in predictions
            for c in p.calls
            if c.name.startswith(EXCLUDED)
        )
        if excluded:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(excluded.items()))
            out.append(
                f"source filters of the authors' code (not leakage): {sum(excluded.values())} results "
                f"excluded ({reasons})"
            )
        return out

    # --- prediction ------------------------------------------------------------------------------------

    def _tools(self, cell: Cell, ctx: RunContext) -> Tools | None:
        if cell.evidence is not EvidenceSource.WEB:
            return None
        from rwpost.cache import SqliteStore
        from rwpost.evaluate.detectors.agentfact.pages import PageReader

        o = self.options
        search = ctx.tools.search(kind=SearchAgentTool)  # the toolkit's tool, behind the run's guard
        image = ctx.tools.backend("image_search") if o.image_search else None
        cache = o.search_cache_path or o.cache_path
        store = SqliteStore(cache) if cache else None
        sources = SourceFilter(o.exclude_unsupported, o.exclude_scrape_failures)
        return Tools(search, image, ctx.tools.guard, store, sources, PageReader() if o.scrape_pages else None)

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        return asyncio.run(self._predict(samples, task, ctx))

    async def _predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        agents = self.agents(ctx)
        tools = self._tools(task.cell, ctx)
        web = task.cell.evidence is EvidenceSource.WEB
        try:
            runs = []
            for sample in samples:
                image = ctx.image(sample) if web else None
                trace = ctx.transcript(sample.id, kind=Trace)  # the run's transcript: the ledger
                if image is not None and tools is not None and tools.image is not None:
                    trace.images_sent = 1  # the post image goes to the reverse image search (Agent-IR)
                kind = AuthorsWorkflow if self.options.profile == "authors-code" else Workflow
                workflow = kind(agents, tools, self.workflow_options, task.label_names, post_image=image)
                runs.append(workflow.run(sample, task.cell.evidence, trace))
            traces = await asyncio.gather(*runs)
        finally:
            await agents.model.aclose()
            if tools is not None:
                await tools.aclose()
        out = []
        for sample, trace in zip(samples, traces, strict=True):
            self.traces[sample.id] = trace
            out.append(self.prediction(sample.id, trace, task.label_names))
        return out

    def prediction(self, sample_id: str, trace: Trace, labels: Sequence[str]) -> Prediction:
        """The runner's :class:`Prediction` from a finished trace."""
        answer = trace.answer
        if answer is None:
            why = next((e for e in reversed(trace.errors) if e.startswith("agent-eg")), "no explanation")
            return Prediction(id=sample_id, calls=trace.calls, error=f"model answer rejected: {why}")
        result = answer.get("validation_result") or {}
        label = as_label(result.get("3-class_authenticity_label"))
        if label is None:
            return Prediction(id=sample_id, calls=trace.calls, error="model answer rejected: no usable label")
        confidence = min(max(as_score(answer.get("confidence_level"), 1.0) or 1.0, 1.0), 5.0)
        share = confidence / 5.0
        others = [Label(x) for x in labels if x != label]
        probabilities = {label: share} | {x: (1.0 - share) / max(len(others), 1) for x in others}
        explanation, cited = explanation_text(
            str(result.get("reasoning_logic") or ""), result.get("key_points") or []
        )
        urls_by_id = {e.id: e.url for e in trace.pool if e.url} | {
            i["id"]: i["page_url"] for i in trace.images if i.get("page_url")
        }
        urls = [urls_by_id[i] for i in cited if i in urls_by_id]
        if not urls:
            urls = [e.url for e in trace.useful if e.url]
        return Prediction(
            id=sample_id,
            label=label,
            probabilities=probabilities,
            explanation=explanation or None,
            evidence_urls=list(dict.fromkeys(urls)),
            calls=trace.calls,
        )


__all__ = ["AgentFactDetector", "explanation_text"]
