"""The AgentFact workflow of paper section IV-C for one sample, with no evidence, gold evidence or the web.

1. Agent-SP plans: reasoning steps, a validation list (post sentences, searched as they are) and a search
   list (information needs, turned into queries by Agent-TR-1). Agent-IR runs beside it (open-web, when
   the post has an image and a reverse image backend is set).
2. Agent-TR works through both lists, one item a round: search, leakage guard, query-guided filtering and
   summarisation, source reliability per domain (``factcheck`` sources are dropped). Kept summaries join
   the reliable pool E_r.
3. Once E_r holds ``min_pool`` unreviewed items (default 3), temporary reasoning (Agent-R-T) reviews a
   subset; the ids it cites join the useful pool E_u.
4. Whenever E_u grows, accumulated reasoning (Agent-R-A) reasons over all of it (and the image analysis).
5. Stop when its label is not Unproven and its confidence is at least ``stop_confidence`` (default 4), or
   after ``max_steps`` reasoning calls (default 12); when both lists are spent, Agent-SP re-plans from the
   last reasoning (at most ``max_replans`` times). Agent-EG then writes label, reasoning logic, key points
   with evidence ids and a 1-5 confidence.

Gold-evidence cells are the authors' ``open_book``: plan, one reasoning over every gold item, explanation
(which sees every gold item); cells without evidence reason over none. Table V's ablations switch agents
off (``ablate``: ``sp`` no planning, the claim is searched as it is; ``ir`` no image agent; ``tr`` no text
retrieval; ``rt`` no temporary reasoning, every kept item is useful). Deepfake scoring (DIRE) is not part
of this port. The ``authors-code`` profile runs :mod:`.authors` instead (the released code's loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from rwpost.evaluate.contract import Call
from rwpost.evaluate.contract import Trace as AgentTrace
from rwpost.evaluate.detectors.agentfact.agents import (
    Agents,
    EvidenceItem,
    as_label,
    as_score,
    compact,
    evidence_text,
)
from rwpost.evaluate.detectors.agentfact.pages import PageReader, article_text
from rwpost.evaluate.detectors.agentfact.sources import EXCLUDED, SourceFilter
from rwpost.evaluate.leakage import LeakageGuard, SearchResult, normalize_domain
from rwpost.evaluate.task import EvidenceSource
from rwpost.evaluate.toolkit.tools import (
    Case,
    Observed,
    ReverseImageTool,
    SearchTool,
    Tool,
    Toolbox,
    ToolCard,
    ToolFailed,
    _results,
)
from rwpost.labels import Label
from rwpost.records import Sample

"""Name prefix of the zero-cost ledger row recording one result the leakage guard dropped, with its reason
(``blocked:<domain>``, ``after-claim-time``, ``source:factcheck``): the durable record the run's leakage
report counts, so a resumed run reports every sample's drops."""


ABLATIONS = {
    "sp": "w/o Agent-SP",
    "ir": "w/o Agent-IR",
    "tr": "w/o Agent-TR",
    "rt": "w/o Agent-R-T",
}
"""Table V's ablations (``--set ablate=sp,ir,tr,rt``, any combination) and the paper's row names."""


