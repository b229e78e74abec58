"""The five AgentFact agents (paper section IV-B) as calls of one chat model (:class:`~rwpost.llm.ChatModel`).

Each agent is one versioned prompt file with its answer schema: ``rwpost/prompts/agentfact_*.md`` (the
appendix's wording, profile ``paper``) or ``agentfact_code_*.md`` (the authors' released prompts, profile
``authors-code``); every call becomes a :class:`~rwpost.evaluate.contract.Call` named by the model and
tagged with the agent (``name="gpt-4o-mini", agent="agent-sp"``) in the sample's transcript, asked and
recorded by the toolkit's :class:`~rwpost.evaluate.toolkit.ask.Asker` as every agentic detector's calls,
so the runner's price table prices it as any model call (a local model's cost nothing) and the ledger's
``by_agent`` splits calls, tokens, cache hits and cost by agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rwpost.evaluate.contract import Trace
from rwpost.evaluate.toolkit.ask import Asker
from rwpost.evaluate.toolkit.ask import prompt_hashes as toolkit_prompt_hashes
from rwpost.labels import Label
from rwpost.llm.chat import ChatModel
from rwpost.prompts import Prompt, load_prompt

PROMPTS: dict[str, str] = {
    "agent-sp": "agentfact_plan.v1",
    "agent-tr-query": "agentfact_query.v1",
    "agent-tr-summarise": "agentfact_summarise.v1",
    "agent-tr-source": "agentfact_source.v1",
    "agent-ir-match": "agentfact_image_match.v2",
    "agent-ir-miscaption": "agentfact_miscaption.v2",
    "agent-r-t": "agentfact_reason.v1",
    "agent-r-a": "agentfact_reason.v1",
    "agent-eg": "agentfact_explain.v2",
}
"""The prompt file of each agent in profile ``paper`` (temporary and accumulated reasoning share one)."""

CODE_PROMPTS: dict[str, str] = {
    "agent-sp": "agentfact_code_plan.v1",
    "agent-tr-query": "agentfact_code_query.v1",
    "agent-tr-summarise": "agentfact_code_extract.v1",
    "agent-tr-source": "agentfact_code_source.v1",
    "agent-ir-match": "agentfact_code_image_match.v1",
    "agent-ir-miscaption": "agentfact_code_miscaption.v1",
    "agent-r-t": "agentfact_code_reason.v1",
    "agent-r-a": "agentfact_code_reason.v1",
    "agent-r-f": "agentfact_code_final_reason.v1",
    "agent-eg": "agentfact_code_explain.v1",
}
"""The prompt file of each agent in profile ``authors-code``: the functions of their ``agent_model.py``
(``agent-r-f`` is their final reasoning with source judgment)."""

PROFILE_PROMPTS = {"paper": PROMPTS, "authors-code": CODE_PROMPTS}


def prompt_hashes(profile: str = "paper") -> dict[str, str]:
    """The hash of every prompt file the profile's agents use, by prompt name (for the run identity)."""
    return toolkit_prompt_hashes(list(dict.fromkeys(PROFILE_PROMPTS[profile].values())))


RELIABILITY = ("reliable", "unreliable", "satire", "unsure", "factcheck")


@dataclass
class EvidenceItem:
    """One item of the evidence pool: a summarised search result or a gold evidence item."""

    id: str
    content: str
    url: str | None = None
    title: str = ""
    reliability: str | None = None
    published: str | None = None
    query: str | None = None

    def line(self) -> str:
        source = "; ".join(x for x in (self.reliability, self.url, self.published) if x)
        return f"[{self.id}] ({source or 'gold evidence'}) {self.content}"


def evidence_text(items: Sequence[EvidenceItem]) -> str:
    return "\n".join(item.line() for item in items) or "(none)"


def as_label(text: str | None) -> Label | None:
    """``TRUE`` / ``true`` / ``True`` -> :class:`Label`; None for anything else."""
    value = (text or "").strip().lower()
    for label in Label:
        if label.value.lower() == value:
            return label
    return None


