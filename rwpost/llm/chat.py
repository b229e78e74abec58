"""One interface for asking a chat model for structured answers: :class:`ChatModel`.

A request is an :class:`~rwpost.llm.types.LLMRequest` (system and user text, images, the JSON Schema the
answer must satisfy, temperature, a token limit); an answer is a :class:`ChatResult` (the validated
data or why there is none, the raw text, prompt and completion tokens, latency). Two implementations:

- :class:`ApiChatModel`: an OpenAI-compatible server through :class:`~rwpost.llm.client.LLMClient`
  (its cache, bounded concurrency, retries and cost);
- :class:`rwpost.llm.local.LocalChatModel`: a Hugging Face model folder run in-process with
  ``transformers`` (batched; bf16 on CUDA, float32 on CPU).

Callers (extraction, the zero-shot detectors) write against the interface and work with either::

    model: ChatModel = ApiChatModel(client_from(settings, cache_path=cache))  # or LocalChatModel(folder)
    [result] = model.run([request])                 # or: await model.complete(request)
    answers = await model.sample(request, n=5)      # five answers to one request
    model.report()                                  # tokens, calls, failures, cost per task
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rwpost.llm.client import LLMClient
from rwpost.llm.types import LLMRequest, LLMResult


@dataclass
class ChatResult(LLMResult):
    """An :class:`LLMResult` (answer or failure, raw text, token usage) and the seconds it took.

    ``latency_s`` is the call's wall time (0 for a cache hit); a batched local model gives each request
    its share of the batch's wall time.
    """

    latency_s: float = 0.0

    @classmethod
    def of(cls, result: LLMResult, latency_s: float = 0.0) -> ChatResult:
        """The client's result with its latency."""
        return cls(**vars(result), latency_s=latency_s)


OnResult = Callable[[ChatResult], None]


@runtime_checkable
class ChatModel(Protocol):
    """A chat model that answers :class:`LLMRequest` s with JSON that satisfies the request's schema.

    ``name`` is what provenance and ledgers record; ``config()`` is what enters a run's identity.
    ``complete`` never raises for a bad answer (the result says why); ``sample`` gives ``n`` answers to
    one request (at ``request.temperature``; fewer when one fails for good at the transport level and
    stops its siblings); ``run`` answers many synchronously, results in request
    order, ``on_result`` called as each finishes. ``report`` has tokens and cost per task, ``estimate`` a
    dry run's budget, and ``aclose`` frees what the current event loop holds.
    """

    name: str
    local: bool
    """True: the model runs in this process (a local model folder), so its answers cost nothing."""

    def config(self) -> dict[str, Any]: ...

    async def complete(self, request: LLMRequest) -> ChatResult: ...

    async def sample(self, request: LLMRequest, n: int) -> list[ChatResult]: ...

    def run(self, requests: Sequence[LLMRequest], on_result: OnResult | None = None) -> list[ChatResult]: ...

    def report(self) -> dict[str, Any]: ...

    def estimate(self, requests: Iterable[LLMRequest]) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


def sample_request(request: LLMRequest, index: int) -> LLMRequest:
    """The request of the ``index``-th of n answers: the same call, its own cache key (sample 0 keeps the
    request's own key, so one sample is exactly one ordinary call)."""
    if index == 0:
        return request
    return dataclasses.replace(request, prompt_version=f"{request.prompt_version}#sample{index}")


class _Outage(Exception):
    """One of a request's samples failed for good at the transport level: stop its siblings."""


class ApiChatModel:
    """A :class:`ChatModel` over an OpenAI-compatible server: the project's :class:`LLMClient` (its
    answer cache, concurrency bound, transport and invalid-answer retries, tokens and cost)."""

    local = False

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.name = client.model

    def __repr__(self) -> str:
        return f"ApiChatModel({self.client!r})"

    def config(self) -> dict[str, Any]:
        return {"backend": "api", "model": self.name, "base_url": self.client.base_url}

    async def complete(self, request: LLMRequest) -> ChatResult:
        began = time.perf_counter()
        result = await self.client.complete(request)
        return ChatResult.of(result, 0.0 if result.cached else time.perf_counter() - began)

    async def sample(self, request: LLMRequest, n: int) -> list[ChatResult]:
        """``n`` answers, asked concurrently; each is cached under its own key, so a rerun gives the same
        ``n`` answers without calling the server. Once one fails for good at the transport level (an
        outage: the client's retries spent), its siblings are not asked any further: the answers got so
        far and that failure are returned (fewer than ``n``)."""
        from rwpost.llm.client import is_transport_failure, siblings_stop_on_outage

        if n == 1:
            return [await self.complete(request)]
        finished: dict[int, ChatResult] = {}

        async def one(i: int) -> None:
            result = finished[i] = await self.complete(sample_request(request, i))
            if not result.ok and is_transport_failure(result.error):
                raise _Outage

        try:
            with siblings_stop_on_outage():  # the tasks copy the context, and with it the group's flag
                async with asyncio.TaskGroup() as group:
                    for i in range(n):
                        group.create_task(one(i))
        except* _Outage:  # the group cancelled the siblings still waiting or retrying
            pass
        return [finished[i] for i in sorted(finished)]

    def run(self, requests: Sequence[LLMRequest], on_result: OnResult | None = None) -> list[ChatResult]:
        """Answer ``requests`` concurrently (at most the client's ``concurrency`` in flight)."""

        async def one(request: LLMRequest) -> ChatResult:
            result = await self.complete(request)
            if on_result is not None:
                on_result(result)
            return result

        async def main() -> list[ChatResult]:
            try:
                return list(await asyncio.gather(*(one(r) for r in requests)))
            finally:
                await self.aclose()

        return asyncio.run(main())

    def report(self) -> dict[str, Any]:
        return self.client.report()

    def estimate(self, requests: Iterable[LLMRequest]) -> dict[str, Any]:
        return self.client.estimate(requests)

    async def aclose(self) -> None:
        await self.client.aclose()
