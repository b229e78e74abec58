"""``--detector agentfact``: the RW-Post paper's multi-agent fact-checker inside the evaluation runner."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rwpost.evaluate.detectors.agentfact.agents import Agents, as_label, as_score
from rwpost.evaluate.detectors.agentfact.workflow import DROPPED, Options, Tools, Trace, Workflow
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.protocol import Prediction, Setting
from rwpost.labels import MAIN_LABELS, Label
from rwpost.records import Sample

_POINT_IDS = re.compile(r"\b([TGI]\d+)\b")


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
        ids = ids or _POINT_IDS.findall(text)
        cited += [i for i in ids if i not in cited]
        lines.append(f"- {text}" + (f" [{', '.join(ids)}]" if ids else ""))
    return "\n".join(x for x in lines if x), cited


class AgentFactDetector:
    """AgentFact (paper section IV): planning, retrieval, image analysis, dual reasoning, explanation.

    Settings: ``open-web`` searches through the ``search`` backend (and ``image_search`` for the post
    image), every result through the leakage guard (``blocklist``: the runner passes the run's, so
    ``rwpost evaluate --blocked-domains`` reaches the search); ``gold-evidence`` reasons over the gold
    evidence (the authors' ``open_book``); ``closed-book`` over none. Thresholds default to the paper's.
    """

    name = "agentfact"
    retrieves = True
    reads_images = False

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        cache_path: str | None = None,
        search_cache_path: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 6,
        temperature: float = 0.0,
        max_tokens: int | None = 1200,
        labels: Sequence[str] | None = None,
        image_root: str | None = None,
        search: str = "serper",
        search_options: dict[str, Any] | None = None,
        image_search: str | None = None,
        image_search_options: dict[str, Any] | None = None,
        blocklist: BlockList | None = None,
        min_pool: int = 3,
        subset_size: int = 5,
        stop_confidence: int = 4,
        max_steps: int = 12,
        max_replans: int = 2,
        results_per_query: int = 5,
        image_matches: int = 3,
        drop_factcheck_sources: bool = True,
        seed: int = 0,
    ) -> None:
        from rwpost.llm import LLMSettings, client_from

        # the key comes from the edge (`rwpost evaluate` and the evaluate stage pass it as a secret, read by
        # rwpost.llm.config.detector_secrets_from_env), never from the environment here
        self.model, self.base_url, self.cache_path = model, base_url, cache_path
        self.search_cache_path = search_cache_path or cache_path
        self.labels = [str(Label(x)) for x in (labels or [str(x) for x in MAIN_LABELS])]
        self.image_root = Path(image_root) if image_root else None
        self.search_name, self.search_options = search, dict(search_options or {})
        self.image_search_name, self.image_search_options = image_search, dict(image_search_options or {})
        self.seed = seed
        self.temperature, self.max_tokens = temperature, max_tokens
        self.options = Options(
            min_pool=min_pool,
            subset_size=subset_size,
            stop_confidence=stop_confidence,
            max_steps=max_steps,
            max_replans=max_replans,
            results_per_query=results_per_query,
            image_matches=image_matches,
            drop_factcheck_sources=drop_factcheck_sources,
        )
        settings = LLMSettings(
            model=model,
            base_url=base_url,
            api_key=api_key,
            concurrency=concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
        )
        self.client = client_from(settings, cache_path=cache_path)
        self.agents = Agents(self.client, model, temperature=temperature, max_tokens=max_tokens)
        self.blocklist = blocklist or BlockList()
        self.device = f"remote ({base_url or 'api.openai.com'})"
        self.traces: dict[str, Trace] = {}
        self.images_sent = 0

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "cache_path": self.cache_path,
            "labels": self.labels,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "search": self.search_name,
            "search_options": self.search_options,
            "image_search": self.image_search_name,
            "image_search_options": self.image_search_options,
            "seed": self.seed,
            **asdict(self.options),
        }

    def prompt_hashes(self) -> dict[str, str]:
        return self.agents.prompt_hashes()

    def leakage_report(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """What the leakage guard dropped before any agent saw it, over ``predictions`` (every answer of
        the run, resumed ones too): counted from the ``leakage-guard:dropped:<reason>`` rows of their
        ledgers, by reason (``blocked:<domain>``, ``after-claim-time``, ``source:factcheck``)."""
        per_sample = [
            Counter(c.name.removeprefix(DROPPED) for c in p.calls if c.name.startswith(DROPPED))
            for p in predictions
        ]
        reasons = sum(per_sample, Counter())
        return {
            "block_list": self.blocklist.describe(),
            "predictions": len(predictions),
            "predictions_with_drops": sum(1 for c in per_sample if c),
            "dropped": sum(reasons.values()),
            "by_reason": dict(sorted(reasons.items())),
        }

    # --- prediction ------------------------------------------------------------------------------------

    def _tools(self, setting: Setting) -> Tools | None:
        if setting is not Setting.OPEN_WEB:
            return None
        from rwpost.cache import SqliteStore
        from rwpost.evaluate.search import make_backend

        text = make_backend(self.search_name, self.search_options)
        image = (
            make_backend(self.image_search_name, self.image_search_options)
            if self.image_search_name
            else None
        )
        store = SqliteStore(self.search_cache_path) if self.search_cache_path else None
        return Tools(text, image, self.blocklist, store)

    def predict(self, samples: Sequence[Sample], setting: Setting) -> list[Prediction]:
        return asyncio.run(self._predict(samples, setting))

    async def _predict(self, samples: Sequence[Sample], setting: Setting) -> list[Prediction]:
        from rwpost.evaluate.detectors.vlm import image_input

        tools = self._tools(setting)
        try:
            runs = []
            for sample in samples:
                image = image_input(sample, self.image_root) if setting is Setting.OPEN_WEB else None
                self.images_sent += int(image is not None and tools is not None and tools.image is not None)
                workflow = Workflow(self.agents, tools, self.options, self.labels, post_image=image)
                runs.append(workflow.run(sample, setting))
            traces = await asyncio.gather(*runs)
        finally:
            await self.client.aclose()
            if tools is not None:
                for backend in (tools.text, tools.image):
                    if backend is not None:
                        await backend.aclose()
                if tools.store is not None:
                    tools.store.close()
        out = []
        for sample, trace in zip(samples, traces, strict=True):
            self.traces[sample.id] = trace
            out.append(self.prediction(sample.id, trace))
        return out

    def prediction(self, sample_id: str, trace: Trace) -> Prediction:
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
        others = [Label(x) for x in self.labels if x != label]
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
