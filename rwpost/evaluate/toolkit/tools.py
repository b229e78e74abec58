"""The tools agents call: T2Agent's extensible toolset (paper section "Extensible Toolset" and appendix
"Toolset Details"), also AgentM3D's and FactGuard's, and AgentFact's search agent's.

Every tool has a card (name, argument, what it returns, the sub-tasks it serves: the action space the
expansion prompt lists) and one interface, ``await tool(argument, case, trace) -> Observed``. The
:class:`Toolbox` runs them: each call is a ledger row named by its tool (``agent="tool:<Name>"``), results
of web and local-model tools are cached by content (backend identity, argument, the sample's claim time
or image hash) in a sqlite store, and a tool that fails raises :class:`ToolFailed` (its ledger row marked
``failed``): the detector goes on without it where it can (AgentM3D's agents, the failure kept in
:attr:`Trace.tool_failures`), else the sample fails with the reason; the run goes on.

===============  ===========================  ============================================================
tool             sub-task                     here
===============  ===========================  ============================================================
Wikipedia[e]     textual veracity             the ``wikipedia`` search plug-in, through the leakage guard
Google[q]        textual veracity             the run's text search plug-in (``serper``), through the guard
ReverseImage[]   cross-modal consistency      the reverse image plug-in (TinEye in the paper), the guard
VQA[q]           cross-modal consistency      the backbone model (as in the paper)
Entity[]         cross-modal consistency      the backbone model (the paper: Baidu's entity API)
Counterfactual[] visual veracity              the backbone model (the paper: LLaVA-34B)
Detect[]         visual veracity              a local image-classification model folder (the paper:
                                              PSCC-Net); absent unless ``forgery_model`` is given
===============  ===========================  ============================================================

Web tools exist only in the open-web cells (T+W, T+I+W), image tools only when the sample has an image.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RwpostError
from rwpost.evaluate.contract import Call, RunContext, Trace
from rwpost.evaluate.leakage import LeakageGuard, SearchResult
from rwpost.evaluate.search.dates import parse_result_date
from rwpost.evaluate.toolkit.ask import ModelFailed
from rwpost.io import sha256_hex

TOOL_CACHE = "t2agent-tool"
"""The sqlite store namespace of cached tool results."""


class ToolFailed(RwpostError):
    """A tool call that failed (the backend's retries spent): the sample fails with this reason."""


@dataclass(frozen=True)
class ToolCard:
    """What the expansion prompt says of a tool (the paper's standardized tool template)."""

    name: str
    argument: str
    description: str
    subtasks: tuple[str, ...]
    needs_image: bool = False
    web: bool = False

    def line(self) -> str:
        return f"{self.name}[{self.argument}]: {self.description}"


CARDS: dict[str, ToolCard] = {
    card.name: card
    for card in (
        ToolCard(
            "Wikipedia",
            "entity",
            "Searches the exact entity on Wikipedia and returns the first paragraph if it exists. If not, "
            "it will return some similar entities to search. Please give priority to Wikipedia.",
            ("text",),
            web=True,
        ),
        ToolCard(
            "Google",
            "query",
            "Searches information on Google and returns the snippets if they exist. Google should be "
            "considered when Wikipedia fails.",
            ("text",),
            web=True,
        ),
        ToolCard(
            "ReverseImage",
            "image",
            "Searches the web for pages showing the news image, to trace where and when it appeared.",
            ("match",),
            needs_image=True,
            web=True,
        ),
        ToolCard(
            "VQA",
            "question",
            "Return the description of the image information concerned in the question.",
            ("match",),
            needs_image=True,
        ),
        ToolCard(
            "Entity",
            "image",
            "Return the entity of the image, including the identity of public figures.",
            ("match",),
            needs_image=True,
        ),
        ToolCard(
            "Counterfactual",
            "image",
            "Return whether the scene in the image contradicts real-world facts or physical laws.",
            ("image",),
            needs_image=True,
        ),
        ToolCard(
            "Detect",
            "image",
            "Return the forgery situation detected by a forgery detection model.",
            ("image",),
            needs_image=True,
        ),
    )
}
"""Every tool T2Agent knows, by action name."""


@dataclass
class Case:
    """One sample as the agent and its tools see it."""

    key: str
    news: str
    image: Any = None
    """The post image (:class:`rwpost.llm.ImageInput`), None in text cells or when there is none."""
    claim_time: date | None = None


@dataclass
class Observed:
    """A tool's observation and the URLs of the results it showed."""

    text: str
    urls: list[str] = field(default_factory=list)
    results: list[SearchResult] = field(default_factory=list)
    """The results shown, whole (a caller that reads them itself: AgentFact's search agent)."""


class Tool:
    """A tool: its card, what makes its results comparable, and a run over one argument."""

    card: ToolCard
    cacheable = False
    """Results cached in the tool store (web and local-model tools; model tools use the LLM cache)."""

    def identity(self) -> dict[str, Any]:
        return {"tool": self.card.name}

    def content_key(self, argument: str, case: Case) -> list[Any]:
        """What besides the identity and the argument determines the raw result."""
        return []

    async def fetch(self, argument: str, case: Case) -> Any:
        """The raw, JSON-able result (cached); raises :class:`ToolFailed`."""
        raise NotImplementedError

    cost_usd: float | None = None
    """The price of a call when the price table has none (a local model: 0)."""

    def ledger_name(self) -> str:
        """The name of its calls in the ledger (the price table is keyed by it)."""
        return self.card.name.lower()

    def call_row(self, cached: bool, latency_s: float, *, failed: bool = False) -> Call:
        """The ledger row of one call, named by :meth:`ledger_name`, its agent ``tool:<Name>``;
        ``failed``: the call got no answer (the manifest counts it)."""
        return Call(
            kind="tool",
            name=self.ledger_name(),
            agent=f"tool:{self.card.name}",
            latency_s=latency_s,
            cost_usd=self.cost_usd,
            cached=cached,
            failed=failed,
        )

    def excluded(self, trace: Trace, reason: str) -> Call:
        """The ledger row of one result the tool's own source filter excluded (the leakage guard's drops
        are :meth:`Trace.drop`): ``<tool>:excluded:<reason>`` at no cost, recorded in ``trace``."""
        return trace.set_aside(f"{self.card.name.lower()}:excluded:{reason}")

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        """The observation the agent sees of a raw result."""
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


def _result_rows(results: Sequence[SearchResult]) -> list[dict[str, str]]:
    return [
        {"url": r.url, "title": r.title, "snippet": r.snippet, "published": str(r.published or "")}
        for r in results
    ]


def _results(rows: Sequence[dict[str, str]]) -> list[SearchResult]:
    return [
        SearchResult(r["url"], r["title"], r["snippet"], parse_result_date(r["published"]) or None)
        for r in rows
    ]


class SearchTool(Tool):
    """Google[query] (or Wikipedia[entity]) through a text search plug-in and the leakage guard."""

    cacheable = True

    def __init__(self, card: ToolCard, backend: Any, guard: LeakageGuard, limit: int = 5) -> None:
        self.card, self.backend, self.guard, self.limit = card, backend, guard, limit

    def identity(self) -> dict[str, Any]:
        backend = getattr(self.backend, "identity", lambda: {"backend": self.backend.name})()
        return {"tool": self.card.name, "backend": backend, "limit": self.limit}

    def content_key(self, argument: str, case: Case) -> list[Any]:
        return [str(case.claim_time)]

    async def fetch(self, argument: str, case: Case) -> Any:
        from rwpost.evaluate.search.http import SearchError

        try:
            found = await self.backend.search(argument, limit=self.limit, before=case.claim_time)
        except SearchError as exc:
            raise ToolFailed(f"tool {self.card.name} ({self.backend.name}) failed: {exc}") from None
        return _result_rows(found)

    def ledger_name(self) -> str:
        return f"search:{self.backend.name}"

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        kept = trace.screen(self.guard, _results(raw), case.claim_time, tool=self.card.name)
        if not kept:
            return Observed("No results.")
        lines = [
            f"Retrieved Information {i}: {r.title}"
            + (f" ({r.published})" if r.published else "")
            + f": {r.snippet}"
            for i, r in enumerate(kept, start=1)
        ]
        return Observed("\n".join(lines), [r.url for r in kept])

    async def aclose(self) -> None:
        await self.backend.aclose()


class WikipediaTool(SearchTool):
    """Wikipedia[entity]: the first paragraph of the page titled ``entity``, else similar titles (ReAct's
    Wikipedia tool, as the paper's prompt describes it)."""

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        kept = trace.screen(self.guard, _results(raw), case.claim_time, tool=self.card.name)
        entity = " ".join(argument.split()).lower()
        exact = [r for r in kept if r.title.lower() == entity]
        if exact:
            return Observed(exact[0].snippet or f"{exact[0].title} (no summary)", [exact[0].url])
        if not kept:
            return Observed(f"Could not find [{argument}]. No similar entities.")
        similar = ", ".join(f"[{r.title}]" for r in kept)
        return Observed(f"Could not find [{argument}]. Similar: {similar}.")


class ReverseImageTool(Tool):
    """ReverseImage[image]: pages showing the news image (reverse image plug-in), through the guard."""

    cacheable = True

    def __init__(self, backend: Any, guard: LeakageGuard, limit: int = 5) -> None:
        self.card, self.backend, self.guard, self.limit = CARDS["ReverseImage"], backend, guard, limit

    def identity(self) -> dict[str, Any]:
        backend = getattr(self.backend, "identity", lambda: {"backend": self.backend.name})()
        return {"tool": self.card.name, "backend": backend, "limit": self.limit}

    def content_key(self, argument: str, case: Case) -> list[Any]:
        return [case.image.sha256 if case.image is not None else None]

    async def fetch(self, argument: str, case: Case) -> Any:
        from rwpost.evaluate.search.http import SearchError

        try:
            matches = await self.backend.similar(case.image.data, limit=self.limit)
        except SearchError as exc:
            raise ToolFailed(f"tool {self.card.name} ({self.backend.name}) failed: {exc}") from None
        return [{"url": m.page_url, "title": m.page_title, "match": m.match} for m in matches]

    def ledger_name(self) -> str:
        return f"reverse-image:{self.backend.name}"

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        pages = [SearchResult(r["url"], r["title"]) for r in raw]
        kept = {r.url for r in trace.screen(self.guard, pages, case.claim_time, tool=self.card.name)}
        rows = [r for r in raw if r["url"] in kept]
        if not rows:
            return Observed("No page shows this image.")
        lines = [
            f"Page {i}: {r['title'] or '(no title)'} ({r['match']} match)" for i, r in enumerate(rows, 1)
        ]
        return Observed("\n".join(lines), [r["url"] for r in rows])

    async def aclose(self) -> None:
        await self.backend.aclose()


class ModelTool(Tool):
    """VQA, Entity and Counterfactual: one backbone-model call on the image (cached by the LLM cache)."""

    def __init__(self, card: ToolCard, backbone: Any, prompt: str) -> None:
        self.card, self.backbone, self.prompt = card, backbone, prompt

    def identity(self) -> dict[str, Any]:
        return {"tool": self.card.name, "model": self.backbone.model.name, "prompt": self.prompt}

    async def run(self, argument: str, case: Case, trace: Trace) -> Observed:
        data = await self.backbone.ask(
            self.prompt, case.key, trace, agent=f"tool:{self.card.name}", images=(case.image,), input=argument
        )
        return Observed(str(data.get("observation", "")).strip() or "(nothing observed)")


@lru_cache(maxsize=2)
def image_classifier(folder: str) -> Any:
    """The ``transformers`` image-classification pipeline of a local model ``folder`` (kept loaded);
    a :class:`ConfigError` naming ``forgery_model`` when the folder holds no such model."""
    try:
        from transformers import pipeline

        return pipeline("image-classification", model=folder)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError ... for a wrong folder
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(
            f"forgery_model: {folder} is no image-classification model ({problem[:200]})"
        ) from None


class ForgeryTool(Tool):
    """Detect[image]: a local image-classification model folder (``transformers``), its top labels."""

    cacheable = True

    def __init__(self, folder: str, top: int = 3) -> None:
        self.card, self.folder, self.top = CARDS["Detect"], str(Path(folder).expanduser().resolve()), top

    def load(self) -> None:
        """Load the classifier now (a detector's ``prepare``): a folder that is no image classifier is
        refused before anything is written, and no sample's call imports ``transformers`` concurrently."""
        image_classifier(self.folder)

    def identity(self) -> dict[str, Any]:
        return {"tool": self.card.name, "model": self.folder}

    def content_key(self, argument: str, case: Case) -> list[Any]:
        return [case.image.sha256 if case.image is not None else None]

    async def fetch(self, argument: str, case: Case) -> Any:
        import asyncio
        import io

        def classify() -> list[dict[str, Any]]:
            from PIL import Image

            classifier = image_classifier(self.folder)
            image = Image.open(io.BytesIO(case.image.data)).convert("RGB")
            return [
                {"label": str(r["label"]), "score": float(r["score"])}
                for r in classifier(image, top_k=self.top)
            ]

        try:
            return await asyncio.to_thread(classify)
        except Exception as exc:  # a broken model folder or image: the sample fails with the reason
            raise ToolFailed(f"tool Detect ({Path(self.folder).name}) failed: {exc}") from None

    cost_usd = 0.0

    def ledger_name(self) -> str:
        return f"forgery:{Path(self.folder).name}"

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        found = ", ".join(f"{r['label']} ({r['score']:.2f})" for r in raw) or "nothing"
        return Observed(f"The forgery detection model finds: {found}.")


@dataclass
class WebTools:
    """The search and image tools of a run, each behind its leakage guard (:attr:`RunContext.tools`),
    built from the detector's typed search settings: the fields ``search``, ``wikipedia`` and
    ``image_search`` name a search plug-in (:mod:`rwpost.evaluate.search`), ``<field>_options`` its
    options, ``results_per_query`` how many results a call shows."""

    settings: Any
    """The detector's options (its ``Config``)."""
    guard: LeakageGuard = field(default_factory=LeakageGuard)
    """The run's one leakage guard: every result a tool shows passes it (a drop is a ledger row)."""

    def backend(self, name: str) -> Any:
        """The search plug-in settings field ``name`` names, built with ``<name>_options``; its key is read
        from the environment by the plug-in (refused in one line without it: build the tools in
        ``prepare`` for an open-web cell). Its raw results are the caller's to screen through
        :attr:`guard` (:meth:`Trace.screen`)."""
        from rwpost.evaluate.search import make_backend

        plugin = getattr(self.settings, name, None)
        if not plugin:
            raise ConfigError(f"option {name!r}: no search backend given")
        return make_backend(plugin, dict(getattr(self.settings, f"{name}_options", None) or {}))

    @property
    def limit(self) -> int:
        """Results a call shows (the settings' ``results_per_query``, else 5)."""
        return int(getattr(self.settings, "results_per_query", None) or 5)

    def search(self, card: ToolCard = CARDS["Google"], kind: type[SearchTool] = SearchTool) -> SearchTool:
        """Google[query] (or a tool ``kind`` of ``card``) over the ``search`` plug-in."""
        return kind(card, self.backend("search"), self.guard, self.limit)

    def wikipedia(self, kind: type[SearchTool] | None = None) -> SearchTool:
        """Wikipedia[entity] over the ``wikipedia`` plug-in (:class:`WikipediaTool`, or ``kind``)."""
        return (kind or WikipediaTool)(CARDS["Wikipedia"], self.backend("wikipedia"), self.guard, self.limit)

    def reverse_image(self) -> ReverseImageTool:
        """ReverseImage[image] over the ``image_search`` plug-in."""
        return ReverseImageTool(self.backend("image_search"), self.guard, self.limit)


def run_context(options: Any = None, **fields: Any) -> RunContext:
    """A :class:`RunContext` for a detector of ``options`` (``fields`` as the context's), its
    :attr:`~RunContext.tools` built from those options behind the context's guard: how the run makes
    each repeat's context, and how a test asks a detector directly."""
    ctx = RunContext(options=options, **fields)
    ctx.tools = WebTools(options, ctx.guard)
    return ctx


class Toolbox:
    """The selected tools of one run: runs them with the tool cache and the ledger."""

    def __init__(self, tools: dict[str, Tool], store: Any = None) -> None:
        self.tools, self.store = tools, store

    def cards(self, subtask: str, case: Case) -> list[ToolCard]:
        """The cards of the tools sub-task ``subtask`` may call for ``case``."""
        return [
            t.card
            for t in self.tools.values()
            if subtask in t.card.subtasks and (case.image is not None or not t.card.needs_image)
        ]

    async def call(self, name: str, argument: str, case: Case, trace: Trace) -> Observed:
        """Run tool ``name`` on ``argument``; an unknown tool is an observation saying so."""
        tool = self.tools.get(name)
        if tool is None or (tool.card.needs_image and case.image is None):
            known = ", ".join(sorted(self.tools)) or "none"
            return Observed(f"There is no tool {name}; the tools are {known} and Finish.")
        if not tool.cacheable:
            return await tool.run(argument, case, trace)
        key = sha256_hex(
            json.dumps([tool.identity(), argument, tool.content_key(argument, case)], sort_keys=True)
        )
        began = time.perf_counter()
        raw = self.store.get(TOOL_CACHE, key) if self.store is not None else None
        cached = raw is not None
        if raw is None:
            try:
                raw = await tool.fetch(argument, case)
            except ToolFailed:
                trace.calls.append(tool.call_row(False, time.perf_counter() - began, failed=True))
                raise
            if self.store is not None:
                self.store.put(TOOL_CACHE, key, raw)
        trace.calls.append(tool.call_row(cached, 0.0 if cached else time.perf_counter() - began))
        return tool.observe(raw, argument, case, trace)

    async def aclose(self) -> None:
        for tool in self.tools.values():
            await tool.aclose()
        if self.store is not None:
            self.store.close()


__all__ = [
    "CARDS",
    "Case",
    "ForgeryTool",
    "ModelFailed",
    "ModelTool",
    "Observed",
    "ReverseImageTool",
    "SearchTool",
    "Tool",
    "ToolCard",
    "ToolFailed",
    "Toolbox",
    "Trace",
    "WebTools",
    "WikipediaTool",
    "run_context",
]