@dataclass(frozen=True)
class Options:
    """The workflow's thresholds and switches, with the ``paper`` profile's defaults (the paper's where it
    gives them); :data:`.detector.AUTHORS_CODE` holds the other profile's."""

    profile: str = "paper"
    min_pool: int = 3
    """Temporary reasoning starts once E_r holds this many unreviewed items (paper: 3; code: 2)."""
    subset_size: int = 5
    """At most this many items per temporary reasoning call (code: 10)."""
    stop_confidence: int = 4
    """Stop when the label is not Unproven and the confidence is at least this (paper: 4; code: > 3)."""
    first_stop_confidence: int | None = None
    """The bar of the first reasoning over new evidence (None: ``stop_confidence``; code: > 4, i.e. 5)."""
    max_steps: int = 12
    """paper: reasoning calls before the explanation is forced (12); code: plans, searches and reasoning
    calls together (10)."""
    max_replans: int | None = 2
    """New plans once the validation and search lists are spent (None: only ``max_steps`` bounds them)."""
    results_per_query: int = 5
    image_matches: int = 3
    drop_factcheck_sources: bool = True
    date_cut_days: int = 0
    """Search and guard cut: the claim date minus this many days (code: 1)."""
    scrape_pages: bool = False
    """Summarise each result's page text (code) rather than its search snippet (paper port)."""
    page_chars: int = 2000
    max_summaries_per_query: int | None = None
    """Keep at most this many summaries of one query's results (code: 3)."""
    summarise_temperature: float | None = 0.0
    """The summariser's temperature (code: 0.1)."""
    claim_date_input: bool = True
    """Show the agents the claim date (an rwpost addition; the authors' agents never see it)."""
    ocr_input: bool = True
    """Show the agents the OCR text in image cells (an rwpost addition; the authors' never see it)."""
    exclude_unsupported: bool = False
    """The authors' social-media and ``.gov`` exclusion (:mod:`.sources`; not leakage)."""
    exclude_scrape_failures: bool = False
    """The authors' scrape-failure list and file types (:mod:`.sources`; not leakage)."""
    ablate: tuple[str, ...] = ()
    """Table V's switches (:data:`ABLATIONS`)."""

    def cut(self, claim_time: date | None) -> date | None:
        """The last day a result may be dated (and the search's ``before``)."""
        return claim_time - timedelta(days=self.date_cut_days) if claim_time else None


@dataclass
class Trace(AgentTrace):
    """What happened for one sample: the toolkit's trace (ledger rows, drops) and AgentFact's pools,
    reasoning outputs and final answer."""

    pool: list[EvidenceItem] = field(default_factory=list)
    useful: list[EvidenceItem] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    plans: list[dict[str, Any]] = field(default_factory=list)
    reasoning: list[dict[str, Any]] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    """Results the authors' source filters removed (not leakage)."""
    errors: list[str] = field(default_factory=list)
    reviewed: set[str] = field(default_factory=set)
    sources: dict[str, str] = field(default_factory=dict)
    steps: int = 0
    replans: int = 0
    stopped: str = ""
    answer: dict[str, Any] | None = None

    def exclude(self, url: str, reason: str, query: str) -> None:
        """A result the authors' source filters set aside (not leakage): kept with its reason, and a
        zero-cost ledger row ``source-filter:excluded:<reason>`` (:meth:`set_aside`, as the leakage
        guard's drops) the report's notes count."""
        self.excluded.append({"url": url, "reason": reason, "query": query})
        self.set_aside(f"{EXCLUDED}{reason}")


def screened(
    guard: LeakageGuard,
    sources: SourceFilter,
    results: list[SearchResult],
    claim_time: date | None,
    trace: Trace,
    query: str,
) -> list[SearchResult]:
    """``results`` the leakage guard keeps (``claim_time``: the cut) and the switched-on source filters
    pass; each one dropped is recorded in ``trace`` with its reason (leakage and source exclusions
    apart)."""
    kept = []
    for result in trace.screen(guard, results, claim_time, query=query):
        why = sources.reason(result.url) if sources.active else None
        if why is None:
            kept.append(result)
            continue
        trace.exclude(result.url, why, query)
    return kept


class AgentRows(Tool):
    """A toolkit tool whose ledger rows (:meth:`Tool.call_row`) are tagged with the AgentFact agent that
    calls it (:attr:`agent`) rather than ``tool:<Name>``."""

    agent = ""

    def call_row(self, cached: bool, latency_s: float, *, failed: bool = False) -> Call:
        row = super().call_row(cached, latency_s, failed=failed)
        row.agent = self.agent
        return row


