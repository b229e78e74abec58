"""The model a detector asks, API or local: :class:`ChatOptions` builds its :class:`~rwpost.llm.ChatModel`.

``backend=api`` (the default) asks the OpenAI-compatible server of ``llm`` through the project's client
(:class:`~rwpost.llm.chat.ApiChatModel`: cache, concurrency, retries, cost); ``backend=local`` runs the
Hugging Face model folder named by ``model`` in-process (:class:`~rwpost.llm.local.LocalChatModel`:
batched, bf16 on CUDA, float32 on CPU) with the local options below. A detector written against the
:class:`~rwpost.llm.chat.ChatModel` interface works with either::

    rwpost evaluate --detector agentfact --set backend=local --model /models/Qwen2.5-VL-7B-Instruct ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, PositiveInt, model_validator

from rwpost.evaluate.contract import ModelOptions
from rwpost.llm.chat import ChatModel
from rwpost.llm.local import DEFAULT_MAX_NEW_TOKENS

LOCAL_OPTIONS = frozenset(
    ("device", "dtype", "batch_size", "max_new_tokens", "static_cache", "pad_to_multiple_of")
    + ("attn_implementation",)
)
"""The options only a local model reads."""


class ChatOptions(ModelOptions):
    """:class:`ModelOptions` and the backend that answers; the local options are refused with ``api``."""

    backend: Literal["api", "local"] = "api"
    """``api``: the server of ``llm``; ``local``: ``model`` is a local model folder."""
    device: Annotated[str, Field(pattern=r"^(cpu|mps|cuda(:\d+)?)$")] | None = None
    """None: ``cuda`` when torch sees a GPU, else ``cpu``; else ``cpu``, ``mps``, ``cuda`` or ``cuda:N``."""
    dtype: str | None = None
    """None: bfloat16 on CUDA, float32 elsewhere."""
    batch_size: PositiveInt = 16
    """The most requests generated together."""
    max_new_tokens: PositiveInt = DEFAULT_MAX_NEW_TOKENS
    """The longest answer (a request's smaller ``max_tokens`` wins)."""
    static_cache: bool = False
    """Generate with a static KV cache (compiled with CUDA graphs on a GPU)."""
    pad_to_multiple_of: PositiveInt = 64
    """With ``static_cache``: prompts padded to a multiple of this, so few shapes are compiled."""
    attn_implementation: str | None = None

    @model_validator(mode="after")
    def _local_options_need_a_local_model(self) -> ChatOptions:
        given = sorted(LOCAL_OPTIONS & self.model_fields_set)
        if not self.local and given:
            raise ValueError(f"backend=api reads no {', '.join(given)} (options of a local model)")
        return self

    def chat_model(
        self,
        secrets: Mapping[str, Any],
        *,
        cache_path: str | None = None,
        seed: int = 0,
        vision: bool = False,
    ) -> ChatModel:
        """The :class:`~rwpost.llm.chat.ChatModel` these options name, its answers cached at ``cache_path``
        (either backend). ``api``: the client with the run's API key (refused without a key or a base
        URL); ``local``: the folder loaded (kept loaded between calls), sampling seeded by ``seed``,
        ``vision`` refusing a model that reads no images."""
        if self.local:
            from rwpost.llm.held import local_chat_model

            return local_chat_model(  # held by a Ray actor: loaded once for every run it takes
                self.llm.model,
                device=self.device,
                dtype=self.dtype,
                batch_size=self.batch_size,
                max_new_tokens=self.max_new_tokens,
                static_cache=self.static_cache,
                pad_to_multiple_of=self.pad_to_multiple_of,
                attn_implementation=self.attn_implementation,
                seed=seed,
                vision=vision,
                cache_path=cache_path,
            )
        return super().chat_model(secrets, cache_path=cache_path)

    @property
    def local(self) -> bool:
        return self.backend == "local"

    def remote_device(self) -> str:
        """The manifest's device of an API model: ``remote (<base URL>)``."""
        return f"remote ({self.llm.base_url or 'api.openai.com'})"


__all__ = ["LOCAL_OPTIONS", "ChatOptions"]
