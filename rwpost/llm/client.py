"""The OpenAI-compatible client: structured answers, bounded concurrency, retries, cache, cost.

It speaks the chat completions API to any compatible server (OpenAI, vLLM, Ollama, llama.cpp) with
aiohttp, retrying and failing as the ``openai`` SDK does, with the SDK's own errors
(:mod:`rwpost.llm.connections`).
Credentials are explicit arguments; only the edges read them from the environment
(:func:`rwpost.llm.config.settings_from_env`). See the package docstring for an example.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rwpost.errors import ConfigError, RwpostError
from rwpost.io import write_json
from rwpost.llm.cache import LLMCache, cache_key
from rwpost.llm.config import LLMSettings
from rwpost.llm.schemas import answer_check, for_response_format
from rwpost.llm.types import LLMRequest, LLMResult, PriceTable, Usage
from rwpost.secrets import redact, register
from rwpost.urls import split_url

if TYPE_CHECKING:  # the SDK is imported on the first call: importing it is most of a command's start-up
    import ssl

    import openai

    from rwpost.llm.connections import Connections

ResponseMode = Literal["auto", "json_schema", "json_object"]

MAX_ANSWER_CHARS = 256_000
"""The longest answer read and kept: a structured answer is a few thousand characters; a longer one (a
runaway or broken server) is an invalid answer, kept only as its first :data:`KEPT_CHARS`."""

KEPT_CHARS = 2_000
"""How much of an over-long answer is kept with the failure (to see what the server sent)."""

IMAGE_TOKENS_ESTIMATE = 765
"""Tokens one image costs a GPT-4o-class model at high detail (512px tiles: 85 + 4 x 170)."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class LLMCallError(RwpostError):
    """A call that failed at the transport level after every retry (or with a non-retryable status)."""


TRANSPORT_ERRORS = (
    "APIConnectionError",
    "APITimeoutError",
    "InternalServerError",
    "RateLimitError",
    "ConflictError",
)
"""The ``openai`` errors of an outage (connection, timeout, 5xx, 429, 409): :class:`LLMCallError` names
them as ``<name> after <n> attempt(s)``, which is how a stored failure is recognised as one."""

_TRANSPORT = re.compile(rf"\b(?:{'|'.join(TRANSPORT_ERRORS)}) after \d+ attempt")


def is_transport_failure(error: str | None) -> bool:
    """Whether a stored failure (a prediction's error, an extraction reject's reason) came from the
    transport after every retry: an outage, not an answer, so a resumed run asks again. Refusals, invalid
    answers and requests the server refused stay final."""
    return bool(error) and _TRANSPORT.search(error) is not None


class LLMAccessError(ConfigError):
    """The server refused the credentials or the model (401, 403, unknown model): every call would fail
    the same way, so the run stops at the first one instead of recording each sample as failed."""


class _Refusal(Exception):
    """The model declined to answer (``message.refusal``): asking again at the same prompt won't help."""


def kept_answer(text: str) -> str:
    """``text`` as a failure keeps it: whole up to :data:`MAX_ANSWER_CHARS`, else its beginning."""
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    return f"{text[:KEPT_CHARS]}[... {len(text)} characters in all]"


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), enough for a ``--dry-run`` budget."""
    return max(1, (len(text) + 3) // 4)


@functools.lru_cache(maxsize=64)
def _validator(schema: str) -> Any:
    """The checked validator of a schema (its canonical JSON): built once, not once per answer."""
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema))


@functools.cache
def _tls() -> ssl.SSLContext:
    """One verifying TLS context for every client (loading the CA bundle costs 0.1-0.2 s each time), from
    httpx2, the SDK's HTTP library: the defaults the SDK verifies with (certifi, SSL_CERT_FILE /
    SSL_CERT_DIR)."""
    from httpx2 import create_ssl_context

    return create_ssl_context()


def parse_answer(content: str | None, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in ``content`` if it satisfies ``schema``, else ``(None, what is wrong)``."""
    if not content or not content.strip():
        return None, "empty answer"
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(data, dict):
        return None, f"expected a JSON object, found {type(data).__name__}"
    check = answer_check(schema)
    if check is not None and check(data):  # the usual case: a valid answer, without jsonschema's walk
        return data, ""
    import jsonschema  # the reason an answer is refused is jsonschema's words

    error = jsonschema.exceptions.best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return None, f"does not match the schema at {where}: {error.message}"
    return data, ""


