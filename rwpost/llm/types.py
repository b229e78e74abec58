"""Plain records of the LLM client: a request, its result, token usage and the price table."""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, NonNegativeFloat


@dataclass(frozen=True)
class ImageInput:
    """One image sent to a vision model as a data URL; it enters cache keys by its SHA-256 only."""

    data: bytes = field(repr=False)
    mime: str = "image/jpeg"

    @classmethod
    def from_path(cls, path: str | Path) -> ImageInput:
        """Read an image file; the MIME type comes from the file name (JPEG when unknown)."""
        mime = mimetypes.guess_type(str(path))[0] or "image/jpeg"
        return cls(data=Path(path).read_bytes(), mime=mime)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def data_url(self) -> str:
        """``data:<mime>;base64,...`` as the chat completions API accepts in ``image_url``."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(frozen=True)
class LLMRequest:
    """One structured-output call: prompts, the JSON Schema the answer must satisfy, optional images.

    ``key`` names the record the call is for (shown in reports and failures); ``task`` groups the
    call in the cost report (e.g. ``post``, ``rationale``); ``prompt_version`` enters the cache key,
    so editing a prompt file and bumping its version re-asks the model while anything else is reused.
    """

    key: str
    task: str
    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str
    prompt_version: str
    images: tuple[ImageInput, ...] = ()
    temperature: float | None = 0.0
    """None: not sent, the server's default (OpenAI's is 1)."""
    max_tokens: int | None = None


@dataclass
class Usage:
    """Token and request counts of one task or of a whole run."""

    requests: int = 0
    http_calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["cost_usd"] = round(self.cost_usd, 6)
        return out


class Price(BaseModel):
    """USD as the provider bills a model or a tool: per million input and output tokens, and per call
    (each 0 unless given). The one price record: the LLM client's cost report, the extract stage's
    ``prices`` and the evaluation ledger's price table all hold these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: NonNegativeFloat = 0.0
    output_per_mtok: NonNegativeFloat = 0.0
    per_call: NonNegativeFloat = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of one call with these token counts."""
        tokens = (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6
        return tokens + self.per_call


PriceTable = dict[str, Price]
"""Prices by model or tool name; passed in by the caller (from params or ``--prices``), never built in."""


@dataclass(frozen=True)
class CachedAnswer:
    """A stored validated answer with the tokens it cost when it was first bought."""

    answer: dict[str, Any]
    raw: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class LLMResult:
    """The outcome of one request: the validated answer, or why there is none plus the raw reply."""

    key: str
    task: str
    cache_key: str
    ok: bool
    data: dict[str, Any] | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw_responses: list[str] = field(default_factory=list)

    @classmethod
    def from_cache(cls, request: LLMRequest, cache_key: str, hit: CachedAnswer) -> Self:
        """The answer stored under ``cache_key``, with the tokens it cost when it was first bought."""
        return cls(
            key=request.key,
            task=request.task,
            cache_key=cache_key,
            ok=True,
            data=hit.answer,
            raw=hit.raw,
            cached=True,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
        )
