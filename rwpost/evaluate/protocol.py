"""The detector protocol: what any misinformation detector gives the runner (paper sections IV-V).

A detector sees a batch of *blinded* samples (no label, rationale or key points; gold evidence only in
the ``gold-evidence`` setting) and returns one :class:`Prediction` per sample: a label, optional class
probabilities, an explanation, the evidence URLs it used and a ledger of its model and tool calls.
Trained detectors also implement :meth:`TrainableDetector.fit`. Everything else (batching, resume,
progress, metrics, reports) is the runner's job, so wrapping a new system is one small class.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rwpost.labels import Label
from rwpost.records import Sample


class Setting(StrEnum):
    """What a detector may see besides the post (paper section V and the gold-evidence ablation)."""

    CLOSED_BOOK = "closed-book"
    """Claim, post text, image and OCR only."""
    GOLD_EVIDENCE = "gold-evidence"
    """The sample's gold evidence items are added (an upper bound on retrieval)."""
    OPEN_WEB = "open-web"
    """The detector retrieves on its own, through the leakage-safe wrapper (``rwpost.evaluate.leakage``)."""


class Call(BaseModel):
    """One model or tool call a detector made for a sample: the ledger's unit."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(default="model", description="'model' (LLM, VLM, encoder) or 'tool' (search, fetch)")
    name: str = Field(description="model name or tool name; the price table is keyed by it")
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = Field(default=None, description="if None, the price table prices it")
    cached: bool = False


class Prediction(BaseModel):
    """A detector's output for one sample."""

    model_config = ConfigDict(extra="forbid")

    id: str
    label: Label | None = Field(default=None, description="None when the detector gave no usable answer")
    probabilities: dict[Label, float] | None = None
    explanation: str | None = None
    evidence_urls: list[str] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why there is no label (parse failure, missing row)")


@runtime_checkable
class Detector(Protocol):
    """Anything that labels samples. ``name`` and ``config()`` go into the run manifest."""

    name: str

    def config(self) -> dict[str, Any]:
        """The settings that make two runs comparable (model, prompt version, seed...), JSON-able."""
        ...

    def predict(self, samples: Sequence[Sample], setting: Setting) -> list[Prediction]:
        """One prediction per sample, in any order, ids matching the samples."""
        ...


@runtime_checkable
class TrainableDetector(Detector, Protocol):
    """A detector that learns from labelled samples before it predicts (baselines, classifiers)."""

    def fit(self, samples: Sequence[Sample], setting: Setting) -> None:
        """Learn from labelled training samples (blinded the same way except for the label)."""
        ...


@runtime_checkable
class CheckingDetector(Detector, Protocol):
    """A detector that can report problems with its inputs against the evaluated ids (predictions files)."""

    def check(self, samples: Sequence[Sample]) -> dict[str, Any]:
        """A JSON-able report of input problems (unknown, missing, duplicate ids...)."""
        ...


def prompt_hashes(detector: Detector) -> dict[str, str]:
    """The detector's prompt file hashes, if it has prompts (for the run manifest)."""
    getter = getattr(detector, "prompt_hashes", None)
    return dict(getter()) if callable(getter) else {}


def blind(sample: Sample, setting: Setting, *, keep_label: bool = False) -> Sample:
    """The sample as a detector may see it in ``setting``: gold verdict and rationale removed.

    Gold evidence stays only in the ``gold-evidence`` setting. ``extra`` is emptied because released
    records keep source fields there (the original rating among them).
    """
    update: dict[str, Any] = {"reasoning_logic": None, "key_points": None, "extra": {}}
    if not keep_label:
        update.update(label=None, label_original=None)
    if setting is not Setting.GOLD_EVIDENCE:
        update["evidence"] = []
    return sample.model_copy(update=update)
