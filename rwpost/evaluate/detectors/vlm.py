"""Zero-shot vision-language detector through the project's OpenAI-compatible client (``rwpost.llm``).

The post image (in the image cells T+I, T+I+E) goes with the claim, post text and OCR; in the evidence
cells the sample's gold evidence items are added as ``[id] content`` lines (AgentFact's T+E: no source,
no URL). Prompts are versioned files read by :func:`rwpost.prompts.load_prompt`
(``rwpost/prompts/detect_zero_shot.v2.md``) whose file hash goes into the manifest; answers must satisfy
the prompt's schema (``schemas/llm/verdict.schema.json``) with its label enum narrowed to the task's
labels (True/False/Unproven, or Mixture/Outdated for the challenging set): any other label is a failed
answer, never scored. An image the sample has but that cannot be loaded fails the sample with a reason.
Works with OpenAI, or a local vLLM / Ollama server given as ``base_url``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pydantic import PositiveInt

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import (
    Call,
    Capabilities,
    Detector,
    DetectorInputs,
    ModelOptions,
    Prediction,
    RunContext,
)
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.labels import Label
from rwpost.prompts import Prompt, load_prompt
from rwpost.records import Sample

DEFAULT_PROMPT = "detect_zero_shot.v2"

LABEL_DEFINITIONS: dict[Label, str] = {
    Label.TRUE: "the claim is accurate.",
    Label.FALSE: "the claim is inaccurate, fabricated, or the image is miscaptioned or altered.",
    Label.UNPROVEN: "there is not enough evidence to decide.",
    Label.MIXTURE: "the claim has significant elements of both truth and falsity.",
    Label.OUTDATED: "the claim was once accurate but is no longer.",
}
"""One line per label, as the prompt defines it; only the task's labels are shown."""


def evidence_block(sample: Sample, max_chars: int = 6000) -> str:
    """The gold evidence items as ``[id] content`` lines, content only (empty when there are none)."""
    lines = [f"[{e.id}] {e.content}" for e in sample.evidence if e.content]
    if not lines:
        return ""
    return "\n".join(["Evidence items:", *lines])[:max_chars] + "\n"


