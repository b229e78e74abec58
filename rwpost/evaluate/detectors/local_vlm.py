"""Zero-shot vision-language detector run in-process from a local Hugging Face model folder.

The same prompts and answer schema as the API detector (:mod:`rwpost.evaluate.detectors.vlm`), but the
model is loaded with ``transformers`` (``AutoProcessor`` + ``AutoModelForImageTextToText``, chat template from
the folder) and never downloaded: ``local_files_only``. bf16 on CUDA, float32 on CPU. Samples are
grouped by whether they carry an image, sorted by prompt length and generated in left-padded batches
with greedy (deterministic) decoding. The generated text is parsed leniently (code fences, text
around the JSON object); an answer that still fails the schema is a :class:`Prediction` with an
``error``, never dropped. Each prediction's ledger row has its prompt and generated token counts and
its share of the batch's wall time.

``static_cache=True`` generates with a static KV cache (``cache_implementation="static"``), which
``transformers`` compiles with ``torch.compile`` (CUDA graphs) on a GPU; prompts are then padded to a
multiple of ``pad_to_multiple_of`` so few shapes are compiled. See ``benchmarks/local_vlm.py``.

    rwpost evaluate --detector local-vlm --set model=/models/Qwen2-VL-2B-Instruct --batch-size 32 ...
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PositiveInt

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Call, Capabilities, Detector, DetectorInputs, Prediction, RunContext
from rwpost.evaluate.detectors.vlm import (
    DEFAULT_PROMPT,
    missing_image_prediction,
    refuse_open_web,
    task_schema,
    verdict_prediction,
    verdict_user_text,
)
from rwpost.evaluate.devices import pick_device
from rwpost.evaluate.task import Cell, EvalTask
from rwpost.images import ImageRefused
from rwpost.prompts import load_prompt
from rwpost.records import Sample

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The verdict in generated ``text``: the whole text (code fences stripped), else its outermost
    ``{...}``; ``(None, what is wrong)`` when neither satisfies ``schema``."""
    from rwpost.llm import parse_answer

    data, problem = parse_answer(text, schema)
    if data is None:
        found = _OBJECT.search(text or "")
        if found and found.group(0) != (text or "").strip():
            inner, _ = parse_answer(found.group(0), schema)
            if inner is not None:
                return inner, ""
    return data, problem


def pick_dtype(device: str, dtype: str | None = None) -> Any:
    """``dtype`` by name if given, else bfloat16 on CUDA and float32 elsewhere."""
    import torch

    if dtype:
        try:
            return getattr(torch, dtype)
        except AttributeError as exc:
            raise ConfigError(
                f"local-vlm: unknown dtype {dtype!r} (e.g. bfloat16, float16, float32)"
            ) from exc
    return torch.bfloat16 if device.startswith("cuda") else torch.float32


@lru_cache(maxsize=1)
def load_local_model(path: str, device: str, dtype: str, attn_implementation: str | None = None) -> tuple:
    """``(processor, model)`` from a local folder, on ``device`` in ``dtype``, in eval mode (kept loaded)."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise ConfigError(f"local-vlm: {folder} is not a local model folder (no config.json)")
    kwargs: dict[str, Any] = {"local_files_only": True, "dtype": pick_dtype(device, dtype)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    try:
        processor = AutoProcessor.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForImageTextToText.from_pretrained(str(folder), **kwargs)
    except (OSError, ValueError, KeyError) as exc:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "Unrecognized configuration class" in problem:  # transformers then lists every supported class
            kind = getattr(getattr(exc, "config", None), "model_type", None) or _model_type(folder)
            problem = f"model type {kind!r} is not an image-text-to-text model"
        raise ConfigError(f"local-vlm: cannot load {folder} ({problem[:300]})") from exc
    tokenizer = getattr(processor, "tokenizer", processor)
    tokenizer.padding_side = "left"  # decoder-only generation: the prompt ends where the answer starts
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return processor, model.to(device).eval()


def _model_type(folder: Path) -> str | None:
    """``model_type`` of the folder's ``config.json``, None when unreadable."""
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None


def generated_length(row: Sequence[int], eos: int | list[int] | None, pad: int | None) -> int:
    """Tokens the model generated in ``row``: up to and including the first end token; padding after it
    (rows that finished before the batch) does not count."""
    stops = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    for i, token in enumerate(row):
        if token in stops:
            return i + 1
    return sum(1 for t in row if t != pad)


def _pil(data: bytes) -> Any:
    """The image as RGB; bombs and broken files raise :class:`~rwpost.images.ImageRefused`."""
    from rwpost.images import open_image

    with open_image(data) as image:
        return image.convert("RGB")


