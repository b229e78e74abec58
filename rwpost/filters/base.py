"""The filter contract: a typed input, a measurement, and a decision from thresholds (STYLE.md 1, 10).

A filter is a small object with a ``name``, a ``version`` and two methods:

* ``measure(candidate) -> dict``: the expensive, threshold-free measurement (OCR text, image size,
  perceptual hashes, an LLM's answer). The runner caches it on disk under
  ``(name, version, input_key(candidate))``, so changing a threshold never measures again.
* ``decide(measurement, params) -> FilterDecision``: cheap, pure, driven by the thresholds passed in
  (from ``params.yaml`` at the edge).

A :class:`CorpusFilter` (near-duplicates) decides over all measurements at once instead. Batching,
progress, counting and writing the decisions belong to :mod:`rwpost.filters.runner`, not to filters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

KEEP = "ok"
"""The reason code of a kept record."""


class Candidate(BaseModel):
    """What the filters see of one record: text sizes, the claim, the post and its one image."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    word_count: int | None = Field(default=None, description="words of the fact-check article")
    claim: str | None = None
    post_text: str | None = None
    image_url: str | None = Field(default=None, description="the post image as linked in the article")
    image_path: str | None = Field(
        default=None, description="local file of the image, absolute or cwd-relative"
    )
    image_sha256: str | None = Field(default=None, description="content hash of the image file")
    image_error: str | None = Field(
        default=None, description="why the image could not be fetched, e.g. 'http 404'"
    )
    ocr_text: str | None = Field(
        default=None, description="OCR of the image already known (e.g. released records)"
    )


class FilterDecision(BaseModel):
    """A filter's verdict before it becomes a :class:`rwpost.records.Decision` row."""

    model_config = ConfigDict(extra="forbid")

    keep: bool
    reason: str = Field(
        description="a short code ('ok', 'too_short', 'watermark', ...) counted in the funnel"
    )
    score: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)


def content_key(inputs: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a filter's inputs: the measurement cache key."""
    blob = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def image_inputs(candidate: Candidate) -> dict[str, Any]:
    """The image part of a cache key: its content hash when known, else where it was looked for."""
    if candidate.image_sha256:
        return {"image_sha256": candidate.image_sha256}
    return {
        "image_path": candidate.image_path,
        "image_url": candidate.image_url,
        "image_error": candidate.image_error,
    }


@runtime_checkable
class RecordFilter(Protocol):
    """A filter that decides each record on its own."""

    name: ClassVar[str]
    version: str

    def input_key(self, candidate: Candidate) -> str:
        """Hash of exactly what :meth:`measure` reads (image by content, texts by value)."""
        ...

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        """The expensive, threshold-free measurement (JSON-serialisable)."""
        ...

    def decide(self, measurement: Mapping[str, Any], params: Mapping[str, Any]) -> FilterDecision:
        """Keep or drop from one measurement and the thresholds in ``params``."""
        ...


@runtime_checkable
class CorpusFilter(Protocol):
    """A filter whose decisions depend on all records together (e.g. near-duplicate clusters)."""

    name: ClassVar[str]
    version: str

    def input_key(self, candidate: Candidate) -> str: ...

    def measure(self, candidate: Candidate) -> dict[str, Any]: ...

    def decide_all(
        self, measurements: Mapping[str, Mapping[str, Any]], params: Mapping[str, Any]
    ) -> dict[str, FilterDecision]:
        """Decisions for every record id in ``measurements`` (in their order)."""
        ...


Filter = RecordFilter | CorpusFilter
