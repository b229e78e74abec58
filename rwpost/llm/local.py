"""A :class:`~rwpost.llm.chat.ChatModel` run in-process from a local Hugging Face model folder.

The folder is loaded with ``transformers`` and never downloaded (``local_files_only``): an
image-text-to-text model (``AutoProcessor`` + ``AutoModelForImageTextToText``) reads the requests' images,
a causal language model (``AutoTokenizer`` + ``AutoModelForCausalLM``) text only; the chat template comes
from the folder. bf16 on CUDA, float32 on CPU (:func:`pick_dtype`). Requests are grouped by whether they
carry images and by decoding settings, sorted by prompt length and generated in left-padded batches;
a batch that fails (out of memory, one bad input) is split in two and retried, down to one request.
At temperature 0 decoding is greedy (deterministic); above it, sampled with a seed fixed by the batch.

The generated text is parsed leniently (:func:`parse_generated`: code fences, text around the JSON
object); an answer that still fails the schema is a :class:`~rwpost.llm.chat.ChatResult` with ``ok=False``,
its raw text and the reason, never dropped. Each result has its prompt and generated token counts and its
share of the batch's wall time. ``await complete()`` from many coroutines is batched too: requests that
arrive together are generated together.

``cache_path`` names the answer cache the API path uses (:class:`~rwpost.llm.cache.LLMCache`, keyed by
:func:`~rwpost.llm.cache.cache_key` with the model folder as the model): a request whose answers are all
stored is answered from it (``cached``, its tokens as first generated) and never generated again, and
every valid generated answer is stored, so a resumed run repeats no generation.

``static_cache=True`` generates with a static KV cache (``cache_implementation="static"``), which
``transformers`` compiles with ``torch.compile`` (CUDA graphs) on a GPU; prompts are then padded to a
multiple of ``pad_to_multiple_of`` so few shapes are compiled.

    model = LocalChatModel("/models/Qwen2.5-7B-Instruct", batch_size=32)
    results = model.run(requests)
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.ids import stable_seed
from rwpost.images import ImageRefused, open_image
from rwpost.llm.cache import LLMCache, cache_key
from rwpost.llm.chat import ChatResult, OnResult, sample_request
from rwpost.llm.client import LLMClient, parse_answer
from rwpost.llm.types import ImageInput, LLMRequest, Usage

DEFAULT_MAX_NEW_TOKENS = 2048
"""The longest answer generated when neither the model nor the request sets fewer."""

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_generated(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The answer in generated ``text``: the whole text (code fences stripped), else its outermost
    ``{...}``; ``(None, what is wrong)`` when neither satisfies ``schema``."""
    data, problem = parse_answer(text, schema)
    if data is None:
        found = _OBJECT.search(text or "")
        if found and found.group(0) != (text or "").strip():
            inner, _ = parse_answer(found.group(0), schema)
            if inner is not None:
                return inner, ""
    return data, problem


def pick_device(device: str | None = None) -> str:
    """``device`` if given, else ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(device: str, dtype: str | None = None) -> Any:
    """The torch dtype named ``dtype`` if given, else bfloat16 on CUDA and float32 elsewhere."""
    import torch

    if dtype:
        chosen = getattr(torch, dtype, None)
        if not isinstance(chosen, torch.dtype):
            raise ConfigError(f"local model: unknown dtype {dtype!r} (e.g. bfloat16, float16, float32)")
        return chosen
    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def _unrecognized(exc: Exception) -> bool:
    """Whether ``transformers`` refused the folder's config class for an Auto model class."""
    return "Unrecognized configuration class" in str(exc)


def require_model_folder(path: str | Path, what: str = "") -> Path:
    """``path`` as a local model folder; a :class:`ConfigError` naming ``what`` (e.g. ``reward model``)
    when it holds no ``config.json`` (a Hugging Face model folder always does)."""
    folder = Path(path).expanduser()
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"{what + ': ' if what else ''}{folder} is not a local model folder (no config.json)"
        )
    return folder