_SCHEMA_REFUSAL = ("response_format", "json_schema", "schema", "guided", "structured")


def _refuses_schema(exc: Exception) -> bool:
    """Whether a 400/422 is the server refusing ``response_format=json_schema`` (not e.g. a long prompt)."""
    return any(word in str(exc).lower() for word in _SCHEMA_REFUSAL)


_outage: ContextVar[list[bool] | None] = ContextVar("rwpost_llm_outage", default=None)
"""The outage flag of a group of sibling calls (:func:`siblings_stop_on_outage`)."""


@contextmanager
def siblings_stop_on_outage() -> Iterator[None]:
    """Within it, the calls of the tasks started there are siblings: once one fails for good at the
    transport (its retries spent), a sibling that gets its turn afterwards is cancelled before it sends.
    The flag is set before the failed call gives up its place, so no sibling's request can slip out
    between the failure and the group's cancellation."""
    token = _outage.set([False])
    try:
        yield
    finally:
        _outage.reset(token)


def _error_message(exc: openai.APIError) -> str:
    """The server's own words of an error response, on one line and short."""
    body = exc.body if isinstance(exc.body, dict) else {}
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    return " ".join(str(detail.get("message") or exc.message).split())[:200]


class LLMClient:
    """Asks an OpenAI-compatible server for JSON answers that satisfy a JSON Schema.

    - at most ``concurrency`` requests in flight (an ``asyncio.Semaphore``, held through the retries
      of a request);
    - 429, 5xx, 408/409, timeouts and connection errors are retried up to ``max_retries`` times with
      the ``openai`` SDK's waits (a server's ``Retry-After`` / ``retry-after-ms`` above 0, else
      exponential backoff with jitter: :func:`rwpost.llm.connections.retry_wait`); every HTTP attempt
      is counted in the report (retries made before giving up too);
    - an answer that is not JSON or does not satisfy the schema is asked again ``invalid_retries``
      times, then the result comes back with ``ok=False`` and every raw reply, for a rejects file;
    - validated answers go to the :class:`LLMCache`, so a rerun makes no HTTP call;
    - ``response_mode="auto"`` uses ``response_format=json_schema`` and falls back for good to
      ``json_object`` (schema written into the system prompt) when the server refuses it;
    - tokens and cost (from ``prices``) are counted per task; :meth:`report` returns them.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: LLMCache | None = None,
        concurrency: int = 8,
        max_retries: int = 6,
        invalid_retries: int = 2,
        timeout_s: float = 60.0,
        prices: PriceTable | None = None,
        response_mode: ResponseMode = "auto",
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"LLM concurrency must be at least 1, got {concurrency}")
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        register(api_key)  # a server may echo the key (or the URL's credentials) in an error message
        register(base_url)
        _check_base_url(base_url)
        self.cache = cache
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.invalid_retries = invalid_retries
        self.timeout_s = timeout_s
        self.prices = dict(prices or {})
        self.response_mode: ResponseMode = response_mode
        self.usage: dict[str, Usage] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: Connections | None = None
        self._semaphore: asyncio.Semaphore | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"LLMClient(model={self.model!r}, base_url={self.base_url!r}, concurrency={self.concurrency})"

    # --- public API ------------------------------------------------------------------------------

    async def complete(self, request: LLMRequest) -> LLMResult:
        """Answer one request (from the cache when possible); never raises for a bad reply."""
        key = cache_key(self.model, request)
        usage = self._usage(request.task)
        usage.requests += 1
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                usage.cache_hits += 1
                return LLMResult.from_cache(request, key, hit)
        result = LLMResult(key=request.key, task=request.task, cache_key=key, ok=False)
        problem = ""
        for _ in range(self.invalid_retries + 1):
            try:
                content, prompt_tokens, completion_tokens, attempts = await self._call(request)
            except LLMCallError as exc:
                usage.failures += 1
                result.error = redact(str(exc))
                result.raw = result.raw_responses[-1] if result.raw_responses else None
                return result
            except _Refusal as refusal:  # billed, but asking the same prompt again would be refused again
                text, *spent = refusal.args
                self._count(result, usage, *spent)
                usage.failures += 1
                result.raw_responses.append(kept_answer(text))
                result.raw = result.raw_responses[-1]
                result.error = f"the model refused to answer: {' '.join(text.split())[:300]}"
                return result
            self._count(result, usage, prompt_tokens, completion_tokens, attempts)
            if content is not None and len(content) > MAX_ANSWER_CHARS:  # never stored whole
                result.raw_responses.append(kept_answer(content))
                problem = f"answer of {len(content)} characters, longer than the {MAX_ANSWER_CHARS} read"
                continue
            result.raw_responses.append(content or "")
            data, problem = parse_answer(content, request.schema)
            if data is not None:
                result.ok, result.data, result.raw = True, data, content
                if self.cache is not None:
                    self.cache.put(
                        key,
                        model=self.model,
                        request=request,
                        answer=data,
                        raw=content or "",
                        prompt_tokens=result.prompt_tokens,
                        completion_tokens=result.completion_tokens,
                    )
                return result
        usage.failures += 1
        result.raw = result.raw_responses[-1] if result.raw_responses else None
        result.error = f"invalid answer after {self.invalid_retries + 1} attempts: {problem}"
        return result

    async def complete_many(
        self,
        requests: Iterable[LLMRequest],
        on_result: Callable[[LLMResult], None] | None = None,
    ) -> list[LLMResult]:
        """Answer many requests concurrently (bounded); results in request order.

        ``on_result`` is called as each one finishes (in completion order), e.g. to append it to a
        resumable output file.
        """

        async def one(request: LLMRequest) -> LLMResult:
            result = await self.complete(request)
            if on_result is not None:
                on_result(result)
            return result

        return list(await asyncio.gather(*(one(r) for r in requests)))

    def run(
        self, requests: Sequence[LLMRequest], on_result: Callable[[LLMResult], None] | None = None
    ) -> list[LLMResult]:
        """Synchronous :meth:`complete_many` in a fresh event loop (closes its connections at the end)."""

        async def main() -> list[LLMResult]:
            try:
                return await self.complete_many(requests, on_result)
            finally:
                await self.aclose()

        return asyncio.run(main())

    def estimate(self, requests: Iterable[LLMRequest], completion_tokens: int = 400) -> dict[str, Any]:
        """A ``--dry-run`` budget: estimated tokens and cost of the requests the cache cannot answer."""
        tasks: dict[str, dict[str, Any]] = {}
        for request in requests:
            row = tasks.setdefault(
                request.task, {"requests": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0}
            )
            row["requests"] += 1
            if self.cache is not None and cache_key(self.model, request) in self.cache:
                row["cached"] += 1
                continue
            row["prompt_tokens"] += (
                estimate_tokens(request.system) + estimate_tokens(request.user) + 8
            ) + IMAGE_TOKENS_ESTIMATE * len(request.images)
            row["completion_tokens"] += request.max_tokens or completion_tokens
        total = {"requests": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0}
        for row in tasks.values():
            row["cost_usd"] = round(self._cost(row["prompt_tokens"], row["completion_tokens"]), 6)
            for name in total:
                total[name] += row[name]
        total["cost_usd"] = round(self._cost(total["prompt_tokens"], total["completion_tokens"]), 6)
        return {
            "model": self.model,
            "priced": self.model in self.prices,
            "method": "4 characters per token, images 765 tokens, answers at most max_tokens or "
            f"{completion_tokens}",
            "tasks": tasks,
            "total": total,
        }

    def report(self) -> dict[str, Any]:
        """Tokens, calls, cache hits, failures and cost per task and in total (no credentials)."""
        total = Usage()
        for usage in self.usage.values():
            total.add(usage)
        price = self.prices.get(self.model)
        return {
            "model": self.model,
            "price_per_mtok": None
            if price is None
            else {"input": price.input_per_mtok, "output": price.output_per_mtok},
            "response_mode": self.response_mode,
            "tasks": {task: usage.as_dict() for task, usage in sorted(self.usage.items())},
            "total": total.as_dict(),
            "max_in_flight": self.max_in_flight,
        }

    def write_report(self, path: str | Path) -> None:
        """Write :meth:`report` as JSON, atomically."""
        write_json(path, self.report())

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop."""
        if self._connections is not None:
            await self._connections.close()
        self._connections, self._semaphore, self._loop = None, None, None

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- internals -------------------------------------------------------------------------------

    def _usage(self, task: str) -> Usage:
        return self.usage.setdefault(task, Usage())

    def _count(
        self, result: LLMResult, usage: Usage, prompt_tokens: int, completion_tokens: int, attempts: int
    ):
        """Add one answered HTTP call's attempts, tokens and cost to ``result`` and its task's ``usage``."""
        result.attempts += attempts
        result.prompt_tokens += prompt_tokens
        result.completion_tokens += completion_tokens
        usage.prompt_tokens += prompt_tokens
        usage.completion_tokens += completion_tokens
        usage.cost_usd += self._cost(prompt_tokens, completion_tokens)

    def _refuses_access(self, exc: openai.APIError) -> bool:
        """401, 403, or a 404 about the model itself (not e.g. a replay server's unknown request)."""
        import openai

        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return True
        if isinstance(exc, openai.NotFoundError):
            code = (exc.body or {}).get("code") if isinstance(exc.body, dict) else None
            return code == "model_not_found" or f"{self.model}" in _error_message(exc)
        return False

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.prices.get(self.model)
        return price.cost(prompt_tokens, completion_tokens) if price else 0.0

    async def _bind(self) -> tuple[Connections, asyncio.Semaphore]:
        """The connections and semaphore of the running loop (each ``asyncio.run`` gets fresh ones). Those of
        an event loop that has ended without :meth:`aclose` are closed here (aiohttp would complain of an
        unclosed session when they are collected)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._connections is None or self._semaphore is None:
            from rwpost.llm.connections import Connections

            ended = self._connections if self._loop is not None and self._loop.is_closed() else None
            self._loop = loop
            self._connections = Connections(
                base_url=self.base_url,
                api_key=self._api_key or "no-key",
                timeout_s=self.timeout_s,
                max_retries=self.max_retries,
                tls=_tls(),
            )
            self._semaphore = asyncio.Semaphore(self.concurrency)
            connections, semaphore = self._connections, self._semaphore
            if ended is not None:  # its sockets went with its loop: this only marks the session closed
                await ended.close()
            return connections, semaphore
        return self._connections, self._semaphore

    def _messages(self, request: LLMRequest, mode: ResponseMode) -> list[dict[str, Any]]:
        system = request.system
        if mode == "json_object":
            schema = json.dumps(for_response_format(request.schema), ensure_ascii=False)
            system = f"{system}\n\nAnswer with one JSON object that satisfies this JSON Schema:\n{schema}"
        if request.images:
            user: Any = [{"type": "text", "text": request.user}] + [
                {"type": "image_url", "image_url": {"url": image.data_url()}} for image in request.images
            ]
        else:
            user = request.user
        messages = [{"role": "system", "content": system}] if system else []  # a prompt that is all user turn
        return [*messages, {"role": "user", "content": user}]

    def _response_format(self, request: LLMRequest, mode: ResponseMode) -> dict[str, Any]:
        if mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": for_response_format(request.schema),
                "strict": False,
            },
        }

    async def _call(self, request: LLMRequest) -> tuple[str | None, int, int, int]:
        """One answer from the server: (content, prompt tokens, completion tokens, HTTP attempts)."""
        import openai

        connections, semaphore = await self._bind()
        usage = self._usage(request.task)
        while True:
            mode: ResponseMode = "json_schema" if self.response_mode == "auto" else self.response_mode
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": self._messages(request, mode),
                "response_format": self._response_format(request, mode),
            }
            if request.temperature is not None:
                kwargs["temperature"] = request.temperature
            if request.max_tokens is not None:
                kwargs["max_tokens"] = request.max_tokens
            counter = [0]
            outage = _outage.get()
            try:
                async with semaphore:
                    if outage is not None and outage[0]:  # a sibling's outage: the group is cancelling us
                        raise asyncio.CancelledError
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                    try:
                        raw = await connections.post_json("/chat/completions", kwargs, counter)
                    finally:
                        self.in_flight -= 1
            except openai.APIError as exc:  # the retries are spent, or the status is final
                attempts = counter[0]
                usage.http_calls += attempts
                if self._refuses_access(exc):
                    status = getattr(exc, "status_code", "?")
                    raise LLMAccessError(
                        f"the LLM server {self.base_url or 'api.openai.com'} refused model {self.model!r} "
                        f"(HTTP {status}: {redact(_error_message(exc))}); check OPENAI_API_KEY, "
                        "OPENAI_BASE_URL and the model name"
                    ) from None
                if not isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
                    if outage is not None:
                        outage[0] = True
                    raise LLMCallError(
                        f"{request.key}: {type(exc).__name__} after {attempts} attempt(s): {exc}"
                    ) from exc
                if self.response_mode == "auto" and mode == "json_schema" and _refuses_schema(exc):
                    self.response_mode = "json_object"  # the server lacks json_schema support
                    continue
                raise LLMCallError(f"{request.key}: server refused the request: {exc}") from exc
            attempts = counter[0]
            usage.http_calls += attempts
            try:  # a proxy's HTML page or an error object sent with status 200 is no chat completion
                response = json.loads(raw)
                choices = response["choices"]
                choice = choices[0] if choices else None
                message = choice["message"] if choice is not None else None
                content = message.get("content") if message is not None else None
                refusal = message.get("refusal") if message is not None else None
                usage_of = response.get("usage")
            except (AttributeError, TypeError, IndexError, KeyError, ValueError) as exc:
                body = " ".join(raw[:120].decode("utf-8", "replace").split())
                raise LLMCallError(
                    f"{request.key}: the server's answer is not a chat completion "
                    f"({type(exc).__name__}; it begins {body!r})"
                ) from None
            usage_of = usage_of if isinstance(usage_of, dict) else {}
            prompt_tokens = usage_of.get("prompt_tokens")
            completion_tokens = usage_of.get("completion_tokens")
            if not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int):
                # a server that reports no usage (or not as numbers)
                prompt_tokens = estimate_tokens(request.system + request.user)
                prompt_tokens += IMAGE_TOKENS_ESTIMATE * len(request.images)
                completion_tokens = estimate_tokens(content or refusal or "")
            if refusal and not content:
                raise _Refusal(str(refusal), prompt_tokens, completion_tokens, attempts)
            if choice is not None and choice.get("finish_reason") == "length":
                content = content or ""  # truncated JSON fails validation and is asked again
            return content, prompt_tokens, completion_tokens, attempts


def _check_base_url(base_url: str | None) -> None:
    """Refuse a base URL every request would miss: one that is no URL, or one with a query string (an
    Azure-style ``?api-key=``), which the OpenAI client puts before each route (``/v1?api-key=...chat/
    completions``), so every sample failed with 404 and the run exited 0 (issue 39 L12)."""
    if not base_url:
        return
    parts = split_url(base_url.strip())
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"LLM base URL {base_url}: not an http(s) URL (OPENAI_BASE_URL or base_url)")
    if parts.query or parts.fragment:
        raise ConfigError(
            f"LLM base URL {base_url}: has a query string, which the client would put before every route "
            "(each request would miss): give the URL without it (http://host:port/v1) and the key in "
            "OPENAI_API_KEY"
        )


def client_from(
    settings: LLMSettings,
    *,
    cache_path: str | Path | None = None,
    prices: PriceTable | None = None,
) -> LLMClient:
    """The one way to build the project's client from connection settings (extract, filter judges, VLM).

    ``cache_path`` is the sqlite answer cache (``data/cache/llm.sqlite`` in params.yaml); None = no cache.
    A settings object without an API key and without a base URL is refused here, before any request.
    """
    if not settings.has_key and not settings.base_url:
        raise ConfigError("no LLM endpoint: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
    return LLMClient(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key,
        cache=LLMCache(cache_path) if cache_path else None,
        concurrency=settings.concurrency,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        prices=prices,
    )