def as_score(value: Any, default: float | None = None) -> float | None:
    """A number from a score field (``4``, ``"4"``, ``"80%"``); ``default`` when empty or unreadable."""
    if isinstance(value, int | float):
        return float(value)
    match = re.search(r"\d+(?:\.\d+)?", str(value or ""))
    return float(match.group()) if match else default


def compact(data: Any, limit: int = 4000) -> str:
    """JSON of an earlier answer for a later prompt, cut to ``limit`` characters. Keys are sorted: an
    answer read back from the cache must render the same prompt (and cache key) as a fresh one."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


VERDICT_KEY = "3-class_authenticity_label"
"""The explanation's verdict field (the authors' name; it holds the 5 labels on the challenging split)."""


class Agents:
    """The agents' calls through one chat model, by the toolkit's
    :class:`~rwpost.evaluate.toolkit.ask.Asker` (task ``agentfact``; a local model's answers cost nothing):
    the API client (cache, concurrency, retries and token counts are its job) or a local model folder
    (which batches the calls that arrive together). The prompts and answer schemas are the profile's."""

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = 1200,
        profile: str = "paper",
    ) -> None:
        from rwpost.llm import load_llm_schema

        self.asker = Asker(model, task="agentfact", temperature=temperature, max_tokens=max_tokens)
        """``temperature`` None: the server's default (not sent), as the authors' code calls the API."""
        self.prompts: dict[str, Prompt] = {
            agent: load_prompt(name) for agent, name in PROFILE_PROMPTS[profile].items()
        }
        self.schemas = {p.schema_name: load_llm_schema(p.schema_name) for p in self.prompts.values()}

    @property
    def model(self) -> ChatModel:
        return self.asker.model

    def labelled(self, agent: str, labels: Sequence[str]) -> dict[str, Any]:
        """``agent``'s answer schema with the verdict's enum (``validation_result`` ->
        ``3-class_authenticity_label``) narrowed to ``labels``, each as written, upper and lower case (the
        run's label space: Outdated or Mixture cannot be answered on the 3-class main split); a schema
        without that enum (the authors-code profile's any object) as it is."""
        schema = self.schemas[self.prompts[agent].schema_name]
        result = schema.get("properties", {}).get("validation_result") or {}
        verdict = result.get("properties", {}).get(VERDICT_KEY)
        if not verdict or "enum" not in verdict:
            return schema
        enum = list(dict.fromkeys(v for x in labels for v in (x, x.upper(), x.lower())))
        narrowed = {**result, "properties": {**result["properties"], VERDICT_KEY: {**verdict, "enum": enum}}}
        return {**schema, "properties": {**schema["properties"], "validation_result": narrowed}}

    async def ask(
        self,
        trace: Trace,
        agent: str,
        key: str,
        attach: Sequence[Any] = (),
        temperature: float | None | str = "default",
        schema: dict[str, Any] | None = None,
        **values: str,
    ) -> tuple[dict[str, Any] | None, str | None]:
        """One agent call, its ledger row recorded in ``trace``: ``(answer or None, why there is none)``;
        ``temperature`` other than ``"default"`` overrides the agents' one (the authors summarise at 0.1);
        ``schema``, when given, replaces the prompt's answer schema (a narrowed copy of it). A failed call
        leaves the agent without an answer: the workflow goes on (no outage stops the sample)."""
        prompt = self.prompts[agent]  # (its values may hold an "images" text: the attachments are apart)
        request = self.asker.request(
            prompt,
            key,
            agent=agent,
            images=attach,
            schema=schema or self.schemas[prompt.schema_name],
            temperature=temperature,
            fill=values,
        )
        result = await self.asker.complete(request, agent, trace)
        if not result.ok or result.data is None:
            return None, f"{agent}: {result.error}"
        return result.data, None