@lru_cache(maxsize=1)
def load_local_model(
    path: str, device: str, dtype: str, attn_implementation: str | None = None, vision: bool = False
) -> tuple:
    """``(processor or tokenizer, model)`` from a local folder, on ``device`` in ``dtype``, in eval mode,
    padding on the left (kept loaded: the last folder asked for stays in memory). ``vision``: only an
    image-text-to-text model is accepted (no text-only fallback)."""
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

    folder = require_model_folder(path, "local model")
    kwargs: dict[str, Any] = {"local_files_only": True, "dtype": pick_dtype(device, dtype)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    try:
        try:
            model = AutoModelForImageTextToText.from_pretrained(str(folder), **kwargs)
            processor = AutoProcessor.from_pretrained(str(folder), local_files_only=True)
        except ValueError as exc:
            if vision or not _unrecognized(exc):
                raise
            model = AutoModelForCausalLM.from_pretrained(str(folder), **kwargs)
            processor = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if _unrecognized(exc):  # transformers then lists every supported class
            kind = _model_type(folder)
            problem = f"model type {kind!r} is " + (
                "not an image-text-to-text model"
                if vision
                else "neither an image-text-to-text nor a causal language model"
            )
        raise ConfigError(f"local model: cannot load {folder} ({problem[:300]})") from exc
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


def chat_messages(request: LLMRequest, images: int = 0, *, parts: bool = True) -> list[dict[str, Any]]:
    """The chat of one request: system, then user with its ``images`` first, as content parts for a
    processor (``parts``) or plain strings for a text model's chat template."""
    if not parts:
        return [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}]
    user = [{"type": "image"}] * images + [{"type": "text", "text": request.user}]
    return [
        {"role": "system", "content": [{"type": "text", "text": request.system}]},
        {"role": "user", "content": user},
    ]


def decode_image(image: ImageInput) -> Any:
    """The image as RGB for a processor; bombs and broken files raise :class:`ImageRefused`."""
    with open_image(image.data) as picture:
        return picture.convert("RGB")


@dataclass
class _Item:
    """One request on its way through a batch: where its answers go, its chat text, its images."""

    index: int
    request: LLMRequest
    text: str
    pictures: list[Any] = field(default_factory=list)


class Coalescer:
    """Callers that each await one item are served in batches: whatever is pending once every ready caller
    has queued goes to ``batch(items) -> results`` (one result per item, in a worker thread) together.
    The one home of "batch what awaits at the same time" (local generation, reward models)."""

    def __init__(self, batch: Callable[[list[Any]], list[Any]]) -> None:
        self.batch = batch
        self._pending: list[tuple[Any, asyncio.Future]] = []
        self._worker: asyncio.Task | None = None

    async def submit(self, item: Any) -> Any:
        """``item``'s result, computed in a batch with the items other callers submit meanwhile."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self._pending.append((item, future))
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            waiting = -1
            while waiting != len(self._pending):  # let every caller that is ready queue its item
                waiting = len(self._pending)
                await asyncio.sleep(0)
            pending, self._pending = self._pending, []
            try:
                results = await asyncio.to_thread(self.batch, [item for item, _ in pending])
            except Exception as exc:  # a bug or a broken model folder: every caller sees it
                for _, future in pending:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(pending, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def aclose(self) -> None:
        """Wait for the batch in flight and forget the event loop's task."""
        if self._worker is not None and not self._worker.done():
            await self._worker
        self._worker = None