class SearchAgentTool(AgentRows, SearchTool):
    """Google[query] as AgentFact's search agent (Agent-TR) calls it: the toolkit's search tool over the
    run's ``search`` plug-in (:meth:`WebTools.search`: cached by content in the tool store, a ledger row
    per call), its rows under the agent ``agent-tr-search``, its results screened by the run's leakage
    guard and the authors' source filters (:attr:`sources`) and handed back whole."""

    agent = "agent-tr-search"
    sources: SourceFilter = SourceFilter()

    def observe(self, raw: Any, argument: str, case: Case, trace: Any) -> Observed:
        kept = screened(self.guard, self.sources, _results(raw), case.claim_time, trace, argument)
        return Observed("", [r.url for r in kept], results=kept)


class ReverseImageAgentTool(AgentRows, ReverseImageTool):
    """The reverse image search as Agent-IR calls it (the plug-in's ``similar``, uncached): its ledger rows
    ``reverse-image:<backend>`` under the agent ``agent-ir-search``."""

    agent = "agent-ir-search"


class PageTool(AgentRows):
    """Reading a result's page for the summariser (profile ``authors-code``, :meth:`Tools.page_text`): its
    ledger rows ``fetch:page`` under the agent ``agent-tr-fetch``, free."""

    card = ToolCard("Fetch", "url", "Reads the article text of a web page.", ("text",), web=True)
    agent = "agent-tr-fetch"
    cost_usd = 0.0

    def ledger_name(self) -> str:
        return "fetch:page"


class Tools:
    """The search side of a run: the toolkit's search tool (:class:`SearchAgentTool`, from
    :attr:`RunContext.tools`) in its :class:`Toolbox`, the reverse image backend, the tool store, the
    leakage guard, the authors' source filters (off in profile ``paper``) and the page reader (profile
    ``authors-code``). Each call's ledger row is its tool's :meth:`~Tool.call_row` (the search's, the
    reverse image search's :class:`ReverseImageAgentTool`, the page reader's :class:`PageTool`)."""

    def __init__(
        self,
        search: SearchAgentTool,
        image: Any,
        guard: LeakageGuard,
        store: Any = None,
        sources: SourceFilter | None = None,
        pages: PageReader | None = None,
    ) -> None:
        self.image, self.leakage_guard, self.store = image, guard, store
        self.reverse_image = ReverseImageAgentTool(image, guard) if image is not None else None
        """The reverse image search's ledger rows (its backend is :attr:`image`)."""
        self.sources = sources or SourceFilter()
        search.sources = self.sources
        self.toolbox = Toolbox({search.card.name: search}, store)
        self.search_tool = search
        self.pages = pages
        self.page_tool = PageTool()

    async def page_text(self, url: str, snippet: str, chars: int, trace: Trace) -> str:
        """The page behind a result as the authors' summariser reads it (:func:`.pages.article_text`), from
        the search cache when it was read before."""
        from dataclasses import asdict

        from rwpost.evaluate.detectors.agentfact.pages import Page

        assert self.pages is not None
        key = self._cache_key(self.pages, "page", url, chars, None)
        began = time.perf_counter()
        row = self.store.get("search", key) if self.store is not None else None
        cached = row is not None
        if row is None:
            page = await self.pages.read(url)
            row = asdict(page) if page is not None else {}
            if self.store is not None and page is not None:
                self.store.put("search", key, row)
        trace.calls.append(self.page_tool.call_row(cached, 0.0 if cached else time.perf_counter() - began))
        return article_text(Page(**row) if row else None, snippet, chars)

    async def aclose(self) -> None:
        for backend in (self.image, self.pages):
            if backend is not None:
                await backend.aclose()
        await self.toolbox.aclose()  # the search plug-in and the store

    def _cache_key(self, backend: Any, kind: str, payload: str, limit: int, before: date | None) -> str:
        from rwpost.io import sha256_hex

        identity = getattr(backend, "identity", lambda: {"backend": getattr(backend, "name", "page")})()
        return sha256_hex(compact([identity, kind, payload, limit, str(before)], limit=10**9))

    async def search(
        self, query: str, limit: int, claim_time: date | None, trace: Trace
    ) -> list[SearchResult]:
        """Guarded results of ``query`` (``limit`` is the tool's, ``results_per_query``) through the toolkit's
        tool box; a failed search is an empty result, its ledger row marked failed (not cached: the next
        run asks again)."""
        try:
            observed = await self.toolbox.call(
                self.search_tool.card.name, query, Case(key="", news="", claim_time=claim_time), trace
            )
        except ToolFailed as exc:
            trace.calls[-1].failed = True
            trace.errors.append(f"search failed: {exc}")
            return []
        return observed.results

    def guard(
        self, results: list[SearchResult], claim_time: date | None, trace: Trace, query: str
    ) -> list[SearchResult]:
        """``results`` (the reverse image search's pages) as :func:`screened` keeps them."""
        return screened(self.leakage_guard, self.sources, results, claim_time, trace, query)


