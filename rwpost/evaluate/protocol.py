"""The detector protocol: what any misinformation detector gives the runner (paper sections IV-V).

A detector sees a batch of *blinded* samples (no label, rationale or key points, no article URL, slug
or image link; gold evidence as content only, and only where its cell allows) and returns one
:class:`Prediction` per sample: a label, optional class probabilities, an explanation, the evidence URLs
it used and a ledger of its model and tool calls. Trained detectors also implement
:meth:`TrainableDetector.fit`. Everything else (batching, resume, progress, metrics, reports) is the
runner's job, so wrapping a new system is one small class.

The input grid of the authors' baseline script is :class:`Inputs`: **T** (claim + post text), **T+I**
(+ the image and its OCR text), **T+E** (+ gold evidence), **T+I+E**, and the evidence-k ablation (k gold
items per claim, nested subsets drawn per claim with a fixed seed). The evidence axis keeps its names
(:class:`Setting`: closed-book, gold-evidence, open-web); the legacy names ``closed-book`` and
``gold-evidence`` are the cells with the image (T+I, T+I+E). Detectors declare what they can do with two
class attributes: ``retrieves`` (searches the web itself; required for open-web) and ``reads_images``
(its answers depend on the image; a missing image is then refused up front or fails the sample).

A detector that retrieves gets the run's leakage guard rather than building its own: when its constructor
takes a ``blocklist`` argument, the runner passes the run's
:class:`~rwpost.evaluate.leakage.BlockList` (``rwpost evaluate --blocked-domains``; like the secrets,
never part of the recorded options: the list's checksum is in the run identity). A detector with a
``leakage_report(predictions)`` method says what its guard dropped; the runner puts it in the manifest
and the report.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rwpost.errors import ConfigError
from rwpost.labels import CHALLENGING_LABELS, MAIN_LABELS, Label
from rwpost.records import Evidence, Sample


class Setting(StrEnum):
    """What a detector may see besides the post (paper section V and the gold-evidence ablation)."""

    CLOSED_BOOK = "closed-book"
    """Claim, post text, image and OCR only."""
    GOLD_EVIDENCE = "gold-evidence"
    """The sample's gold evidence items are added (an upper bound on retrieval)."""
    OPEN_WEB = "open-web"
    """The detector retrieves on its own, through the leakage-safe wrapper (``rwpost.evaluate.leakage``)."""


EVIDENCE_SEED = 42
"""Seed of the evidence-k subsets (the authors' baseline script uses 42)."""