def task_schema(schema: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """The verdict schema with its label enum narrowed to the task's ``labels``."""
    properties = dict(schema["properties"])
    properties["label"] = {**properties["label"], "enum": list(labels)}
    return {**schema, "properties": properties}


def verdict_user_text(prompt: Prompt, sample: Sample, cell: Cell, labels: Sequence[str]) -> str:
    """The user turn of a zero-shot verdict prompt for one sample (API and local VLM detectors)."""
    values = {
        "claim": sample.claim,
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else "unknown",
        "post_text": sample.post_text or "(none)",
        "ocr": sample.ocr or "(none)",
        "evidence": evidence_block(sample) if cell.evidence is EvidenceSource.GOLD else "",
        "labels": ", ".join(labels),
        "label_definitions": "\n".join(f"- {x}: {LABEL_DEFINITIONS[Label(x)]}" for x in labels),
    }
    return prompt.render_user(**{k: v for k, v in values.items() if k in prompt.slots})


def missing_image_prediction(sample: Sample, image: Any, call: Call | None = None) -> Prediction | None:
    """A failed prediction when the sample has an image that could not be loaded (never sent without)."""
    if sample.image is None or image is not None:
        return None
    return Prediction(
        id=sample.id,
        calls=[call] if call else [],
        error="image missing: the sample has an image but neither its bytes nor its file could be read",
    )


def verdict_prediction(sample_id: str, data: dict[str, Any], labels: Sequence[str], call: Call) -> Prediction:
    """A prediction from a schema-valid verdict: the label gets the stated confidence, the other
    labels share the rest evenly (for ROC-AUC and calibration)."""
    if data.get("label") not in labels:
        return Prediction(
            id=sample_id,
            calls=[call],
            error=f"model answer rejected: label {data.get('label')!r} is not one of {', '.join(labels)}",
        )
    label = Label(data["label"])
    confidence = float(data.get("confidence", 1.0))
    others = [Label(x) for x in labels if x != label]
    probabilities = {label: confidence} | {x: (1.0 - confidence) / max(len(others), 1) for x in others}
    return Prediction(
        id=sample_id,
        label=label,
        probabilities=probabilities,
        explanation=data.get("explanation"),
        evidence_urls=list(data.get("evidence_urls") or []),
        calls=[call],
    )


def refuse_open_web(name: str, task: EvalTask) -> None:
    """A ConfigError when a zero-shot detector (which does not search) is asked for an open-web cell."""
    if task.cell.evidence is EvidenceSource.WEB:
        raise ConfigError(f"the {name} detector does not search the web: use T, T+I, T+E or T+I+E")


class VLMDetector(Detector):
    """Asks a vision-language model for a verdict on each post (with its image), zero-shot."""

    name = "vlm"
    capabilities = Capabilities(reads_images=True)

    class Config(ModelOptions):
        prompt: str = DEFAULT_PROMPT
        cache_path: str | None = None
        """The sqlite answer cache; None: no cache."""
        temperature: float = 0.0
        max_tokens: PositiveInt | None = 600

    def __init__(self, config: Config) -> None:
        from rwpost.llm import load_llm_schema

        super().__init__(config)
        self.prompt_file = load_prompt(config.prompt)
        self.schema = load_llm_schema(self.prompt_file.schema_name)
        self.device = f"remote ({config.llm.base_url or 'api.openai.com'})"
        self._client: Any = None

    def config(self) -> dict[str, Any]:
        o = self.options
        return {
            "model": o.llm.model,
            "base_url": o.llm.base_url,
            "prompt": o.prompt,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
            "cache_path": o.cache_path,
        }

    def inputs(self) -> DetectorInputs:
        return DetectorInputs(prompts={self.options.prompt: self.prompt_file.sha256})

    def client(self, ctx: RunContext) -> Any:
        """The LLM client, built on first use with the run's API key."""
        from rwpost.llm import client_from

        if self._client is None:
            self._client = client_from(
                self.options.connection(ctx.secrets), cache_path=self.options.cache_path
            )
        return self._client

    def request(self, sample: Sample, task: EvalTask, image: Any) -> Any:
        """The LLM request for one sample of ``task`` (with ``image``, if any)."""
        from rwpost.llm import LLMRequest

        labels = task.label_names
        return LLMRequest(
            key=sample.id,
            task=f"detect-{task.cell.slug}",
            system=self.prompt_file.system,
            user=verdict_user_text(self.prompt_file, sample, task.cell, labels),
            schema=task_schema(self.schema, labels),
            schema_name=self.prompt_file.schema_name,
            prompt_version=self.prompt_file.version,
            images=(image,) if image is not None else (),
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
        )

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        refuse_open_web(self.name, task)
        failed, requests, asked = {}, [], []
        for s in samples:
            image = ctx.image(s)
            missing = missing_image_prediction(s, image)
            if missing is not None:
                failed[s.id] = missing
            else:
                asked.append(s)
                requests.append(self.request(s, task, image))
        ctx.sent_images(sum(bool(r.images) for r in requests))
        began = time.perf_counter()
        results = self.client(ctx).run(requests) if requests else []
        latency = (time.perf_counter() - began) / max(len(asked), 1)
        out = list(failed.values())
        for sample, result in zip(asked, results, strict=True):
            call = Call(
                name=self.options.llm.model,
                tokens_in=result.prompt_tokens,
                tokens_out=result.completion_tokens,
                latency_s=0.0 if result.cached else latency,
                cached=result.cached,
            )
            if not result.ok or result.data is None:
                out.append(
                    Prediction(id=sample.id, calls=[call], error=f"model answer rejected: {result.error}")
                )
                continue
            out.append(verdict_prediction(sample.id, result.data, task.label_names, call))
        return out