class LocalChatModel:
    """A :class:`~rwpost.llm.chat.ChatModel` over a local model folder (see the module docstring).

    ``max_new_tokens`` bounds every answer (a request's smaller ``max_tokens`` wins); ``batch_size`` is
    the most requests generated together; ``seed`` fixes sampling (temperature above 0); ``vision``
    refuses a folder that holds no image-text-to-text model; ``cache_path`` is the answer cache (None: none).
    """

    local = True

    def __init__(
        self,
        path: str | Path,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 16,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        static_cache: bool = False,
        pad_to_multiple_of: int = 64,
        attn_implementation: str | None = None,
        seed: int = 0,
        vision: bool = False,
        cache_path: str | Path | None = None,
    ) -> None:
        self.model_path = str(Path(path).expanduser().resolve())
        self.name = Path(self.model_path).name
        self.device = pick_device(device)
        self.dtype_name = str(pick_dtype(self.device, dtype)).removeprefix("torch.")
        self.batch_size, self.max_new_tokens = max(1, int(batch_size)), int(max_new_tokens)
        self.static_cache, self.pad_to_multiple_of = bool(static_cache), int(pad_to_multiple_of)
        self.attn_implementation, self.seed = attn_implementation, seed
        self.processor, self.model = load_local_model(
            self.model_path, self.device, self.dtype_name, attn_implementation, vision
        )
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.usage: dict[str, Usage] = {}
        self.batches = 0
        """Calls of the model's ``generate`` (each one batch of requests)."""
        self._batcher = Coalescer(self._generate_pending)
        self.cache = LLMCache(cache_path) if cache_path else None

    def __repr__(self) -> str:
        return f"LocalChatModel({self.model_path!r}, device={self.device!r}, dtype={self.dtype_name!r})"

    def view(self) -> LocalChatModel:
        """Another handle on the same loaded weights (and answer cache) with its own usage counts, batch
        count and batcher: what each run gets of a model a replica holds (:mod:`rwpost.llm.held`)."""
        view = copy.copy(self)
        view.usage, view.batches = {}, 0
        view._batcher = Coalescer(view._generate_pending)
        return view

    @property
    def reads_images(self) -> bool:
        """Whether the folder holds an image-text-to-text model (a processor with an image processor)."""
        return hasattr(self.processor, "image_processor")

    def config(self) -> dict[str, Any]:
        return {
            "backend": "local",
            "model": self.name,
            "model_path": self.model_path,
            "model_type": getattr(self.model.config, "model_type", None),
            "dtype": self.dtype_name,
            "decoding": "greedy at temperature 0, else sampled",
            "max_new_tokens": self.max_new_tokens,
            "static_cache": self.static_cache,
            "seed": self.seed,
        }

    # --- prompts ---------------------------------------------------------------------------------

    def messages(self, request: LLMRequest, images: int = 0) -> list[dict[str, Any]]:
        """The chat of one request for this folder's template (:func:`chat_messages`)."""
        return chat_messages(request, images, parts=self.reads_images)

    def prompt_text(self, request: LLMRequest, images: int = 0) -> str:
        """The request rendered by the folder's chat template, ending where the answer starts."""
        chat = self.messages(request, images)
        return self.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)

    # --- synchronous, batched --------------------------------------------------------------------

    def run(self, requests: Sequence[LLMRequest], on_result: OnResult | None = None) -> list[ChatResult]:
        """One answer per request, in request order; ``on_result`` as each batch finishes."""
        return [answers[0] for answers in self.generate(requests, 1, on_result)]

    def generate(
        self, requests: Sequence[LLMRequest], n: int = 1, on_result: OnResult | None = None
    ) -> list[list[ChatResult]]:
        """``n`` answers to each request, in request order; never raises for a bad image or answer."""
        out: list[list[ChatResult]] = [[] for _ in requests]
        groups: dict[tuple[bool, float, int], list[_Item]] = {}
        for i, request in enumerate(requests):
            stored = self._stored(request, n)
            if stored is not None:
                out[i] = stored
                for result in stored:
                    if on_result is not None:
                        on_result(result)
                continue
            problem, pictures = None, []
            if request.images and not self.reads_images:
                problem = f"the local model {self.name} reads no images"
            else:
                try:
                    pictures = [decode_image(image) for image in request.images]
                except ImageRefused as exc:
                    problem = f"image unreadable: {exc}"
            if problem is not None:
                out[i] = self._failures(request, n, problem, 0.0, on_result)
                continue
            item = _Item(i, request, self.prompt_text(request, len(pictures)), pictures)
            key = (
                bool(pictures),
                float(1.0 if request.temperature is None else request.temperature),
                self._max_new(request),
            )
            groups.setdefault(key, []).append(item)
        for (_, temperature, max_new), items in groups.items():
            lengths = [len(ids) for ids in self.tokenizer([item.text for item in items])["input_ids"]]
            ordered = [items[i] for i in sorted(range(len(items)), key=lengths.__getitem__)]
            for start in range(0, len(ordered), self.batch_size):
                batch = ordered[start : start + self.batch_size]
                self._batch(batch, n, temperature, max_new, out, on_result)
        return out

    def _max_new(self, request: LLMRequest) -> int:
        return min(request.max_tokens or self.max_new_tokens, self.max_new_tokens)

    def _generate(
        self, items: list[_Item], n: int, temperature: float, max_new: int
    ) -> tuple[list[str], list[int], list[int]]:
        """``n`` answers per item, item by item: ``(texts, prompt tokens per item, generated tokens)``."""
        import torch

        text_kwargs: dict[str, Any] = {"padding": True, "return_tensors": "pt"}
        if self.static_cache and self.pad_to_multiple_of > 1:
            text_kwargs["pad_to_multiple_of"] = self.pad_to_multiple_of
        texts = [item.text for item in items]
        if items[0].pictures:
            text_kwargs["images"] = [item.pictures for item in items]
        inputs = self.processor(text=texts, **text_kwargs).to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        sampled = temperature > 0
        options: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": sampled}
        if sampled:  # greedy answers are the same n times: generated once, repeated below
            options.update(temperature=temperature, num_return_sequences=n)
            torch.manual_seed(stable_seed(self.seed, *(cache_key(self.model_path, i.request) for i in items)))
        if self.static_cache:
            options["cache_implementation"] = "static"
        pad_id = self.tokenizer.pad_token_id
        self.batches += 1
        with torch.inference_mode():
            output = self.model.generate(**inputs, **options, pad_token_id=pad_id)
        generated = output[:, inputs["input_ids"].shape[1] :]
        eos = self.model.generation_config.eos_token_id
        lengths = [generated_length(row, eos, pad_id) for row in generated.tolist()]
        answers = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
        if not sampled and n > 1:
            answers = [a for a in answers for _ in range(n)]
            lengths = [x for x in lengths for _ in range(n)]
        prompt_tokens = [int(x) for x in inputs["attention_mask"].sum(dim=1).tolist()]
        return answers, prompt_tokens, lengths

    def _batch(
        self,
        items: list[_Item],
        n: int,
        temperature: float,
        max_new: int,
        out: list[list[ChatResult]],
        on_result: OnResult | None,
    ) -> None:
        """Generate one batch into ``out``; on failure split it in two, down to one request."""
        began = time.perf_counter()
        try:
            answers, prompt_tokens, generated = self._generate(items, n, temperature, max_new)
        except (RuntimeError, ValueError, TypeError, IndexError) as exc:
            if len(items) > 1:  # out of memory, or one bad input: split and retry
                half = len(items) // 2
                self._batch(items[:half], n, temperature, max_new, out, on_result)
                self._batch(items[half:], n, temperature, max_new, out, on_result)
                return
            message = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            latency, item = time.perf_counter() - began, items[0]
            error = f"generation failed: {message}"
            out[item.index] = self._failures(item.request, n, error, latency, on_result)
            return
        latency = (time.perf_counter() - began) / (len(items) * n)
        for k, item in enumerate(items):
            results = []
            for j in range(n):
                answer, tokens_out = answers[k * n + j], generated[k * n + j]
                result = self._answer(item.request, j, answer, prompt_tokens[k], tokens_out, latency)
                results.append(result)
                if on_result is not None:
                    on_result(result)
            out[item.index] = results

    def _answer(
        self, request: LLMRequest, j: int, text: str, tokens_in: int, tokens_out: int, latency: float
    ) -> ChatResult:
        """The result of one generated answer, parsed against the request's schema and counted."""
        data, problem = parse_generated(text, request.schema)
        result = self._result(request, j, latency)
        result.ok, result.data, result.raw, result.raw_responses = data is not None, data, text, [text]
        result.error = None if data is not None else f"invalid answer: {problem}"
        result.prompt_tokens, result.completion_tokens = tokens_in, tokens_out
        if data is not None and self.cache is not None:
            self.cache.put(
                result.cache_key,
                model=self.model_path,
                request=sample_request(request, j),
                answer=data,
                raw=text,
                prompt_tokens=tokens_in,
                completion_tokens=tokens_out,
            )
        usage = self.usage.setdefault(request.task, Usage())
        usage.prompt_tokens += tokens_in
        usage.completion_tokens += tokens_out
        usage.failures += int(data is None)
        return result

    def _failures(
        self, request: LLMRequest, n: int, error: str, latency: float, on_result: OnResult | None
    ) -> list[ChatResult]:
        """``n`` results with no answer (an unreadable image, a failed generation), counted."""
        results = []
        for j in range(n):
            result = self._result(request, j, latency / n)
            result.error = error
            self.usage.setdefault(request.task, Usage()).failures += 1
            if on_result is not None:
                on_result(result)
            results.append(result)
        return results

    def _stored(self, request: LLMRequest, n: int) -> list[ChatResult] | None:
        """The ``n`` answers of ``request`` from the cache, or None unless every one is stored."""
        if self.cache is None:
            return None
        keys = [cache_key(self.model_path, sample_request(request, j)) for j in range(n)]
        hits = [hit for hit in map(self.cache.get, keys) if hit is not None]
        if len(hits) < n:
            return None
        usage = self.usage.setdefault(request.task, Usage())
        usage.requests += n
        usage.cache_hits += n
        return [ChatResult.from_cache(request, key, hit) for key, hit in zip(keys, hits, strict=True)]

    def _result(self, request: LLMRequest, j: int, latency: float) -> ChatResult:
        self.usage.setdefault(request.task, Usage()).requests += 1
        key = cache_key(self.model_path, sample_request(request, j))
        return ChatResult(
            key=request.key, task=request.task, cache_key=key, ok=False, attempts=1, latency_s=latency
        )

    # --- asynchronous: callers that await one request at a time are batched together --------------

    async def complete(self, request: LLMRequest) -> ChatResult:
        [result] = await self.sample(request, 1)
        return result

    async def sample(self, request: LLMRequest, n: int) -> list[ChatResult]:
        """``n`` answers to ``request``, generated with the other requests awaiting at the same time."""
        return await self._batcher.submit((request, n))

    def _generate_pending(self, entries: list[tuple[LLMRequest, int]]) -> list[list[ChatResult]]:
        """The answers of requests that awaited together: one :meth:`generate` per sample count."""
        results: list[list[ChatResult]] = [[] for _ in entries]
        by_n: dict[int, list[int]] = {}
        for at, (_, n) in enumerate(entries):
            by_n.setdefault(n, []).append(at)
        for n, positions in by_n.items():
            answers = self.generate([entries[at][0] for at in positions], n)
            for at, answer in zip(positions, answers, strict=True):
                results[at] = answer
        return results

    async def aclose(self) -> None:
        """Forget the event loop's batching task (the model stays loaded for the next run)."""
        await self._batcher.aclose()

    # --- accounting ------------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """Answers, failures and tokens per task and in total; a local model costs nothing per token."""
        total = Usage()
        for usage in self.usage.values():
            total.add(usage)
        return {
            "model": self.name,
            "model_path": self.model_path,
            "device": self.device,
            "dtype": self.dtype_name,
            "price_per_mtok": None,
            "response_mode": "local",
            "tasks": {task: usage.as_dict() for task, usage in sorted(self.usage.items())},
            "total": total.as_dict(),
            "batches": self.batches,
        }

    def estimate(self, requests: Iterable[LLMRequest]) -> dict[str, Any]:
        """A dry run's token budget, estimated as for the API (an unpriced client that calls nothing)."""
        return LLMClient(model=self.name).estimate(requests)