class LocalVLMDetector(Detector):
    """Asks a local vision-language model for a verdict on each post (with its image), zero-shot."""

    name = "local-vlm"
    capabilities = Capabilities(reads_images=True, uses_gpu=True)

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")

        model: str
        """The local model folder (``config.json``, weights, processor)."""
        prompt: str = DEFAULT_PROMPT
        device: str | None = None
        dtype: str | None = None
        """None: bfloat16 on CUDA, float32 elsewhere."""
        batch_size: PositiveInt = 16
        max_new_tokens: PositiveInt = 384
        static_cache: bool = False
        pad_to_multiple_of: PositiveInt = 64
        attn_implementation: str | None = None

    def __init__(self, config: Config) -> None:
        from rwpost.llm import load_llm_schema

        super().__init__(config)
        o = self.options
        self.model_path = str(Path(o.model).expanduser().resolve())
        self.prompt = o.prompt
        self.prompt_file = load_prompt(o.prompt)
        self.schema = load_llm_schema(self.prompt_file.schema_name)
        self.device = pick_device(o.device)
        self.batch_size, self.max_new_tokens = o.batch_size, o.max_new_tokens
        self.static_cache, self.pad_to_multiple_of = o.static_cache, o.pad_to_multiple_of
        self.dtype_name = str(pick_dtype(self.device, o.dtype)).removeprefix("torch.")
        self.processor, self.model = load_local_model(
            self.model_path, self.device, self.dtype_name, o.attn_implementation
        )
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.model_name = Path(self.model_path).name

    def config(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "model_path": self.model_path,
            "model_type": getattr(self.model.config, "model_type", None),
            "prompt": self.prompt,
            "dtype": self.dtype_name,
            "decoding": "greedy",
            "max_new_tokens": self.max_new_tokens,
            "static_cache": self.static_cache,
        }

    def inputs(self) -> DetectorInputs:
        return DetectorInputs(prompts={self.prompt: self.prompt_file.sha256})

    def messages(
        self, sample: Sample, cell: Cell, with_image: bool, labels: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The chat for one sample: the API detector's system and user prompts, the image first."""
        user = verdict_user_text(self.prompt_file, sample, cell, labels)
        content = ([{"type": "image"}] if with_image else []) + [{"type": "text", "text": user}]
        return [
            {"role": "system", "content": [{"type": "text", "text": self.prompt_file.system}]},
            {"role": "user", "content": content},
        ]

    def _generate(self, texts: list[str], images: list[Any] | None) -> tuple[list[str], list[int], list[int]]:
        """Greedy answers for one batch: ``(texts, prompt tokens, generated tokens)`` per row."""
        import torch

        text_kwargs: dict[str, Any] = {"padding": True, "return_tensors": "pt"}
        if self.static_cache and self.pad_to_multiple_of > 1:
            text_kwargs["pad_to_multiple_of"] = self.pad_to_multiple_of
        inputs = self.processor(text=texts, images=images, **text_kwargs).to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        options: dict[str, Any] = {"do_sample": False, "max_new_tokens": self.max_new_tokens}
        if self.static_cache:
            options["cache_implementation"] = "static"
        pad_id = self.tokenizer.pad_token_id
        with torch.inference_mode():
            output = self.model.generate(**inputs, **options, pad_token_id=pad_id)
        generated = output[:, inputs["input_ids"].shape[1] :]
        lengths = [
            generated_length(row, self.model.generation_config.eos_token_id, pad_id)
            for row in generated.tolist()
        ]
        answers = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
        prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
        return answers, [int(x) for x in prompt_tokens], lengths

    def _batch(
        self, items: list[tuple[Sample, str, Any]], out: dict[str, Prediction], labels: list[str]
    ) -> None:  # items: (sample, chat text, PIL image or None)
        images = [[im] for _, _, im in items] if items[0][2] is not None else None
        began = time.perf_counter()
        try:
            answers, prompt_tokens, generated = self._generate([t for _, t, _ in items], images)
        except (RuntimeError, ValueError, TypeError, IndexError) as exc:
            if len(items) > 1:  # out of memory, or one bad input: split and retry
                half = len(items) // 2
                self._batch(items[:half], out, labels)
                self._batch(items[half:], out, labels)
                return
            sample = items[0][0]
            call = Call(name=self.model_name, latency_s=time.perf_counter() - began, cost_usd=0.0)
            message = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            out[sample.id] = Prediction(id=sample.id, calls=[call], error=f"generation failed: {message}")
            return
        latency = (time.perf_counter() - began) / len(items)
        for (sample, _, _), answer, n_in, n_out in zip(items, answers, prompt_tokens, generated, strict=True):
            call = Call(
                name=self.model_name, tokens_in=n_in, tokens_out=n_out, latency_s=latency, cost_usd=0.0
            )
            data, problem = parse_verdict(answer, task_schema(self.schema, labels))
            if data is None:
                out[sample.id] = Prediction(
                    id=sample.id, calls=[call], error=f"model answer rejected: {problem}"
                )
            else:
                out[sample.id] = verdict_prediction(sample.id, data, labels, call)

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        refuse_open_web(self.name, task)
        labels = task.label_names
        out: dict[str, Prediction] = {}
        groups: dict[bool, list[tuple[Sample, str, Any]]] = {False: [], True: []}
        for sample in samples:
            image = ctx.image(sample)
            missing = missing_image_prediction(sample, image)
            if missing is not None:
                out[sample.id] = missing
                continue
            picture = None
            if image is not None:
                try:
                    picture = _pil(image.data)
                except ImageRefused as exc:
                    out[sample.id] = Prediction(id=sample.id, error=f"image unreadable: {exc}")
                    continue
            chat = self.messages(sample, task.cell, picture is not None, labels)
            text = self.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
            groups[picture is not None].append((sample, text, picture))
        ctx.sent_images(len(groups[True]))
        for items in groups.values():
            if not items:
                continue
            lengths = [len(x) for x in self.tokenizer([t for _, t, _ in items])["input_ids"]]
            ordered = [items[i] for i in sorted(range(len(items)), key=lengths.__getitem__)]
            for start in range(0, len(ordered), self.batch_size):
                self._batch(ordered[start : start + self.batch_size], out, labels)
        return [out[s.id] for s in samples]