def _sample_text(sample: Sample) -> dict[str, str]:
    return {
        "claim": sample.claim,
        "post_text": sample.post_text or "(none)",
    }


class Workflow:
    """AgentFact for one sample (a coroutine per sample; the client bounds the calls in flight)."""

    def __init__(
        self,
        agents: Agents,
        tools: Tools | None,
        options: Options,
        labels: Sequence[str],
        post_image: Any = None,
    ) -> None:
        self.agents, self.tools, self.options, self.labels = agents, tools, options, list(labels)
        self.post_image = post_image

    # --- helpers -----------------------------------------------------------------------------------

    async def _ask(
        self,
        trace: Trace,
        agent: str,
        key: str,
        attach: Sequence[Any] = (),
        schema: dict[str, Any] | None = None,
        **values: str,
    ):
        data, error = await self.agents.ask(trace, agent, key, attach, schema=schema, **values)
        if error:
            trace.errors.append(error)
        return data

    async def _match_image(self, trace: Trace, sample: Sample, image_url: str | None, **prompt: str):
        """Agent-IR's comparison of the post's image with an image reverse search found: None where that
        image cannot be fetched or the agent gives no answer."""
        from rwpost.llm import ImageInput

        assert self.tools is not None and self.tools.image is not None
        fetched = await self.tools.image.fetch_image(image_url) if image_url else None
        if not fetched:
            return None
        attach = (self.post_image, ImageInput(data=fetched))
        return await self._ask(trace, "agent-ir-match", sample.id, attach=attach, **prompt)

    def _common(self, sample: Sample) -> dict[str, str]:
        o = self.options
        claim_time = sample.claim_time.isoformat() if sample.claim_time else "unknown"
        return {
            **_sample_text(sample),
            "claim_time": claim_time if o.claim_date_input else "(not given)",
            "ocr": (sample.ocr or "(none)") if o.ocr_input else "(not given)",
        }

    def _images_text(self, trace: Trace) -> str:
        return "\n".join(compact(x, 1500) for x in trace.images) or "(none)"

    # --- agents ------------------------------------------------------------------------------------

    async def plan(self, sample: Sample, trace: Trace, previous: dict[str, Any] | None) -> dict[str, Any]:
        common = self._common(sample)
        data = await self._ask(
            trace,
            "agent-sp",
            sample.id,
            claim=common["claim"],
            claim_time=common["claim_time"],
            post_text=common["post_text"],
            ocr=common["ocr"],
            previous=compact(previous) if previous else "(none)",
            searched="\n".join(f"- {q}" for q in trace.searched) or "(none)",
        )
        plan = data or {"reasoning_steps": [], "validation_list": [], "search_list": []}
        trace.plans.append(plan)
        return plan

    async def retrieve(self, sample: Sample, trace: Trace, item: tuple[str, str]) -> list[EvidenceItem]:
        """One retrieval round (Agent-TR) for a validation sentence or a search-list need."""
        assert self.tools is not None
        kind, text = item
        if kind == "search":
            data = await self._ask(
                trace,
                "agent-tr-query",
                sample.id,
                need=text,
                claim=sample.claim,
                post_text=sample.post_text or "(none)",
                previous="\n".join(f"- {q}" for q in trace.searched) or "(none)",
            )
            queries = [q for q in (data or {}).get("queries", []) if q and q not in trace.searched][:1]
        else:
            queries = [text] if text not in trace.searched else []
        found: list[EvidenceItem] = []
        for query in queries:
            read = await self.search(sample, trace, query)
            if read:
                found += await self.summarise(sample, trace, query, read)
        return found

    async def search(self, sample: Sample, trace: Trace, query: str) -> list[tuple[SearchResult, str]]:
        """Agent-TR's search of ``query`` (kept in ``trace.searched``), cut at the claim date, and the text
        of each result it keeps (:meth:`_distinct`): its page (``scrape_pages``) or its snippet. Both
        profiles retrieve through this."""
        assert self.tools is not None
        o, tools = self.options, self.tools
        trace.searched.append(query)
        results = self._distinct(
            await tools.search(query, o.results_per_query, o.cut(sample.claim_time), trace)
        )
        if not (o.scrape_pages and tools.pages is not None):
            return [(r, r.snippet) for r in results]
        return [(r, await tools.page_text(r.url, r.snippet, o.page_chars, trace)) for r in results]

    def _distinct(self, results: list[SearchResult]) -> list[SearchResult]:
        """The search results the summariser reads (profile ``paper``: all)."""
        return results

    async def _summary(self, sample: Sample, trace: Trace, query: str, **values: str) -> Any:
        """The summariser's answer (Agent-TR) on one query's results, at its own temperature."""
        temperature = self.options.summarise_temperature
        return await self._ask(
            trace, "agent-tr-summarise", sample.id, temperature=temperature, query=query, **values
        )

    async def summarise(
        self, sample: Sample, trace: Trace, query: str, read: list[tuple[SearchResult, str]]
    ) -> list[EvidenceItem]:
        o = self.options
        results = [r for r, _ in read]
        listing = "\n".join(
            f"[{i}] {r.title} ({r.url}{', ' + str(r.published) if r.published else ''}): {text}"
            for i, (r, text) in enumerate(read, start=1)
        )
        data = await self._summary(sample, trace, query, claim=sample.claim, results=listing)
        items: list[EvidenceItem] = []
        for row in (data or {}).get("items", []):
            if o.max_summaries_per_query is not None and len(items) >= o.max_summaries_per_query:
                break
            index = int(row.get("result", 0))
            if row.get("relevant", True) is False or not 1 <= index <= len(results):
                continue
            r = results[index - 1]
            reliability = await self.reliability(sample, trace, r.url)
            if reliability == "factcheck" and self.options.drop_factcheck_sources:
                trace.drop(r.url, "source:factcheck", query=query)
                continue
            evidence_id = f"T{sum(1 for e in trace.pool if e.id.startswith('T')) + len(items) + 1}"
            items.append(
                EvidenceItem(
                    id=evidence_id,
                    content=str(row.get("summary") or r.snippet),
                    url=r.url,
                    title=r.title,
                    reliability=reliability,
                    published=str(r.published) if r.published else None,
                    query=query,
                )
            )
        return items

    async def reliability(self, sample: Sample, trace: Trace, url: str) -> str:
        domain = normalize_domain(url)
        memo = trace.sources
        if domain not in memo:
            data = await self._ask(trace, "agent-tr-source", sample.id, domain=domain, url=url)
            memo[domain] = (data or {}).get("type", "unsure")
        return memo[domain]

    async def analyse_image(self, sample: Sample, trace: Trace) -> None:
        """Agent-IR: reverse image search, matching and tampering, miscaption (open-web, image present)."""
        from rwpost.evaluate.search.http import SearchError

        tools = self.tools
        if tools is None or tools.image is None or self.post_image is None or "ir" in self.options.ablate:
            return
        began = time.perf_counter()
        failed = False
        try:
            matches = await tools.image.similar(self.post_image.data, limit=self.options.image_matches)
        except SearchError as exc:
            trace.errors.append(f"reverse image search failed: {exc}")
            matches, failed = [], True
        assert tools.reverse_image is not None
        trace.calls.append(tools.reverse_image.call_row(False, time.perf_counter() - began, failed=failed))
        pages = [SearchResult(m.page_url, m.page_title) for m in matches]
        cut = self.options.cut(sample.claim_time)
        kept = {r.url for r in tools.guard(pages, cut, trace, "(reverse image search)")}
        for n, match in enumerate((m for m in matches if m.page_url in kept), start=1):
            if match.image_url and tools.leakage_guard.blocklist.blocked_domain(match.image_url):
                continue
            result: dict[str, Any] = {"id": f"I{n}", "page_url": match.page_url, "match": match.match}
            page = {"page_title": match.page_title or "(no title)", "page_url": match.page_url}
            data = await self._match_image(trace, sample, match.image_url, **page)
            if data:
                result["relationship"] = data.get("relationship")
                result["tampering_score"] = as_score(data.get("tampering_probability"))
                result["tampering_reasoning"] = data.get("tampering_reasoning", "")
                if "no close" in str(data.get("relationship", "")).lower():
                    continue
            data = await self._ask(
                trace,
                "agent-ir-miscaption",
                sample.id,
                attach=(self.post_image,),
                claim=sample.claim,
                post_text=sample.post_text or "(none)",
                page_url=match.page_url,
                context=match.page_title or "(no text)",
            )
            if data:
                result["miscaption_score"] = as_score(data.get("Miscaption Rate"))
                result["miscaption_reasoning"] = data.get("Reasoning", "")
            trace.images.append(result)

    async def reason(
        self, sample: Sample, trace: Trace, stage: str, items: Sequence[EvidenceItem], plan: dict[str, Any]
    ) -> dict[str, Any] | None:
        agent = "agent-r-t" if stage == "temporary" else "agent-r-a"
        stage_text = (
            "temporary reasoning over a subset of the evidence: cite in the relevant evidence lists only "
            "the ids that support your reasoning"
            if stage == "temporary"
            else "accumulated reasoning over all the useful evidence found so far"
        )
        common = self._common(sample)
        trace.steps += 1
        data = await self._ask(
            trace,
            agent,
            sample.id,
            stage=stage_text,
            claim=common["claim"],
            claim_time=common["claim_time"],
            post_text=common["post_text"],
            ocr=common["ocr"],
            plan=compact(plan.get("reasoning_steps", []), 3000),
            evidence=evidence_text(items),
            images=self._images_text(trace),
            labels=", ".join(self.labels),
        )
        if data is not None:
            trace.reasoning.append({"stage": stage, **data})
        return data

    async def explain(self, sample: Sample, trace: Trace) -> dict[str, Any] | None:
        common = self._common(sample)
        reasoning = [r for r in trace.reasoning if r["stage"] == "accumulated"][-1:] or trace.reasoning[-1:]
        return await self._ask(
            trace,
            "agent-eg",
            sample.id,
            schema=self.agents.labelled("agent-eg", self.labels),  # the run's label space only
            claim=common["claim"],
            claim_time=common["claim_time"],
            post_text=common["post_text"],
            ocr=common["ocr"],
            evidence=evidence_text(trace.useful),
            images=self._images_text(trace),
            reasoning=compact(reasoning, 6000) if reasoning else "(none)",
            labels=", ".join(self.labels),
        )

    # --- the loop ----------------------------------------------------------------------------------

    def _confident(self, data: dict[str, Any] | None) -> bool:
        if not data:
            return False
        label = as_label(data.get("label"))
        confidence = as_score(data.get("final_sufficiency_confidence"), 0.0) or 0.0
        return (
            label is not None and label is not Label.UNPROVEN and confidence >= self.options.stop_confidence
        )

    async def _review(self, sample: Sample, trace: Trace, plan: dict[str, Any], flush: bool) -> bool:
        """Temporary then accumulated reasoning over the unreviewed part of E_r; True when confident."""
        reviewed = trace.reviewed
        while trace.steps < self.options.max_steps:
            pending = [e for e in trace.pool if e.id not in reviewed]
            if not pending or (len(pending) < self.options.min_pool and not flush):
                return False
            subset = pending[: self.options.subset_size]
            reviewed.update(e.id for e in subset)
            if "rt" in self.options.ablate:  # w/o Agent-R-T: every kept item is useful
                new = [e for e in subset if e not in trace.useful]
            else:
                cited = _cited_ids(await self.reason(sample, trace, "temporary", subset, plan))
                new = [e for e in subset if e.id in cited and e not in trace.useful]
            trace.useful += new
            if not new or trace.steps >= self.options.max_steps:
                continue
            if self._confident(await self.reason(sample, trace, "accumulated", trace.useful, plan)):
                trace.stopped = "confident"
                return True
        trace.stopped = trace.stopped or "max-steps"
        return True

    def _no_plan(self, sample: Sample) -> dict[str, Any]:
        """w/o Agent-SP: no reasoning steps, the claim searched as it is (a validation sentence)."""
        plan = {"reasoning_steps": [], "validation_list": [{"sentence": sample.claim}], "search_list": []}
        return plan

    async def run(self, sample: Sample, evidence: EvidenceSource, trace: Trace) -> Trace:
        """The workflow over ``sample`` recorded in ``trace`` (the run's transcript of the sample:
        :meth:`RunContext.transcript`), which it returns."""
        ablate = self.options.ablate
        image_task = None
        if evidence is EvidenceSource.WEB:
            image_task = asyncio.ensure_future(self.analyse_image(sample, trace))
        plan = self._no_plan(sample) if "sp" in ablate else await self.plan(sample, trace, None)
        if image_task is not None:
            # Agent-IR runs beside planning and is awaited before any reasoning, as the authors' code
            # runs it first: every reasoning prompt (and its cache key) sees its results, whatever the timing
            await image_task
        if evidence is EvidenceSource.GOLD:
            # the authors' open_book: one reasoning over every gold item, which the explanation sees too
            trace.pool = [
                EvidenceItem(f"G{i}", " ".join(x for x in (e.description, e.content) if x), e.url or None)
                for i, e in enumerate(sample.evidence, start=1)
            ]
            trace.useful = list(trace.pool)
            trace.reviewed = {e.id for e in trace.pool}
            if self._confident(await self.reason(sample, trace, "accumulated", trace.useful, plan)):
                trace.stopped = "confident"
        elif evidence is EvidenceSource.WEB and "tr" not in ablate:
            await self._open_web(sample, trace, plan)
        if (
            not any(r["stage"] == "accumulated" for r in trace.reasoning)
            and trace.steps < self.options.max_steps
        ):
            await self.reason(sample, trace, "accumulated", trace.useful, plan)
        trace.stopped = trace.stopped or ("no-evidence" if evidence is EvidenceSource.NONE else "exhausted")
        trace.answer = await self.explain(sample, trace)
        return trace

    async def _open_web(self, sample: Sample, trace: Trace, plan: dict[str, Any]) -> None:
        while True:
            queue = [("validate", str(v.get("sentence", ""))) for v in plan.get("validation_list", [])]
            queue += [("search", str(s.get("information_needed", ""))) for s in plan.get("search_list", [])]
            queue = [(k, t.strip()) for k, t in queue if t.strip() and t.strip() not in trace.searched]
            for item in queue:
                trace.pool += await self.retrieve(sample, trace, item)
                if await self._review(sample, trace, plan, flush=False):
                    return
            if await self._review(sample, trace, plan, flush=True):
                return
            limit = self.options.max_replans
            if "sp" in self.options.ablate or (limit is not None and trace.replans >= limit):
                trace.stopped = "plans-exhausted"
                return
            trace.replans += 1
            previous = trace.reasoning[-1] if trace.reasoning else {"note": "no useful evidence was found"}
            plan = await self.plan(sample, trace, previous)


def _cited_ids(data: dict[str, Any] | None) -> set[str]:
    """The evidence ids a reasoning answer cites in its relevant evidence lists."""
    if not data:
        return set()
    result = data.get("validation_result") or {}
    ids: set[str] = set()
    for step in list(result.get("reasoning_steps") or []) + [result.get("direct_fact_check_evidence") or {}]:
        for key in ("relevant_text_evidence_list", "relevant_image_evidence_list"):
            for value in step.get(key) or []:
                ids.add(str(value).strip().strip("[]"))
    return ids
