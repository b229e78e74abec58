"""Run filters in order over candidates: measure (cached), decide, count, and keep every decision.

The runner, not the filters, owns batching, worker threads, progress, the measurement cache and the
funnel: for each filter in order, how many records entered, were kept, and were dropped for which
reason. The funnel is the dataset card's source; no count is computed twice (STYLE.md 2).
A record dropped by one filter is not measured by later ones unless ``measure_all`` is set (OCR and LLM
calls are the expensive part); its data and every decision made about it are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from rwpost.filters.base import Candidate, CorpusFilter, Filter, FilterDecision
from rwpost.filters.cache import MeasurementCache
from rwpost.records import Decision


class Verdict(BaseModel):
    """The filter stage's summary of one record: kept or not, by whom, and the fields later stages use."""

    model_config = ConfigDict(extra="forbid")

    id: str
    keep: bool
    dropped_by: str | None = None
    reason: str = "ok"
    cluster_id: str | None = None
    watermarked: bool | None = None
    watermark_keywords: list[str] = Field(default_factory=list)
    ocr: str | None = None
    image_required: str | None = None


@dataclass
class FunnelStep:
    """One filter's line in the funnel."""

    filter: str
    version: str
    entered: int = 0
    kept: int = 0
    dropped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    measured: int = 0
    cached: int = 0


@dataclass
class FilterResult:
    """Everything one run produced."""

    decisions: list[Decision]
    verdicts: list[Verdict]
    steps: list[FunnelStep]

    def funnel(self) -> list[dict[str, Any]]:
        """The funnel in the dataset card's shape: per filter in order, ``step``/``in``/``removed``/``out``
        and ``reasons`` (what was dropped and why), plus the filter version. Nothing here depends on what
        the measurement cache held (that is :meth:`cache_use`), so a rebuild writes the same bytes."""
        return [
            {
                "step": f"filter: {s.filter}",
                "filter": s.filter,
                "version": s.version,
                "in": s.entered,
                "removed": s.dropped,
                "out": s.kept,
                "reasons": dict(sorted(s.reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            }
            for s in self.steps
        ]

    def cache_use(self) -> list[dict[str, Any]]:
        """Per filter: how many records this run measured and how many came from the measurement cache."""
        return [{"filter": s.filter, "measured": s.measured, "from_cache": s.cached} for s in self.steps]

    def totals(self) -> dict[str, int]:
        """Records in and records kept by all filters."""
        return {"input": len(self.verdicts), "kept": sum(v.keep for v in self.verdicts)}


def _measure_all(
    flt: Filter,
    candidates: Sequence[Candidate],
    cache: MeasurementCache | None,
    step: FunnelStep,
    workers: int,
    progress: bool,
) -> dict[str, dict[str, Any]]:
    """Measurements for ``candidates`` (cache first), in their order."""
    keys = {c.id: flt.input_key(c) for c in candidates}
    out: dict[str, dict[str, Any]] = {}
    todo: list[Candidate] = []
    for candidate in candidates:
        hit = cache.get(flt.name, flt.version, keys[candidate.id]) if cache else None
        if hit is None:
            todo.append(candidate)
        else:
            out[candidate.id] = hit
    step.cached = len(candidates) - len(todo)

    def one(candidate: Candidate) -> tuple[str, dict[str, Any]]:
        measurement = flt.measure(candidate)
        if cache:
            cache.put(flt.name, flt.version, keys[candidate.id], measurement)
        return candidate.id, measurement

    bar = tqdm(total=len(todo), desc=f"measure {flt.name}", unit="rec", disable=not progress or not todo)
    with bar:
        if workers > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for rid, measurement in pool.map(one, todo):
                    out[rid] = measurement
                    bar.update(1)
        else:
            for candidate in todo:
                rid, measurement = one(candidate)
                out[rid] = measurement
                bar.update(1)
    step.measured = len(todo)
    return {c.id: out[c.id] for c in candidates}


def run_filters(
    candidates: Iterable[Candidate],
    filters: Sequence[Filter],
    params: Mapping[str, Mapping[str, Any]],
    *,
    cache: MeasurementCache | None = None,
    measure_all: bool = False,
    workers: int = 1,
    progress: bool = True,
    on_step: Callable[[FunnelStep], None] | None = None,
) -> FilterResult:
    """Apply ``filters`` in order; ``params[filter.name]`` holds each filter's thresholds."""
    records = list(candidates)
    ids = [c.id for c in records]
    if len(set(ids)) != len(ids):
        duplicated = sorted(rid for rid, n in Counter(ids).items() if n > 1)
        raise ValueError(f"candidate ids must be unique; repeated: {duplicated[:5]}")
    alive = set(ids)
    dropped_by: dict[str, tuple[str, str]] = {}
    decisions: list[Decision] = []
    final: dict[str, dict[str, FilterDecision]] = {rid: {} for rid in ids}
    steps: list[FunnelStep] = []
    for flt in filters:
        step = FunnelStep(filter=flt.name, version=flt.version)
        targets = records if measure_all else [c for c in records if c.id in alive]
        measurements = _measure_all(flt, targets, cache, step, workers, progress)
        section = params.get(flt.name, {})
        if isinstance(flt, CorpusFilter):
            verdicts = flt.decide_all(measurements, section)
        else:
            verdicts = {rid: flt.decide(m, section) for rid, m in measurements.items()}  # type: ignore[union-attr]
        reasons: Counter[str] = Counter()
        for rid, verdict in verdicts.items():
            counted = rid in alive
            final[rid][flt.name] = verdict
            details = dict(verdict.details)
            if not counted:
                details["after_drop_by"] = dropped_by[rid][0]
            decisions.append(
                Decision(
                    id=rid,
                    filter=flt.name,
                    keep=verdict.keep,
                    reason=verdict.reason,
                    score=verdict.score,
                    details=details,
                )
            )
            if counted:
                step.entered += 1
                if verdict.keep:
                    step.kept += 1
                else:
                    step.dropped += 1
                    reasons[verdict.reason] += 1
                    dropped_by[rid] = (flt.name, verdict.reason)
        alive -= set(dropped_by)
        step.reasons = dict(reasons)
        steps.append(step)
        if on_step:
            on_step(step)
    verdict_rows = [_summarise(rid, final[rid], dropped_by.get(rid)) for rid in ids]
    return FilterResult(decisions=decisions, verdicts=verdict_rows, steps=steps)


def _summarise(rid: str, by_filter: Mapping[str, FilterDecision], dropped: tuple[str, str] | None) -> Verdict:
    """Fold one record's decisions into its :class:`Verdict`."""
    row = Verdict(id=rid, keep=dropped is None)
    if dropped:
        row.dropped_by, row.reason = dropped
    if (w := by_filter.get("watermark")) is not None:
        row.watermarked = bool(w.details.get("watermarked"))
        row.watermark_keywords = list(w.details.get("matched_keywords", []))
        row.ocr = w.details.get("ocr_text") or None
    if (n := by_filter.get("necessity")) is not None:
        row.image_required = n.details.get("image_required")
    if (d := by_filter.get("neardup")) is not None:
        row.cluster_id = d.details.get("cluster_id")
    return row