_CELL = re.compile(r"^T(?P<image>\+?I)?(?P<evidence>\+?E)?(?:(?:_|:|@|\s+)k=?(?P<k>\d+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Inputs:
    """One cell of the input grid: what a detector sees besides the claim and the post text.

    ``image``: the post image and its OCR text; ``evidence``: the evidence axis; ``k``: at most ``k``
    gold evidence items per claim (a seeded subset, nested: the k=1 item is among the k=3 ones).
    ``legacy``: the cell was named by its evidence axis alone (``closed-book``, ``gold-evidence``,
    ``open-web``) and keeps that name in reports.
    """

    image: bool = True
    evidence: Setting = Setting.CLOSED_BOOK
    k: int | None = None
    seed: int = EVIDENCE_SEED
    legacy: bool = False

    def __post_init__(self) -> None:
        if self.k is not None and (self.k < 1 or self.evidence is not Setting.GOLD_EVIDENCE):
            raise ConfigError(f"evidence-k needs gold evidence and k >= 1, got k={self.k} in {self.evidence}")

    @property
    def name(self) -> str:
        """``T``, ``T+I``, ``T+E``, ``T+I+E`` (``k=3`` appended), or the legacy axis name."""
        if self.legacy:
            return str(self.evidence)
        name = "T" + ("+I" if self.image else "")
        if self.evidence is Setting.GOLD_EVIDENCE:
            name += "+E"
        elif self.evidence is Setting.OPEN_WEB:
            name += "+W"
        return name + (f" k={self.k}" if self.k is not None else "")

    @property
    def slug(self) -> str:
        """A folder-safe name, as the authors' results folders: ``T``, ``TI``, ``TE_k3``, ``open-web``."""
        if self.legacy:
            return str(self.evidence)
        return self.name.replace("+", "").replace(" k=", "_k")

    def __str__(self) -> str:
        return self.name

    @classmethod
    def of(cls, value: Inputs | Setting | str) -> Inputs:
        """A cell from an :class:`Inputs`, an evidence-axis name, or a grid name (``T+I+E``, ``TE_k3``,
        ``T+E k=3``, ``T+W``)."""
        if isinstance(value, Inputs):
            return value
        text = str(value).strip()
        try:
            return cls(image=True, evidence=Setting(text), legacy=True)
        except ValueError:
            pass
        web = re.sub(r"\+?W(?=$|[_:@\s])", "", text, count=1, flags=re.IGNORECASE)
        found = _CELL.match(web)
        if not found or (web != text and found.group("evidence")):
            names = ", ".join([*(s.value for s in Setting), "T", "T+I", "T+E", "T+I+E", "T+E k=3", "T+I+W"])
            raise ConfigError(f"unknown setting {text!r}; known: {names}")
        evidence = (
            Setting.OPEN_WEB
            if web != text
            else Setting.GOLD_EVIDENCE
            if found.group("evidence")
            else Setting.CLOSED_BOOK
        )
        k = int(found.group("k")) if found.group("k") else None
        return cls(image=bool(found.group("image")), evidence=evidence, k=k)


GRID: tuple[str, ...] = ("T", "T+I", "T+E", "T+I+E")
"""The four cells of the authors' baseline script, without the evidence-k ablation."""


def grid(settings: Sequence[str | Setting | Inputs] | None = None, ks: Sequence[int] = ()) -> list[Inputs]:
    """The cells ``settings`` (default :data:`GRID`), plus one cell per k of every gold-evidence cell."""
    cells = [Inputs.of(x) for x in (settings or GRID)]
    out = list(cells)
    for cell in cells:
        if cell.evidence is Setting.GOLD_EVIDENCE and cell.k is None:
            out += [Inputs(cell.image, cell.evidence, k, cell.seed, False) for k in ks]
    return list(dict.fromkeys(out))


def evidence_subset(sample: Sample, k: int, seed: int = EVIDENCE_SEED) -> list[Evidence]:
    """At most ``k`` of the sample's evidence items: the first ``k`` of one seeded permutation per claim
    (so subsets are nested as k grows), in their original order."""
    items = list(sample.evidence)
    if len(items) <= k:
        return items
    key = int.from_bytes(hashlib.sha256(sample.id.encode("utf-8")).digest()[:8], "big")
    order = np.random.default_rng([seed, key]).permutation(len(items))
    return [items[i] for i in sorted(order[:k])]


def task_labels(samples: Sequence[Sample]) -> tuple[Label, ...]:
    """The label space of the task the samples pose: the main set's 3 classes, the challenging set's 2,
    or all five for data mixing both."""
    gold = {s.label for s in samples if s.label is not None}
    if gold <= set(MAIN_LABELS):
        return MAIN_LABELS
    if gold <= set(CHALLENGING_LABELS):
        return CHALLENGING_LABELS
    return tuple(Label)


class Call(BaseModel):
    """One model or tool call a detector made for a sample: the ledger's unit."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(default="model", description="'model' (LLM, VLM, encoder) or 'tool' (search, fetch)")
    name: str = Field(description="model name or tool name; the price table is keyed by it")
    agent: str | None = Field(
        default=None,
        description="the agent or step of a multi-agent detector that made the call (e.g. 'agent-sp'); "
        "the ledger also totals calls by it",
    )
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


def leakage_report(detector: Detector, predictions: Sequence[Prediction]) -> dict[str, Any] | None:
    """What the detector's leakage guard dropped over ``predictions``, if it reports it (for the run
    manifest and report)."""
    getter = getattr(detector, "leakage_report", None)
    return dict(getter(predictions)) if callable(getter) else None


def opaque_url(sample_id: str, kind: str = "article") -> str:
    """What a detector sees instead of the article URL (``kind`` article) or the image link (image)."""
    return f"urn:rwpost:{kind}:{sample_id}"


def blind(
    sample: Sample, setting: Inputs | Setting | str, *, keep_label: bool = False, blocklist: Any = None
) -> Sample:
    """The sample as a detector may see it in ``setting`` (a cell of the input grid, or a legacy name).

    Always removed: the gold verdict and rationale, ``extra`` (released records keep source fields
    there, the original rating among them), the watermark keywords, the provenance source; the article
    URL and the image link become opaque ids (:func:`opaque_url`), a post URL on a fact-check domain
    (``blocklist``, default the built-in fact-checkers) is dropped. Image and OCR stay only in image
    cells; gold evidence only in gold-evidence cells, as content only (no description, source or URL),
    ``k`` items at most (:func:`evidence_subset`).
    """
    from rwpost.evaluate.leakage import FACT_CHECK_DOMAINS, BlockList

    cell = Inputs.of(setting)
    blocks = blocklist or BlockList(FACT_CHECK_DOMAINS)
    update: dict[str, Any] = {
        "reasoning_logic": None,
        "key_points": None,
        "extra": {},
        "news_url": opaque_url(sample.id),
        "watermark_keywords": [],
        "provenance": sample.provenance.model_copy(update={"source": None}),
    }
    if sample.post_url and blocks.blocked_domain(sample.post_url):
        update["post_url"] = None
    if not keep_label:
        update.update(label=None, label_original=None)
    if not cell.image:
        update.update(image=None, ocr=None, watermarked=None)
    elif sample.image is not None and sample.image.link:
        update["image"] = sample.image.model_copy(update={"link": opaque_url(sample.id, "image")})
    if cell.evidence is not Setting.GOLD_EVIDENCE:
        update["evidence"] = []
    else:
        items = evidence_subset(sample, cell.k, cell.seed) if cell.k is not None else sample.evidence
        update["evidence"] = [
            e.model_copy(update={"description": None, "source": None, "url": None}) for e in items
        ]
    return sample.model_copy(update=update)


def evidence_axis(setting: Inputs | Setting | str) -> Setting:
    """The evidence axis of a cell: what :meth:`Detector.predict` is told."""
    return Inputs.of(setting).evidence


def image_loadable(sample: Sample, image_root: str | Path | None = None) -> bool:
    """Whether the sample's image can be sent: bytes, or a file (relative paths under ``image_root``)."""
    if sample.image is None:
        return False
    if sample.image.bytes:
        return True
    if not sample.image.path:
        return False
    path = Path(sample.image.path)
    if not path.is_absolute() and image_root is not None:
        path = Path(image_root) / path
    return path.is_file()


