"""The filter contract: a typed input, a measurement, and a decision from thresholds (STYLE.md 1, 10).

A filter is a small object with a ``name``, a ``version`` and two methods:

* ``measure(candidate) -> dict``: the expensive, threshold-free measurement (OCR text, image size,
  perceptual hashes, an LLM's answer). The runner caches it on disk under
  ``(name, version, input_key(candidate))``, so changing a threshold never measures again.
* ``decide(measurement, params) -> FilterDecision``: cheap, pure, driven by the thresholds passed in:
  the filter's own ``Params`` model, declared next to ``decide`` (its ``params.yaml`` section,
  ``filter.<name>``, with the defaults and bounds in one place).

A filter is built by ``from_context(context)``: the :class:`FilterContext` carries the LLM judges (None:
offline) and how OCR text a record carries is used; a filter that needs a judge takes it from there.

A :class:`CorpusFilter` (near-duplicates) decides over all measurements at once instead. Batching,
progress, counting and writing the decisions belong to :mod:`rwpost.filters.runner`, not to filters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rwpost.filters.llm import TextJudge, VisionJudge
from rwpost.records import Candidate

KEEP = "ok"
"""The reason code of a kept record."""


Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A threshold that is a share, in [0, 1]."""


class Thresholds(BaseModel):
    """Base of a filter's ``Params``: its section of ``filter:`` in params.yaml; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class FilterContext:
    """What the stage hands every filter it builds (``from_context``): the LLM judges, None when offline."""

    use_given_ocr: bool = True
    """OCR text already on a record is used instead of reading the image."""
    vision_judge: VisionJudge | None = None
    text_judge: TextJudge | None = None
    judge_id: str | None = None
    """The judges' model name (part of a filter's version, so a new model measures again)."""


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
    Params: ClassVar[type[Thresholds]]
    version: str

    @classmethod
    def from_context(cls, context: FilterContext) -> Self:
        """The filter as the stage builds it."""
        ...

    def input_key(self, candidate: Candidate) -> str:
        """Hash of exactly what :meth:`measure` reads (image by content, texts by value)."""
        ...

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        """The expensive, threshold-free measurement (JSON-serialisable)."""
        ...

    def decide(self, measurement: Mapping[str, Any], params: Any) -> FilterDecision:
        """Keep or drop from one measurement and the thresholds in ``params`` (the filter's ``Params``)."""
        ...


@runtime_checkable
class CorpusFilter(Protocol):
    """A filter whose decisions depend on all records together (e.g. near-duplicate clusters)."""

    name: ClassVar[str]
    Params: ClassVar[type[Thresholds]]
    version: str

    @classmethod
    def from_context(cls, context: FilterContext) -> Self: ...

    def input_key(self, candidate: Candidate) -> str: ...

    def measure(self, candidate: Candidate) -> dict[str, Any]: ...

    def decide_all(
        self, measurements: Mapping[str, Mapping[str, Any]], params: Any
    ) -> dict[str, FilterDecision]:
        """Decisions for every record id in ``measurements`` (in their order)."""
        ...


Filter = RecordFilter | CorpusFilter
