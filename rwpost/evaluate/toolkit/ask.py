"""Prompt -> request -> answer -> ledger row: how every agentic detector asks its chat model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from rwpost.errors import RwpostError
from rwpost.evaluate.contract import Trace
from rwpost.prompts import Prompt, load_prompt


def prompt_hashes(names: Sequence[str]) -> dict[str, str]:
    """The hash of each prompt file, by prompt name (they enter the run identity)."""
    return {name: load_prompt(name).sha256 for name in names}


def schema_hashes(names: Sequence[str]) -> dict[str, str]:
    """The hash of every answer schema the prompts ``names`` use, by schema name."""
    from rwpost.io import sha256_hex
    from rwpost.llm.schemas import LLM_SCHEMA_DIR

    schemas = sorted({load_prompt(name).schema_name for name in names})
    return {n: sha256_hex((LLM_SCHEMA_DIR / f"{n}.schema.json").read_bytes()) for n in schemas}


def prompt_request(
    prompt: Prompt,
    key: str,
    *,
    task: str,
    user: str,
    schema: dict[str, Any] | None = None,
    images: Sequence[Any] = (),
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
) -> Any:
    """The :class:`~rwpost.llm.LLMRequest` of one prompt file (its system text, answer schema and version)
    with ``user`` as the user turn: the one place a detector's prompt becomes a request."""
    from rwpost.llm import LLMRequest, load_llm_schema

    return LLMRequest(
        key=key,
        task=task,
        system=prompt.system,
        user=user,
        schema=schema or load_llm_schema(prompt.schema_name),
        schema_name=prompt.schema_name,
        prompt_version=prompt.version,
        images=tuple(i for i in images if i is not None),
        temperature=temperature,
        max_tokens=max_tokens,
    )


class ModelFailed(RwpostError):
    """A model call without a usable answer (none satisfies the schema): the sample fails with this reason."""


class ModelUnavailable(ModelFailed):
    """A model call the server failed for good (an outage: the client's retries spent): the sample fails
    with this reason, and none of its other calls is asked (:attr:`Trace.outage`)."""


def outage_of(results: Sequence[Any]) -> str | None:
    """The error of the first answer in ``results`` that failed at the transport level, or None."""
    failed = [r.error for r in results if not r.ok and r.error]
    if not failed:
        return None
    from rwpost.llm.client import is_transport_failure  # imports openai: only for a failed answer

    return next((e for e in failed if is_transport_failure(e)), None)


async def together(*calls: Awaitable[Any]) -> list[Any]:
    """The results of ``calls`` run concurrently, in order; the first that raises cancels the others (a
    sample's siblings stop at its first failure) and its exception is raised as itself."""
    tasks: list[asyncio.Task[Any]] = []
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in calls]  # type: ignore[arg-type]
    except BaseExceptionGroup as group_error:
        raise group_error.exceptions[0] from None
    return [t.result() for t in tasks]


def runs_locally(model: Any) -> bool:
    """Whether ``model`` runs in this process (:attr:`ChatModel.local <rwpost.llm.chat.ChatModel.local>`: a
    local model folder, :class:`~rwpost.llm.local.LocalChatModel`) rather than behind an API; a model that
    does not say is an API's."""
    return getattr(model, "local", False) is True


class Asker:
    """A detector's prompts (files of ``rwpost/prompts/``) over one :class:`~rwpost.llm.chat.ChatModel`:
    each answer is a ledger row in the sample's :class:`Trace`, tagged with the agent or step that asked.
    ``task`` prefixes the cost report's task (``<task>-<agent>``); ``temperature`` is the default of every
    request (a request may set its own; None: not sent, the server's default); ``max_tokens`` bounds every
    answer (None: the model's own). A local model's answers cost nothing (their rows carry
    ``cost_usd=0``); an API model's are priced by the run's price table (``local``: None, told by the
    model, :func:`runs_locally`)."""

    def __init__(
        self,
        model: Any,
        *,
        task: str,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        local: bool | None = None,
    ) -> None:
        self.model, self.task, self.temperature, self.max_tokens = model, task, temperature, max_tokens
        self.local = runs_locally(model) if local is None else local

    def request(
        self,
        prompt_name: str | Prompt,
        key: str,
        *,
        agent: str,
        images: Sequence[Any] = (),
        schema: dict[str, Any] | None = None,
        temperature: float | None | str = "default",
        fill: Mapping[str, str] | None = None,
        **values: str,
    ) -> Any:
        """The :class:`~rwpost.llm.LLMRequest` of prompt ``prompt_name`` (or a prompt a detector loaded
        from its own profile) filled with ``values`` (and ``fill``: values named like this method's
        keywords, e.g. an ``images`` text beside the attached ``images``), at the asker's temperature unless
        ``temperature`` is given (None: not sent, the server's default)."""
        prompt = load_prompt(prompt_name) if isinstance(prompt_name, str) else prompt_name
        return prompt_request(
            prompt,
            key,
            task=f"{self.task}-{agent}",
            user=prompt.render_user(**{**(fill or {}), **values}),
            schema=schema,
            images=images,
            temperature=self.temperature if temperature == "default" else temperature,  # type: ignore[arg-type]
            max_tokens=self.max_tokens,
        )

    def record(self, results: Sequence[Any], request: Any, agent: str, trace: Trace) -> None:
        """One ledger row per answer (a local model's answers carry their share of the batch's time, and
        cost nothing)."""
        free = {"cost_usd": 0.0} if self.local else {}
        for result in results:
            trace.answered(result, self.model.name, agent=agent, images=len(request.images), **free)

    async def complete(self, request: Any, agent: str, trace: Trace) -> Any:
        """The answer to ``request``, its ledger row recorded; it never raises (the caller reads
        ``result.ok``, and no outage stops the sample: a detector that goes on without an answer)."""
        result = await self.model.complete(request)
        self.record([result], request, agent, trace)
        return result

    async def sample(self, request: Any, n: int, agent: str, trace: Trace) -> list[Any]:
        """``n`` answers to ``request`` (n > 1: one batched ``sample`` call at the request's temperature).
        Raises :class:`ModelUnavailable` when the sample's model is out (this call, or an earlier one of
        the same ``trace``, failed for good at the transport level): its sibling calls stop."""
        if trace.outage:
            raise ModelUnavailable(trace.outage)
        results = await self.model.sample(request, n) if n > 1 else [await self.model.complete(request)]
        self.record(results, request, agent, trace)
        outage = outage_of(results)
        if outage is not None:
            trace.outage = trace.outage or f"model unavailable ({agent}): {outage}"
            raise ModelUnavailable(trace.outage)
        return results

    async def ask(
        self,
        prompt_name: str,
        key: str,
        trace: Trace,
        *,
        agent: str,
        images: Sequence[Any] = (),
        schema: dict[str, Any] | None = None,
        **values: str,
    ) -> dict[str, Any]:
        """The answer of ``prompt_name``; raises :class:`ModelFailed` without a valid one."""
        request = self.request(prompt_name, key, agent=agent, images=images, schema=schema, **values)
        [result] = await self.sample(request, 1, agent, trace)
        if not result.ok or result.data is None:
            raise ModelFailed(f"model answer rejected ({agent}): {result.error}")
        return result.data


__all__ = [
    "Asker",
    "ModelFailed",
    "ModelUnavailable",
    "outage_of",
    "runs_locally",
    "together",
    "prompt_hashes",
    "prompt_request",
    "schema_hashes",
]