def check_cell(
    detector: Detector,
    setting: Inputs | Setting | str,
    samples: Sequence[Sample],
    *,
    allow_missing_images: bool = False,
) -> dict[str, Any] | None:
    """Refuse a cell the detector cannot run honestly; the image counts of an image cell.

    Open-web needs ``detector.retrieves``; an image cell for a detector that ``reads_images`` refuses
    samples whose image cannot be loaded (unless ``allow_missing_images``: each then fails with a reason
    in the detector's answer). Returns ``{expected, missing, missing_ids, without_image}`` for image
    cells, None otherwise.
    """
    cell = Inputs.of(setting)
    name = getattr(detector, "name", type(detector).__name__)
    if cell.evidence is Setting.OPEN_WEB and not getattr(detector, "retrieves", False):
        raise ConfigError(
            f"detector {name!r} does not retrieve evidence, so it cannot run open-web "
            "(a detector that searches sets retrieves = True)"
        )
    if not cell.image:
        return None
    root = getattr(detector, "image_root", None)
    with_image = [s for s in samples if s.image is not None]
    missing = [s.id for s in with_image if not image_loadable(s, root)]
    if missing and getattr(detector, "reads_images", True) and not allow_missing_images:
        raise ConfigError(
            f"{len(missing)} of {len(with_image)} images cannot be loaded for {cell} (e.g. {missing[0]}; "
            "no bytes and no file under image_root): fix them or give --allow-missing-images"
        )
    return {
        "expected": len(with_image),
        "missing": len(missing),
        "missing_ids": missing,
        "without_image": len(samples) - len(with_image),
    }
