"""Profile ``authors-code``: AgentFact as the released ``main_workflow.py`` runs it (``xudanni0927/AgentFact``
at 70223cf), for one sample, through the same agents, tools and ledger as the paper profile.

1. Agent-IR first (open web, image present, unless ablated): reverse image search, the pages read, and per
   page source judgment, image match and tampering, miscaption; items ``evidence_0``, ``evidence_1`` ...
2. A loop of at most ``max_steps`` (10) steps, a step being a plan round's query generation, one search or
   one reasoning call: Agent-SP plans (the last reasoning answer attached on a re-plan); the validation
   sentences are searched as they are and one Agent-TR-1 call turns the whole search list into queries.
   Each query is searched (``gl=us``, ``hl=en``, 10 results, cut at the claim date minus a day, fact-check
   substrings, social media and ``.gov`` removed, titles de-duplicated), its pages read and summarised in
   one call (temperature 0.1), at most 3 summaries kept. Once the batch holds more than one item (or at
   the last query, or near the step limit), temporary reasoning reviews at most 10 of them; the items it
   marks ``is_used`` get a source judgment (one call each) and join the final pool. Stop when the first
   batch's confidence is above 4, or a later one's above 3 (the label test reads ``overall_authenticity``,
   which no prompt asks for, so it passes unless a model volunteers it); more than 5 pooled items make
   the next accumulated reasoning the last. A new plan starts the pool afresh, as theirs.
3. Final reasoning with source judgment over the kept items (all retrieved items of the last plan but the
   last batch's unused ones, as their code computes it), then Agent-EG (retried once when its label or
   confidence cannot be read).

Gold evidence (their ``open_book``): plan, final reasoning over every gold item, explanation over every
gold item. No evidence (``close_book``): plan, final reasoning over none, explanation.

Where the released code cannot run, its evident intent is done and said: the image items' counter starts
at 0 (theirs is never initialised: UnboundLocalError on the first page), accumulated reasoning is the same
reasoning function without the ``agents=``/``rounds=`` arguments it does not take (a TypeError as
published), and Agent-IR's image match runs when a matched image can be fetched (theirs needs an
``img_address`` their search never sets). Their JSON repair with gpt-3.5-turbo is the client's own retry.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rwpost.evaluate.detectors.agentfact.agents import EvidenceItem
from rwpost.evaluate.detectors.agentfact.workflow import Trace, Workflow
from rwpost.evaluate.leakage import SearchResult
from rwpost.evaluate.task import EvidenceSource
from rwpost.records import Sample

_LINK = re.compile(r"Source url:\s*\+\s*(.*?)\s*Article content:", re.DOTALL)
_CONFIDENCE = re.compile(r"'confidence_level':\s*'?\b(\d+)\b'?")
_LABEL = re.compile(r"'3-class_authenticity_label': '([^']+)'")
IMAGE_NOTE = (
    "Because the tampering and miscaption analysis assume the source is reliable, the source_judgment_result "
    "should be considered when drawing the final conclusion."
)


def extract_link(text: str) -> str | None:
    """The URL in an item's ``Source url: + <url>. Article content:`` header (their ``extract_link``)."""
    match = _LINK.search(text)
    return match.group(1).strip().rstrip(".") if match else None


def never_used_ids(answer: dict[str, Any] | None, items: Sequence[dict[str, Any]]) -> set[Any]:
    """The ids of ``items`` no reasoning step nor the direct fact-check evidence marks ``is_used`` (their
    ``extract_never_used_ids``; ids compared as their code compares them, so ``"0"`` is not ``0``)."""
    result = (answer or {}).get("validation_result") or {}
    lists = [step.get("relevant_text_evidence_list") for step in result.get("reasoning_steps") or []]
    lists.append((result.get("direct_fact_check_evidence") or {}).get("relevant_text_evidence_list"))
    used = set()
    for entries in lists:
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            flag = entry.get("is_used")
            if flag is True or (isinstance(flag, str) and "true" in flag.lower()):
                used.add(_hashable(entry.get("id")))
    return {item["id"] for item in items} - used


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | type(None)) else str(value)


