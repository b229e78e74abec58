"""The zero-shot vision-language detector, over the API (``vlm``) or a local model folder (``local-vlm``).

One detector over a :class:`~rwpost.llm.chat.ChatModel` (:mod:`rwpost.evaluate.detectors.chat`): ``vlm``
asks an OpenAI-compatible server through the project's client (OpenAI, or a local vLLM / Ollama server
given as ``base_url``); ``local-vlm`` (or ``vlm`` with ``backend=local``) runs a Hugging Face
image-text-to-text model in-process (:class:`~rwpost.llm.local.LocalChatModel`: batched, greedy, bf16 on
CUDA, float32 on CPU; ``static_cache`` compiles with CUDA graphs, see ``benchmarks/local_vlm.py``).

The post image (in the image cells T+I, T+I+E) goes with the claim, post text and OCR; in the evidence
cells the sample's gold evidence items are added as ``[id] content`` lines (AgentFact's T+E: no source,
no URL). Prompts are versioned files read by :func:`rwpost.prompts.load_prompt`
(``rwpost/prompts/detect_zero_shot.v2.md``) whose file hash goes into the manifest; answers must satisfy
the prompt's schema (``schemas/llm/verdict.schema.json``) with its label enum narrowed to the task's
labels (True/False/Unproven, or Mixture/Outdated for the challenging set): any other label is a failed
answer, never scored. An image the sample has but that cannot be loaded or decoded fails the sample
with a reason.

    rwpost evaluate --detector local-vlm --set model=/models/Qwen2-VL-2B-Instruct --batch-size 32 ...
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import PositiveInt, model_validator

from rwpost.errors import ConfigError
from rwpost.evaluate.batch import batch_call
from rwpost.evaluate.contract import (
    Call,
    Capabilities,
    Detector,
    DetectorInputs,
    Prediction,
    PromptName,
    RunContext,
    Temperature,
    Trace,
)
from rwpost.evaluate.detectors.chat import ChatOptions
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.evaluate.toolkit.ask import prompt_request
from rwpost.evaluate.toolkit.cases import evidence_block, missing_image_prediction
from rwpost.labels import Label
from rwpost.llm.chat import ChatModel
from rwpost.prompts import Prompt, load_prompt
from rwpost.records import Sample

DEFAULT_PROMPT = "detect_zero_shot.v2"

AUTHORS_BASELINE = "authors-baseline"
"""``--set prompt=authors-baseline``: the AgentFact authors' baseline prompts (``baseline_lvlms/prompts``):
without evidence in T and T+I, with it in T+E and T+I+E; only the given inputs may be used (no outside
knowledge), no claim date, no OCR, labels TRUE / FALSE / UNPROVEN and a 1-5 confidence."""
BASELINE_PROMPTS = {False: "agentfact_baseline_no_evi.v1", True: "agentfact_baseline_evi.v1"}

LABEL_DEFINITIONS: dict[Label, str] = {
    Label.TRUE: "the claim is accurate.",
    Label.FALSE: "the claim is inaccurate, fabricated, or the image is miscaptioned or altered.",
    Label.UNPROVEN: "there is not enough evidence to decide.",
    Label.MIXTURE: "the claim has significant elements of both truth and falsity.",
    Label.OUTDATED: "the claim was once accurate but is no longer.",
}
"""One line per label, as the prompt defines it; only the task's labels are shown."""


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


def baseline_user_text(prompt: Prompt, sample: Sample, cell: Cell) -> str:
    """The user turn of the authors' baseline prompt, filled as their ``build_prompt`` fills it (evidence as
    ``[id] content`` lines in the order given, ``(none provided)`` without)."""
    evidence = "\n".join(f"[{e.id}] {e.content}" for e in sample.evidence if e.content) or "(none provided)"
    values = {
        "claim": sample.claim or "",
        "post_context": sample.post_text or "",
        "image_if_any": "(see attached image)" if cell.image else "(no image provided)",
        "evidence_items": evidence,
    }
    return prompt.render_user(**{k: v for k, v in values.items() if k in prompt.slots})


