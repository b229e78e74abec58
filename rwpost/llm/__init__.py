"""An OpenAI-compatible LLM client for structured (JSON Schema) answers, cached, concurrent and costed.

Works with any server speaking the chat completions API (OpenAI, vLLM, Ollama, llama.cpp). Library
code passes ``base_url`` and ``api_key`` explicitly; only the CLI and pipeline stages read them from
the environment, with :func:`settings_from_env` (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_MODEL``, ``RWPOST_LLM_CONCURRENCY``, ``RWPOST_LLM_TIMEOUT``, ``RWPOST_LLM_MAX_RETRIES``).

Example::

    from rwpost.llm import ImageInput, LLMCache, LLMClient, LLMRequest, Price, load_llm_schema
    from rwpost.prompts import load_prompt

    client = LLMClient(
        model="gpt-4o-mini",
        base_url="http://127.0.0.1:8000/v1",     # None = api.openai.com
        api_key=key,                             # from the edge, never logged
        cache=LLMCache("data/cache/llm.sqlite"),
        concurrency=8,
        prices={"gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.60)},
    )
    prompt = load_prompt("rationale")            # rwpost/prompts/rationale.md
    request = LLMRequest(
        key="rw-0123456789abcdef",               # the record the call is for
        task="rationale",                        # groups tokens and cost in the report
        system=prompt.system,
        user=prompt.render_user(claim=claim, rating=rating, article=text),
        schema=load_llm_schema(prompt.schema_name),   # schemas/llm/rationale.schema.json
        schema_name=prompt.schema_name,
        prompt_version=prompt.version,
        images=(ImageInput.from_path("claim.jpg"),),   # sent as a data URL, cached by hash
    )
    [result] = client.run([request])             # or: await client.complete(request)
    if result.ok:
        answer = result.data                     # dict valid against the schema
    else:
        reject(result.error, result.raw_responses)
    client.write_report("cost.json")             # tokens, calls, cache hits, cost per task
    print(client.estimate([request]))            # --dry-run: tokens and cost without calling

Transport errors (429, 5xx, timeouts) are retried as the ``openai`` SDK retries them, honouring
``Retry-After`` (:mod:`rwpost.llm.connections`); an answer that breaks its schema is asked again by the
client.

For tests and offline reports, :mod:`rwpost.testing.llm` has a scripted OpenAI-compatible server.

Callers that should work with an API or a local model write against :class:`ChatModel`
(:mod:`rwpost.llm.chat`): :class:`ApiChatModel` wraps the client above, :class:`LocalChatModel`
(:mod:`rwpost.llm.local`) runs a Hugging Face model folder in-process with ``transformers``.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rwpost.llm.cache import CachedAnswer, LLMCache, cache_key
    from rwpost.llm.chat import ApiChatModel, ChatModel, ChatResult
    from rwpost.llm.client import (
        LLMAccessError,
        LLMCallError,
        LLMClient,
        client_from,
        estimate_tokens,
        parse_answer,
    )
    from rwpost.llm.config import LLMSettings, settings_from_env
    from rwpost.llm.local import LocalChatModel
    from rwpost.llm.schemas import load_llm_schema
    from rwpost.llm.types import ImageInput, LLMRequest, LLMResult, Price, PriceTable, Usage

_HOMES = {
    "rwpost.llm.cache": ("CachedAnswer", "LLMCache", "cache_key"),
    "rwpost.llm.chat": ("ApiChatModel", "ChatModel", "ChatResult"),
    "rwpost.llm.client": (
        "LLMAccessError",
        "LLMCallError",
        "LLMClient",
        "client_from",
        "estimate_tokens",
        "parse_answer",
    ),
    "rwpost.llm.config": ("LLMSettings", "settings_from_env"),
    "rwpost.llm.local": ("LocalChatModel",),
    "rwpost.llm.schemas": ("load_llm_schema",),
    "rwpost.llm.types": ("ImageInput", "LLMRequest", "LLMResult", "Price", "PriceTable", "Usage"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """The package's names are imported on first use (PEP 562): a caller of the light modules (config,
    types) does not pay for the client's ``openai`` import (0.4 s)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "ApiChatModel",
    "CachedAnswer",
    "ChatModel",
    "ChatResult",
    "ImageInput",
    "LLMCache",
    "LLMAccessError",
    "LLMCallError",
    "LLMClient",
    "LLMRequest",
    "LLMResult",
    "LLMSettings",
    "LocalChatModel",
    "Price",
    "PriceTable",
    "Usage",
    "cache_key",
    "client_from",
    "estimate_tokens",
    "load_llm_schema",
    "parse_answer",
    "settings_from_env",
]
