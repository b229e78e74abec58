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
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.protocol import Call, Prediction, Setting
from rwpost.labels import MAIN_LABELS, Label
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


def image_input(sample: Sample, image_root: Path | None) -> Any:
    """The sample's image as an :class:`rwpost.llm.ImageInput`, from bytes or a file; None if neither."""
    from rwpost.llm import ImageInput

    if sample.image is None:
        return None
    if sample.image.bytes:
        return ImageInput(data=sample.image.bytes)
    if sample.image.path:
        path = Path(sample.image.path)
        if not path.is_absolute() and image_root is not None:
            path = image_root / path
        if path.is_file():
            return ImageInput.from_path(path)
    return None


def verdict_user_text(prompt: Prompt, sample: Sample, setting: Setting, labels: Sequence[str]) -> str:
    """The user turn of a zero-shot verdict prompt for one sample (API and local VLM detectors)."""
    values = {
        "claim": sample.claim,
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else "unknown",
        "post_text": sample.post_text or "(none)",
        "ocr": sample.ocr or "(none)",
        "evidence": evidence_block(sample) if setting is Setting.GOLD_EVIDENCE else "",
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


class VLMDetector:
    """Asks a vision-language model for a verdict on each post (with its image), zero-shot."""

    name = "vlm"
    retrieves = False
    reads_images = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str = DEFAULT_PROMPT,
        labels: Sequence[str] | None = None,
        cache_path: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 6,
        image_root: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 600,
        seed: int = 0,
    ) -> None:
        from rwpost.llm import LLMSettings, client_from, load_llm_schema

        self.model, self.base_url, self.prompt = model, base_url, prompt
        self.labels = [str(Label(x)) for x in (labels or [str(x) for x in MAIN_LABELS])]
        self.prompt_file = load_prompt(prompt)
        self.schema = task_schema(load_llm_schema(self.prompt_file.schema_name), self.labels)
        self.image_root = Path(image_root) if image_root else None
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.cache_path = cache_path
        settings = LLMSettings(
            model=model,
            base_url=base_url,
            api_key=api_key,
            concurrency=concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
        )
        self.client = client_from(settings, cache_path=cache_path)  # seed: run identity only
        self.images_sent = 0
        self.device = f"remote ({base_url or 'api.openai.com'})"

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "prompt": self.prompt,
            "labels": self.labels,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "cache_path": self.cache_path,
            "seed": self.seed,
        }

    def prompt_hashes(self) -> dict[str, str]:
        return {self.prompt: self.prompt_file.sha256}

    def request(self, sample: Sample, setting: Setting) -> Any:
        """The LLM request for one sample in ``setting``."""
        from rwpost.llm import LLMRequest

        user = verdict_user_text(self.prompt_file, sample, setting, self.labels)
        image = image_input(sample, self.image_root)
        return LLMRequest(
            key=sample.id,
            task=f"detect-{setting}",
            system=self.prompt_file.system,
            user=user,
            schema=self.schema,
            schema_name=self.prompt_file.schema_name,
            prompt_version=self.prompt_file.version,
            images=(image,) if image is not None else (),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )

    def predict(self, samples: Sequence[Sample], setting: Setting) -> list[Prediction]:
        if setting is Setting.OPEN_WEB:
            raise ConfigError("the vlm detector does not search the web: use closed-book or gold-evidence")
        failed = {}
        for s in samples:
            missing = missing_image_prediction(s, image_input(s, self.image_root))
            if missing is not None:
                failed[s.id] = missing
        asked = [s for s in samples if s.id not in failed]
        requests = [self.request(s, setting) for s in asked]
        self.images_sent += sum(bool(r.images) for r in requests)
        began = time.perf_counter()
        results = self.client.run(requests) if requests else []
        latency = (time.perf_counter() - began) / max(len(asked), 1)
        out = list(failed.values())
        for sample, result in zip(asked, results, strict=True):
            call = Call(
                name=self.model,
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
            out.append(verdict_prediction(sample.id, result.data, self.labels, call))
        return out