def baseline_verdict(data: dict[str, Any]) -> dict[str, Any]:
    """The authors' baseline answer as a verdict: ``label_3class`` TRUE -> True, confidence 1-5 -> 0.2-1,
    ``reasoning_logic`` as the explanation."""
    label = str(data.get("label_3class") or "").strip().capitalize()
    match = re.search(r"[1-5]", str(data.get("confidence_level") or ""))
    return {
        "label": label,
        "confidence": int(match.group()) / 5 if match else 1.0,
        "explanation": data.get("reasoning_logic"),
        "evidence_urls": [],
    }


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

    class Config(ChatOptions):
        prompt: PromptName = DEFAULT_PROMPT
        temperature: Temperature = 0.0
        max_tokens: PositiveInt | None = 600
        max_new_tokens: PositiveInt = 384
        """The longest answer of a local model (``max_tokens`` is the API's)."""

        @model_validator(mode="after")
        def _api_options_need_the_api(self) -> VLMDetector.Config:
            given = sorted({"cache_path", "temperature", "max_tokens"} & self.model_fields_set)
            if self.local and given:
                raise ValueError(f"backend=local reads no {', '.join(given)} (a local model is greedy)")
            return self

    def __init__(self, config: Config) -> None:
        from rwpost.llm import load_llm_schema

        super().__init__(config)
        baseline = config.prompt == AUTHORS_BASELINE
        self.prompt_files = {k: load_prompt(v) for k, v in BASELINE_PROMPTS.items()} if baseline else {}
        self.prompt_file = self.prompt_files[False] if baseline else load_prompt(config.prompt)
        self.schema = load_llm_schema(self.prompt_file.schema_name)
        self.model: ChatModel | None = None
        self.device = config.remote_device()
        if config.local:  # loaded now: a folder that is no vision model is refused up front
            try:
                self.model = config.chat_model({}, vision=True)
            except ConfigError as exc:
                raise ConfigError(f"{self.name}: {str(exc).removeprefix('local model: ')}") from None
            self.device = self.model.device
            self.capabilities = Capabilities(reads_images=True, uses_gpu=True)

    def config(self) -> dict[str, Any]:
        o = self.options
        if o.local:
            kept = ("model", "model_path", "model_type", "dtype", "max_new_tokens", "static_cache")
            local = self.model.config()
            return {k: local[k] for k in kept} | {"prompt": o.prompt, "decoding": "greedy"}
        return {
            "model": o.llm.model,
            "base_url": o.llm.base_url,
            "prompt": o.prompt,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
            "cache_path": o.cache_path,
        }

    def inputs(self) -> DetectorInputs:
        if self.prompt_files:
            return DetectorInputs(prompts={p.name: p.sha256 for p in self.prompt_files.values()})
        return DetectorInputs(prompts={self.options.prompt: self.prompt_file.sha256})

    def prepare(self, ctx: RunContext) -> None:
        self.chat_model(ctx)  # an API model without a key or a server is refused here

    def chat_model(self, ctx: RunContext) -> ChatModel:
        """The model asked: the local one loaded at build, or the API client with the run's key."""
        if self.model is None:
            self.model = ctx.model(self.options, vision=True)
        return self.model

    def request(self, sample: Sample, task: EvalTask, image: Any) -> Any:
        """The model request for one sample of ``task`` (with ``image``, if any)."""
        labels = task.label_names
        prompt = self.prompt_file
        if self.prompt_files:  # the authors' baseline: their prompt of the cell, their answer schema
            prompt = self.prompt_files[task.cell.evidence is EvidenceSource.GOLD]
            user, schema = baseline_user_text(prompt, sample, task.cell), self.schema
        else:
            user, schema = (
                verdict_user_text(prompt, sample, task.cell, labels),
                task_schema(self.schema, labels),
            )
        return prompt_request(
            prompt,
            sample.id,
            task=f"detect-{task.cell.slug}",
            user=user,
            schema=schema,
            images=(image,),
            temperature=self.options.temperature,
            max_tokens=self.options.answer_limit(self.options.max_tokens),  # local: max_new_tokens bounds it
        )

    def prediction(
        self, request: Any, result: Any, labels: Sequence[str], share_s: float, trace: Trace
    ) -> Prediction:
        """The prediction of the answer to ``request``. Its ledger row, recorded in ``trace`` (the sample's
        transcript, which counts the image the request carried): a local model's share of its batch's wall
        time at no cost, or an API call's share of the concurrent calls' wall time (0 for a cache hit),
        priced by the run's table."""
        sample_id = request.key
        error = result.error or "no answer"
        if error.startswith("image unreadable"):  # refused before any model call
            return Prediction(id=sample_id, error=error)
        local = self.options.local
        call = trace.answered(
            result,
            self.model.name if self.model is not None else self.options.llm.model,
            images=len(request.images),
            latency_s=result.latency_s if local else 0.0 if result.cached else share_s,
            cost_usd=0.0 if local else None,
        )
        if result.ok and result.data is not None:
            data = baseline_verdict(result.data) if self.prompt_files else result.data
            return verdict_prediction(sample_id, data, labels, call)
        if not error.startswith("generation failed"):
            error = f"model answer rejected: {error.removeprefix('invalid answer: ')}"
        return Prediction(id=sample_id, calls=[call], error=error)

    def _requests(
        self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext
    ) -> tuple[dict[str, Prediction], list[Any]]:
        """The failed predictions of samples whose image cannot be read, and the requests of the rest."""
        refuse_open_web(self.name, task)
        out, requests = {}, []
        for s in samples:
            image = ctx.image(s)
            missing = missing_image_prediction(s, image)
            if missing is not None:
                out[s.id] = missing
            else:
                requests.append(self.request(s, task, image))
        return out, requests

    def batch_requests(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Any]:
        """The requests :meth:`predict` sends for ``samples`` (``--batch-api`` answers them first)."""
        return self._requests(samples, task, ctx)[1]

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        out, requests = self._requests(samples, task, ctx)
        model = self.chat_model(ctx)
        began = time.perf_counter()
        results = model.run(requests) if requests else []
        share = (time.perf_counter() - began) / max(len(requests), 1)
        batch = getattr(self, "batch", None)  # --batch-api: the calls its batch answered, at its rate
        for request, result in zip(requests, results, strict=True):
            trace = ctx.transcript(request.key)
            prediction = self.prediction(request, result, task.label_names, share, trace)
            if batch is not None and prediction.calls:
                trace.calls[:] = [batch_call(c, result.cache_key, batch, ctx.prices) for c in trace.calls]
                prediction = prediction.model_copy(update={"calls": list(trace.calls)})
            out[request.key] = prediction
        return [out[s.id] for s in samples]


class LocalVLMDetector(VLMDetector):
    """``vlm`` over a local model folder (``model``), run in-process with ``transformers``."""

    name = "local-vlm"
    capabilities = Capabilities(reads_images=True, uses_gpu=True)

    class Config(VLMDetector.Config):
        backend: Literal["local"] = "local"
