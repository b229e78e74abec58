"""Zero-shot vision-language detector through the project's OpenAI-compatible client (``rwpost.llm``).

The post image goes with the claim, post text and OCR; in the ``gold-evidence`` setting the sample's
gold evidence items are added (the paper's evidence ablation). Prompts are versioned files read by
:func:`rwpost.prompts.load_prompt` (``rwpost/prompts/detect_zero_shot.v1.md``) whose file hash goes
into the manifest; answers must satisfy the prompt's schema (``schemas/llm/verdict.schema.json``).
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

DEFAULT_PROMPT = "detect_zero_shot.v1"


def evidence_block(sample: Sample, max_chars: int = 6000) -> str:
    """The gold evidence items as numbered text (empty when the sample has none)."""
    if not sample.evidence:
        return ""
    lines = ["Evidence items:"]
    for i, e in enumerate(sample.evidence, start=1):
        body = " ".join(x for x in (e.description, e.content) if x)
        source = (
            f" (source: {e.source}; {e.url})" if e.url else (f" (source: {e.source})" if e.source else "")
        )
        lines.append(f"[{i}] {e.type}: {body}{source}")
    return "\n".join(lines)[:max_chars] + "\n"


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
    return prompt.render_user(
        claim=sample.claim,
        claim_time=sample.claim_time.isoformat() if sample.claim_time else "unknown",
        post_text=sample.post_text or "(none)",
        ocr=sample.ocr or "(none)",
        evidence=evidence_block(sample) if setting is Setting.GOLD_EVIDENCE else "",
        labels=", ".join(labels),
    )


def verdict_prediction(sample_id: str, data: dict[str, Any], labels: Sequence[str], call: Call) -> Prediction:
    """A prediction from a schema-valid verdict: the label gets the stated confidence, the other
    labels share the rest evenly (for ROC-AUC and calibration)."""
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
        self.schema = load_llm_schema(self.prompt_file.schema_name)
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
        requests = [self.request(s, setting) for s in samples]
        self.images_sent += sum(bool(r.images) for r in requests)
        began = time.perf_counter()
        results = self.client.run(requests)
        latency = (time.perf_counter() - began) / max(len(samples), 1)
        out = []
        for sample, result in zip(samples, results, strict=True):
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
