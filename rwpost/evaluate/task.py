"""What is asked of a detector: the input cell, the label space, the failure policy, the evidence sampler.

A cell of the authors' input grid is a :class:`Cell`: **T** (claim + post text), **T+I** (+ the image and
its OCR text), **T+E** (+ gold evidence), **T+I+E**, **T+W** / **T+I+W** (the detector searches the open
web itself, through the leakage guard), and the evidence-k ablation (``T+E k=3``: k gold items per
claim, nested subsets drawn per claim with a fixed seed). The names ``closed-book``, ``gold-evidence``
and ``open-web`` of earlier versions are read as aliases (of T+I, T+I+E and T+I+W) and nowhere shown but
in the run manifest. An :class:`EvalTask` binds a cell to the label space of the evaluated samples, the
failure policy and the evidence seed; the runner builds it once per run and hands it to the detector's
``fit`` and ``predict``, and blinds every sample with it (:meth:`EvalTask.blind`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

import numpy as np

from rwpost.errors import ConfigError
from rwpost.ids import stable_seed
from rwpost.labels import CHALLENGING_LABELS, MAIN_LABELS, Label
from rwpost.records import Evidence, Sample

EVIDENCE_SEED = 42
"""Seed of the evidence-k subsets (the authors' baseline script uses 42)."""

EvidenceSampler = Literal["rwpost", "authors"]
"""How evidence-k subsets are drawn: ``rwpost`` (:func:`evidence_subset`, per claim id, stable whatever the
data's order) or ``authors`` (:func:`authors_evidence_subset`, their baseline runner's draw, per position)."""


class EvidenceSource(StrEnum):
    """Where a cell's evidence comes from, besides the post."""

    NONE = "none"
    GOLD = "gold"
    """The sample's gold evidence items, as content only (an upper bound on retrieval)."""
    WEB = "web"
    """The detector's own searches, through the leakage guard (:mod:`rwpost.evaluate.leakage`)."""


_CELL = re.compile(r"^T(?P<image>\+?I)?(?P<evidence>\+?[EW])?(?:(?:_|\s+)k=?(?P<k>\d+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Cell:
    """One cell of the input grid: what a detector sees besides the claim and the post text.

    ``image``: the post image and its OCR text; ``evidence``: none, gold or the open web; ``k``: at most
    ``k`` gold evidence items per claim (a seeded subset, nested: the k=1 item is among the k=3 ones).
    ``alias``: the older name the cell was given by (``closed-book``...), kept for the manifest only.
    """

    image: bool = True
    evidence: EvidenceSource = EvidenceSource.NONE
    k: int | None = None
    alias: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.k is not None and (self.k < 1 or self.evidence is not EvidenceSource.GOLD):
            raise ConfigError(f"evidence-k needs gold evidence and k >= 1, got k={self.k} in {self.name}")

    @property
    def name(self) -> str:
        """``T``, ``T+I``, ``T+E``, ``T+I+E``, ``T+W``, ``T+I+W`` (`` k=3`` appended)."""
        suffix = {EvidenceSource.NONE: "", EvidenceSource.GOLD: "+E", EvidenceSource.WEB: "+W"}
        name = "T" + ("+I" if self.image else "") + suffix[self.evidence]
        return name + (f" k={self.k}" if self.k is not None else "")

    @property
    def slug(self) -> str:
        """A folder-safe name, as the authors' results folders: ``T``, ``TI``, ``TE_k3``, ``TIW``."""
        return self.name.replace("+", "").replace(" k=", "_k")

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, value: Cell | str) -> Cell:
        """A cell from its name (``T+I+E``, ``TE_k3``, ``T+E k=3``, ``T+W``) or an alias (``closed-book``)."""
        if isinstance(value, Cell):
            return value
        text = str(value).strip()
        if text.lower() in ALIASES:
            return replace(ALIASES[text.lower()], alias=text.lower())
        found = _CELL.match(text)
        if not found:
            names = ", ".join([*CANONICAL, "T+E k=3", *ALIASES])
            raise ConfigError(f"unknown cell {text!r}; known: {names}")
        letter = (found.group("evidence") or "").lstrip("+").upper()
        evidence = {"": EvidenceSource.NONE, "E": EvidenceSource.GOLD, "W": EvidenceSource.WEB}[letter]
        k = int(found.group("k")) if found.group("k") else None
        return cls(image=bool(found.group("image")), evidence=evidence, k=k)


ALIASES: dict[str, Cell] = {
    "closed-book": Cell(image=True, evidence=EvidenceSource.NONE),
    "gold-evidence": Cell(image=True, evidence=EvidenceSource.GOLD),
    "open-web": Cell(image=True, evidence=EvidenceSource.WEB),
}
"""Names of earlier versions, read as the cells they meant (all with the image)."""

CANONICAL: tuple[str, ...] = ("T", "T+I", "T+E", "T+I+E", "T+W", "T+I+W")

GRID: tuple[str, ...] = ("T", "T+I", "T+E", "T+I+E")
"""The four cells of the authors' baseline script, without the evidence-k ablation."""


def grid(cells: Sequence[str | Cell] | None = None, ks: Sequence[int] = ()) -> list[Cell]:
    """The ``cells`` (default :data:`GRID`), plus one cell per k of every gold-evidence cell; ``ks``
    with no gold-evidence cell to apply them to is an error (it would be silently ignored)."""
    parsed = [Cell.parse(x) for x in (cells or GRID)]
    gold = [c for c in parsed if c.evidence is EvidenceSource.GOLD and c.k is None]
    if ks and not gold:
        names = ", ".join(c.name for c in parsed)
        raise ConfigError(
            f"--k {', '.join(map(str, ks))} needs a gold-evidence cell (T+E, T+I+E); got {names}"
        )
    out = list(parsed)
    for cell in gold:
        out += [replace(cell, k=k, alias=None) for k in ks]
    return list(dict.fromkeys(out))


class EvidenceKBeyond(ConfigError):
    """An evidence-k beyond every sample's gold evidence (:func:`check_evidence_k`): the data's doing, so
    the evaluate stage sets its run aside with this reason, as a split too small to train on."""


def check_evidence_k(cell: Cell | str, samples: Sequence[Sample]) -> None:
    """Refuse an evidence-k cell whose k is above the gold evidence of every sample: each would get all of
    its items, the plain gold-evidence cell under another name (accepted silently before). Data without
    any gold evidence is not checked: a predictions file's cell names what the other system saw."""
    cell = Cell.parse(cell)
    if cell.k is None:
        return
    most = max((len(s.evidence) for s in samples), default=0)
    if 0 < most < cell.k:
        plain = replace(cell, k=None, alias=None)
        raise EvidenceKBeyond(
            f"--k {cell.k} ({cell}): beyond every sample's gold evidence (the most any sample has is "
            f"{most}), so each would get all of its items, as in {plain}: give a k of {most} or less"
        )


def evidence_subset(sample: Sample, k: int, seed: int = EVIDENCE_SEED) -> list[Evidence]:
    """At most ``k`` of the sample's evidence items: the first ``k`` of one seeded permutation per claim
    (so subsets are nested as k grows), in their original order."""
    items = list(sample.evidence)
    if len(items) <= k:
        return items
    order = np.random.default_rng([seed, stable_seed(sample.id)]).permutation(len(items))
    return [items[i] for i in sorted(order[:k])]


def authors_evidence_subset(sample: Sample, k: int, seed: int, claim_index: int) -> list[Evidence]:
    """The authors' evidence-k draw, item for item (``sample_evidence`` in ``baseline_lvlms/
    run_baseline_eval.py`` of ``xudanni0927/AgentFact`` at 08a29dc1, MIT): the items that have content (their
    loader keeps no other), all of them when there are at most ``k``, else the first ``k`` of one shuffle
    by ``random.Random(seed + claim_index)``, in the shuffled order. ``claim_index`` is the claim's position
    in the data their loader kept (see ``--denominators authors``)."""
    items = [e for e in sample.evidence if e.content]
    if len(items) <= k:
        return items
    order = items[:]
    random.Random(seed + claim_index).shuffle(order)
    return order[:k]


def task_labels(samples: Sequence[Sample]) -> tuple[Label, ...]:
    """The label space of the task the samples pose: the main set's 3 classes, the challenging set's 2,
    or all five for data mixing both."""
    gold = {s.label for s in samples if s.label is not None}
    if gold <= set(MAIN_LABELS):
        return MAIN_LABELS
    if gold <= set(CHALLENGING_LABELS):
        return CHALLENGING_LABELS
    return tuple(Label)


def opaque_url(sample_id: str, kind: str = "article") -> str:
    """What a detector sees instead of the article URL (``kind`` article) or the image link (image)."""
    return f"urn:rwpost:{kind}:{sample_id}"


def blind(
    sample: Sample,
    cell: Cell | str,
    *,
    keep_label: bool = False,
    blocklist: Any = None,
    evidence_seed: int = EVIDENCE_SEED,
    claim_index: int | None = None,
) -> Sample:
    """The sample as a detector may see it in ``cell``.

    Always removed: the gold verdict and rationale, ``extra`` (released records keep source fields
    there, the original rating among them), the watermark keywords, the provenance source; the article
    URL and the image link become opaque ids (:func:`opaque_url`), a post URL on a fact-check domain
    (``blocklist``, default the built-in fact-checkers) is dropped. Image and OCR stay only in image
    cells; gold evidence only in gold-evidence cells, as content only (no description, source or URL),
    ``k`` items at most (:func:`evidence_subset`; the authors' draw, :func:`authors_evidence_subset`, when
    the claim's position ``claim_index`` is given).
    """
    from rwpost.evaluate.leakage import FACT_CHECK_DOMAINS, BlockList

    cell = Cell.parse(cell)
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
    if cell.evidence is not EvidenceSource.GOLD:
        update["evidence"] = []
    else:
        if cell.k is None:
            items = list(sample.evidence)
        elif claim_index is not None:
            items = authors_evidence_subset(sample, cell.k, evidence_seed, claim_index)
        else:
            items = evidence_subset(sample, cell.k, evidence_seed)
        update["evidence"] = [
            e.model_copy(update={"description": None, "source": None, "url": None}) for e in items
        ]
    return sample.model_copy(update=update)


@dataclass(frozen=True)
class EvalTask:
    """One evaluation task: the cell, the label space, the failure policy and the evidence sampler's seed,
    plus the data view it was drawn from (``subset``, ``split``; for the record). Built once per run."""

    cell: Cell
    labels: tuple[Label, ...] = MAIN_LABELS
    failures: str = "wrong"
    """How failed answers are scored (:data:`rwpost.evaluate.metrics.FAILURE_POLICIES`)."""
    evidence_seed: int = EVIDENCE_SEED
    subset: str | None = None
    split: str | None = None
    evidence_sampler: EvidenceSampler = "rwpost"
    positions: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)
    """Each evaluated sample's position in the data (by id), for the authors' evidence sampler; a sample
    outside it (a training sample) is drawn by :func:`evidence_subset`."""

    @classmethod
    def of(cls, cell: Cell | str, samples: Sequence[Sample], **values: Any) -> EvalTask:
        """The task of ``cell`` over ``samples``: their label space (:func:`task_labels`), and their
        positions when the authors' evidence sampler draws by position; an evidence-k above every
        sample's evidence is refused (:func:`check_evidence_k`)."""
        check_evidence_k(cell, samples)
        if values.get("evidence_sampler") == "authors":
            values["positions"] = {s.id: i for i, s in enumerate(samples)}
        return cls(Cell.parse(cell), task_labels(samples), **values)

    @property
    def label_names(self) -> list[str]:
        """The label space as strings (``["True", "False", "Unproven"]``), for prompts and schemas."""
        return [str(x) for x in self.labels]

    def require_labels(self, detector: str, answers: Sequence[Label] = MAIN_LABELS, hint: str = "") -> None:
        """Refuse, in one line, a task whose label space holds a label ``detector`` never answers."""
        outside = [str(x) for x in self.labels if x not in answers]
        if outside:
            raise ConfigError(
                f"the {detector} detector answers {', '.join(map(str, answers))}, not {', '.join(outside)}"
                + (f": {hint}" if hint else "")
            )

    def blind(self, sample: Sample, *, keep_label: bool = False, blocklist: Any = None) -> Sample:
        """The sample as the detector may see it in this task (:func:`blind`)."""
        return blind(
            sample,
            self.cell,
            keep_label=keep_label,
            blocklist=blocklist,
            evidence_seed=self.evidence_seed,
            claim_index=self.positions.get(sample.id) if self.evidence_sampler == "authors" else None,
        )


__all__ = [
    "ALIASES",
    "CANONICAL",
    "EVIDENCE_SEED",
    "GRID",
    "Cell",
    "EvalTask",
    "EvidenceSampler",
    "EvidenceKBeyond",
    "EvidenceSource",
    "blind",
    "check_evidence_k",
    "authors_evidence_subset",
    "evidence_subset",
    "grid",
    "opaque_url",
    "task_labels",
]