def _confidence(answer: dict[str, Any] | None) -> int:
    value = str(((answer or {}).get("validation_result") or {}).get("final_sufficiency_confidence", ""))
    match = re.search(r"\d+", value)
    return int(match.group()) if match else 0


def _unproven(answer: dict[str, Any] | None) -> bool:
    label = ((answer or {}).get("validation_result") or {}).get("overall_authenticity", "")
    return "unproven" in str(label).lower()


def _queries(answer: Any) -> list[str]:
    """Every query of a query-generation answer: their array of ``{"queries": [...]}`` or any object holding
    ``queries`` lists (a JSON-mode server answers an object)."""
    found: list[str] = []
    if isinstance(answer, dict):
        for key, value in answer.items():
            if key == "queries" and isinstance(value, list):
                found += [str(q) for q in value if isinstance(q, str) and q.strip()]
            else:
                found += _queries(value)
    elif isinstance(answer, list):
        for value in answer:
            found += _queries(value)
    return found


class AuthorsWorkflow(Workflow):
    """The released code's loop for one sample (module docstring); a :class:`Workflow` for its helpers."""

    def _post(self, sample: Sample) -> dict[str, str]:
        return {"post_text": sample.post_text or "", "claim": sample.claim}

    def _step(self, trace: Trace) -> None:
        trace.steps += 1

    # --- agents ------------------------------------------------------------------------------------

    async def code_plan(self, sample: Sample, trace: Trace, previous: Any) -> dict[str, Any] | None:
        extra = (
            f"This is the previous reasoning result under your previous plan{previous}" if previous else ""
        )
        data = None
        for _ in range(2):  # their plan is retried once when it lacks the lists
            data = await self._ask(trace, "agent-sp", sample.id, **self._post(sample), previous=extra)
            if data and data.get("search_list") is not None and data.get("validation_list") is not None:
                trace.plans.append(data)
                return data
        return None

    async def code_queries(self, sample: Sample, trace: Trace, search_list: list[Any]) -> list[str]:
        items = "\n".join('{ "Information to search":' + str(item) + "}" for item in search_list if item)
        data = await self._ask(trace, "agent-tr-query", sample.id, **self._post(sample), items=items)
        return _queries(data)

    def _distinct(self, results: list[SearchResult]) -> list[SearchResult]:
        """The results whose title was not seen before (their ``titles_seen``)."""
        seen: set[str] = set()
        unique: list[SearchResult] = []
        for r in results:
            if r.title not in seen:
                seen.add(r.title)
                unique.append(r)
        return unique

    async def code_evidence(self, sample: Sample, trace: Trace, query: str) -> list[str]:
        """One query's evidence (their ``get_evidence`` with one query): ``Title: ... Source url: + <url>.
        Article content: <summary>`` items, at most ``max_summaries_per_query``."""
        import json

        o = self.options
        read = await self.search(sample, trace, query)
        if not read:
            return []
        documents = {str(i): text for i, (_, text) in enumerate(read)}
        headers = {
            str(i): f"Title: {r.title}. Source url: + {r.url}. Article content: "
            for i, (r, _) in enumerate(read)
        }
        data = await self._summary(sample, trace, query, documents=json.dumps(documents))
        items = [
            (headers[key] + (value if isinstance(value, str) else str(value)))[: o.page_chars]
            for key, value in (data or {}).items()
            if value and key in headers
        ]
        limit = o.max_summaries_per_query
        return items[:limit] if limit is not None else items

    async def code_source(self, sample: Sample, trace: Trace, url: str | None) -> dict[str, Any]:
        data = await self._ask(trace, "agent-tr-source", sample.id, url=str(url))
        return {"updated_answer": data} if data else {}

    async def code_reason(
        self, sample: Sample, trace: Trace, agent: str, context: dict[str, Any], images: list[Any]
    ) -> dict[str, Any] | None:
        data = await self._ask(
            trace, agent, sample.id, **self._post(sample), context=str(context), images=str(images)
        )
        stage = {"agent-r-t": "temporary", "agent-r-a": "accumulated", "agent-r-f": "final"}[agent]
        trace.reasoning.append({"stage": stage, **(data or {})})
        return data

    async def code_images(self, sample: Sample, trace: Trace) -> list[dict[str, Any]]:
        """Agent-IR as their ``main_workflow.py`` step 2 means it (module docstring)."""
        from rwpost.evaluate.search.http import SearchError

        tools, o = self.tools, self.options
        if tools is None or tools.image is None or self.post_image is None or "ir" in o.ablate:
            return []
        try:
            matches = await tools.image.similar(self.post_image.data, limit=max(10, o.image_matches))
        except SearchError as exc:
            trace.errors.append(f"reverse image search failed: {exc}")
            return []
        pages = [SearchResult(m.page_url, m.page_title) for m in matches]
        kept = {r.url for r in tools.guard(pages, o.cut(sample.claim_time), trace, "(reverse image search)")}
        out: list[dict[str, Any]] = []
        for match in (m for m in matches if m.page_url in kept):
            if len(out) >= o.image_matches:
                break
            title, body = match.page_title or "", ""
            if tools.pages is not None:
                page = await tools.pages.read(match.page_url)
                if page is None:  # their extract_page_content gives None: the page is skipped
                    continue
                title, body = page.title or title, page.text[:1000]
            source = await self.code_source(sample, trace, match.page_url)
            item: dict[str, Any] = {"source_judgment_result": source.get("updated_answer") or {}}
            data = await self._match_image(trace, sample, match.image_url, **self._post(sample))
            if data:
                item["image_tampering_analysis_result"] = {
                    "tampering_probability": data.get("tampering_probability", ""),
                    "tampering_reasoning": data.get("tampering_reasoning", ""),
                }
            if len(title) > 1 or len(body) > 1:
                data = await self._ask(
                    trace,
                    "agent-ir-miscaption",
                    sample.id,
                    attach=(self.post_image,),
                    **self._post(sample),
                    title=title,
                    body=body,
                )
                if data:
                    item["image_miscaption_analysis_result"] = data
                    item["note"] = IMAGE_NOTE
            out.append({f"evidence_{len(out)}": item})
            trace.images.append({"id": f"evidence_{len(out) - 1}", "page_url": match.page_url, **item})
        return out

    async def code_explain(
        self, sample: Sample, trace: Trace, images: list[Any], pool: list[dict[str, Any]], reasoning: Any
    ) -> dict[str, Any] | None:
        parts = {
            "evidence_part": "The following is the current evidence we have:"
            + str({"information list": pool}),
            "images_part": (
                "The following is the current image analysis result:{'KEY': ImageAnalysis, 'content': "
                + str(images)
            )
            if images
            else "",
            "reasoning_part": (
                "Here is the reasoning process based on current evidence and image analysis result"
                + str(reasoning)
            )
            if reasoning
            else "",
        }
        for _ in range(2):  # their explainer loop: retried when the label or the confidence is unreadable
            data = await self._ask(trace, "agent-eg", sample.id, **self._post(sample), **parts)
            text = str(data).lower() if data else ""
            if data and _CONFIDENCE.search(text) and _LABEL.search(text):
                return data
        return None

    # --- the loop ----------------------------------------------------------------------------------

    async def run(self, sample: Sample, evidence: EvidenceSource, trace: Trace) -> Trace:
        o = self.options
        images = await self.code_images(sample, trace) if evidence is EvidenceSource.WEB else []
        last_answer: dict[str, Any] | None = None  # their sim_validation_result
        previous: Any = ""  # their content_reasoning (the raw result of the last reasoning call)
        record: list[dict[str, Any]] = []  # context_record["information list"]
        never_used: set[Any] = set()
        plan: dict[str, Any] = {}
        stop = False
        while not stop and trace.steps < o.max_steps:
            if "sp" in o.ablate:
                plan = self._no_plan(sample)
            else:
                planned = await self.code_plan(sample, trace, previous)
                if planned is None:
                    break
                plan = planned
            final: list[dict[str, Any]] = []  # context_final_reasoner["information list"], reset per plan
            batch: list[dict[str, Any]] = []  # context_reasoner["information list"]
            record, never_used, next_id = [], set(), 0
            if evidence is EvidenceSource.WEB and "tr" not in o.ablate:
                queries = [str(v["sentence"]) for v in plan.get("validation_list") or [] if "sentence" in v]
                if plan.get("search_list") and "sp" not in o.ablate:
                    queries += await self.code_queries(sample, trace, plan["search_list"])
                self._step(trace)
                for index, query in enumerate(queries):
                    if stop:
                        break
                    if trace.steps < o.max_steps:
                        found = await self.code_evidence(sample, trace, query)
                        self._step(trace)
                        for content in found:
                            item = {"id": next_id, "content": content}
                            batch.append(item)
                            record.append(dict(item))
                            next_id += 1
                    if not (len(batch) > 1 or index > len(queries) - 2 or trace.steps > o.max_steps - 1):
                        continue
                    current, batch = batch[: o.subset_size], batch[o.subset_size :]
                    if "rt" in o.ablate:  # w/o Agent-R-T: every item is used
                        answer, never_used = last_answer, set()
                    else:
                        context = {"strategy": plan, "information list": current}
                        answer = await self.code_reason(sample, trace, "agent-r-t", context, images)
                        previous = {"updated_answer": answer} if answer else {}
                        never_used = never_used_ids(answer, current)
                        self._step(trace)
                    useful = [x for x in current if x["id"] not in never_used]
                    before = len(final)
                    for info in useful:
                        judged = await self.code_source(sample, trace, extract_link(info["content"]))
                        final.append({**info, "source_judgment_result": judged})
                    label_answer = answer  # their predicted_label is read from the batch reasoning
                    first_bar = o.first_stop_confidence or o.stop_confidence
                    if before == 0 and _confidence(answer) >= first_bar and not _unproven(label_answer):
                        last_answer, stop = answer, True
                        break
                    if useful and before > 0:
                        if len(final) > 5:
                            stop = True
                        context = {"strategy": plan, "information list": final}
                        answer = await self.code_reason(sample, trace, "agent-r-a", context, images)
                        previous = {"updated_answer": answer} if answer else {}
                    last_answer = answer
                    self._step(trace)
                    if _confidence(answer) >= o.stop_confidence and not _unproven(label_answer):
                        stop = True
                        break
                    if trace.steps > o.max_steps - 1:
                        stop = True
            elif evidence is EvidenceSource.GOLD:
                record = [
                    {"id": e.id, "content": " ".join(x for x in (e.description, e.content) if x)}
                    for e in sample.evidence
                    if e.content
                ]
                stop = True
            else:
                stop = True
            if not stop and (
                "sp" in o.ablate or (o.max_replans is not None and len(trace.plans) > o.max_replans)
            ):
                break  # w/o Agent-SP there is no new plan; max_replans bounds re-plans when set
        pool = [x for x in record if x["id"] not in never_used] if record else []
        trace.pool = [EvidenceItem(str(x["id"]), x["content"], extract_link(x["content"])) for x in record]
        trace.useful = [EvidenceItem(str(x["id"]), x["content"], extract_link(x["content"])) for x in pool]
        context = {"strategy": plan, "information list": pool}
        final_answer = await self.code_reason(sample, trace, "agent-r-f", context, images)
        self._step(trace)
        trace.stopped = "confident" if stop and evidence is EvidenceSource.WEB else "exhausted"
        if evidence is not EvidenceSource.WEB:
            trace.stopped = "open-book" if evidence is EvidenceSource.GOLD else "no-evidence"
        trace.answer = await self.code_explain(sample, trace, images, pool, final_answer or last_answer)
        return trace


__all__ = ["AuthorsWorkflow", "extract_link", "never_used_ids"]
