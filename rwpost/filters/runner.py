"""Run filters in order over candidates: measure (cached), decide, count, and keep every decision.

The runner, not the filters, owns batching, worker threads, progress, the measurement cache and the
funnel: for each filter in order, how many records entered, were kept, and were dropped for which
reason (one :class:`rwpost.records.FunnelStep` per filter). The funnel is the dataset card's source; no
count is computed twice (STYLE.md 2). A record dropped by one filter is not measured by later ones unless
``measure_all`` is set (OCR and LLM calls are the expensive part); its data and every decision made about
it are kept. :class:`FilterSettings` is the typed ``filter:`` section the stage extends with its paths;
:func:`run_candidates` runs it and writes the outputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from rwpost.errors import ConfigError
from rwpost.filters import DEFAULT_ORDER, REGISTRY
from rwpost.filters.base import CorpusFilter, Filter, FilterContext, FilterDecision, Thresholds
from rwpost.filters.cache import MeasurementCache
from rwpost.filters.candidates import fetch_missing
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.filters.necessity import NecessityFilter
from rwpost.filters.size import SizeFilter
from rwpost.filters.watermark import WatermarkFilter
from rwpost.io import sha256_file, sorted_by_id, sorted_rejects, write_json, write_jsonl
from rwpost.records import Candidate, Decision, FilterVerdict, FunnelStep, Reject


class FilterSettings(BaseModel):
    """Which filters run, in which order, how, and each filter's own ``Params`` (its section by name)."""

    model_config = ConfigDict(extra="forbid", validate_by_name=False, validate_by_alias=True)

    order: list[str] = Field(default_factory=lambda: list(DEFAULT_ORDER))
    measure_all: bool = False
    """True: every filter measures and decides every record (the funnel counts stay the same)."""
    workers: PositiveInt = 1
    fetch_missing: bool = False
    """Download post images the crawl does not hold."""
    use_given_ocr: bool = True
    """OCR text already on a record is used instead of the image."""
    size: SizeFilter.Params = Field(default_factory=SizeFilter.Params, alias="size_limits")
    """Under ``size_limits``: DVC's run cache ignores params keys named ``size`` (treeverse/dvc#10296)."""
    necessity: NecessityFilter.Params = Field(default_factory=NecessityFilter.Params)
    watermark: WatermarkFilter.Params = Field(default_factory=WatermarkFilter.Params)
    neardup: NearDuplicateFilter.Params = Field(default_factory=NearDuplicateFilter.Params)

    @field_validator("order")
    @classmethod
    def _known_once(cls, order: list[str]) -> list[str]:
        problem = _order_problem(order)
        if problem:
            raise ValueError(problem)
        return order

    def sections(self) -> dict[str, Thresholds]:
        """Per filter in ``order``: its typed thresholds."""
        return {name: getattr(self, name) for name in self.order}

    def thresholds(self) -> dict[str, dict[str, Any]]:
        """Per filter in ``order``: the thresholds set in params (the others are the filter's defaults)."""
        return {name: section.model_dump(exclude_unset=True) for name, section in self.sections().items()}


def _order_problem(order: Sequence[str]) -> str | None:
    unknown = [name for name in order if name not in REGISTRY]
    if unknown:
        return f"unknown filter(s) {unknown}; known: {sorted(REGISTRY)}"
    twice = sorted({name for name in order if order.count(name) > 1})
    if twice:  # a second pass of a filter would count its removals twice in the funnel
        return f"{', '.join(twice)} named more than once"
    return None


def build_filters(order: Sequence[str], context: FilterContext | None = None) -> list[Filter]:
    """Filter instances in funnel order, each built from ``context`` (judges: None = offline)."""
    problem = _order_problem(order)
    if problem:
        raise ConfigError(f"filter.order: {problem}")
    return [REGISTRY[name].from_context(context or FilterContext()) for name in order]


@dataclass
class FilterResult:
    """Everything one run produced: decisions, one verdict per record, one funnel step per filter, and per
    filter how many records this run measured and how many came from the measurement cache (``cache_use``:
    run-specific, so never part of the funnel)."""

    decisions: list[Decision]
    verdicts: list[FilterVerdict]
    steps: list[FunnelStep]
    cache_use: list[dict[str, Any]]

    def totals(self) -> dict[str, int]:
        """Records in and records kept by all filters."""
        return {"input": len(self.verdicts), "kept": sum(v.keep for v in self.verdicts)}


MEASURE_BATCH = 16
"""Records per call of a filter that measures many at once (``measure_many``: the watermark filter's OCR
recognises the text boxes of all their images together) with one worker; each batch is cached when it
is done."""


def _measure_all(
    flt: Filter,
    candidates: Sequence[Candidate],
    cache: MeasurementCache | None,
    workers: int,
    progress: bool,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Measurements for ``candidates`` (cache first), in their order, and how many were measured.

    Each distinct input key is measured once: records whose key another record of this run already
    has (the same image bytes reposted) share its measurement (``repeats``), and a key the cache holds
    is read once. A filter with ``measure_many`` measures :data:`MEASURE_BATCH` keys per call."""
    keys = {c.id: flt.input_key(c) for c in candidates}
    by_key: dict[str, dict[str, Any]] = {}
    todo: dict[str, Candidate] = {}  # key -> the first record with it that the cache lacks
    for candidate in candidates:
        key = keys[candidate.id]
        if key in by_key or key in todo:
            continue
        hit = cache.get(flt.name, flt.version, key) if cache else None
        if hit is None:
            todo[key] = candidate
        else:
            by_key[key] = hit

    many = getattr(flt, "measure_many", None)
    # worker threads measure a record each (an LLM judge's calls overlap); one thread, a batch per call
    size = MEASURE_BATCH if many is not None and workers == 1 else 1

    def batch(items: list[tuple[str, Candidate]]) -> list[tuple[str, dict[str, Any]]]:
        found = many([c for _, c in items]) if many is not None else [flt.measure(items[0][1])]
        for (key, _), measurement in zip(items, found, strict=True):
            if cache:
                cache.put(flt.name, flt.version, key, measurement)
        return [(key, measurement) for (key, _), measurement in zip(items, found, strict=True)]

    from rich.console import Console
    from rich.progress import Progress

    pending = list(todo.items())
    batches = [pending[i : i + size] for i in range(0, len(pending), size)]
    bar = Progress(console=Console(stderr=True), transient=True, disable=not progress or not todo)
    with bar:
        task = bar.add_task(f"measure {flt.name}", total=len(todo))
        if workers > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for done in pool.map(batch, batches):
                    by_key.update(done)
                    bar.advance(task, len(done))
        else:
            for items in batches:
                done = batch(items)
                by_key.update(done)
                bar.advance(task, len(done))
    from_cache = sum(1 for c in candidates if keys[c.id] not in todo)
    use = {
        "filter": flt.name,
        "measured": len(todo),
        "from_cache": from_cache,
        "repeats": len(candidates) - from_cache - len(todo),
    }
    return {c.id: by_key[keys[c.id]] for c in candidates}, use


def run_filters(
    candidates: Iterable[Candidate],
    filters: Sequence[Filter],
    params: Mapping[str, Thresholds | Mapping[str, Any]],
    *,
    cache: MeasurementCache | None = None,
    measure_all: bool = False,
    workers: int = 1,
    progress: bool = True,
) -> FilterResult:
    """Apply ``filters`` in order; ``params[filter.name]`` holds each filter's thresholds (its ``Params``, or
    their values; missing: the defaults)."""
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
    cache_use: list[dict[str, Any]] = []
    for flt in filters:
        targets = records if measure_all else [c for c in records if c.id in alive]
        measurements, use = _measure_all(flt, targets, cache, workers, progress)
        cache_use.append(use)
        section = flt.Params.model_validate(params.get(flt.name, {}))
        if isinstance(flt, CorpusFilter):
            verdicts = flt.decide_all(measurements, section)
        else:
            verdicts = {rid: flt.decide(m, section) for rid, m in measurements.items()}  # type: ignore[union-attr]
        reasons: Counter[str] = Counter()
        kept = 0
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
                if verdict.keep:
                    kept += 1
                else:
                    reasons[verdict.reason] += 1
                    dropped_by[rid] = (flt.name, verdict.reason)
        alive -= set(dropped_by)
        # the card's shape; nothing here depends on what the measurement cache held (a rebuild writes the
        # same bytes)
        ordered = dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
        steps.append(
            FunnelStep.of(f"filter: {flt.name}", kept, ordered, filter=flt.name, version=flt.version)
        )
    verdict_rows = [_summarise(rid, final[rid], dropped_by.get(rid)) for rid in ids]
    return FilterResult(decisions=decisions, verdicts=verdict_rows, steps=steps, cache_use=cache_use)


def _summarise(
    rid: str, by_filter: Mapping[str, FilterDecision], dropped: tuple[str, str] | None
) -> FilterVerdict:
    """Fold one record's decisions into its :class:`FilterVerdict`."""
    row = FilterVerdict(id=rid, keep=dropped is None)
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


def run_candidates(
    candidates: Sequence[Candidate],
    settings: FilterSettings,
    out: Path,
    *,
    context: FilterContext | None = None,
    rejects: Sequence[Reject] = (),
    progress: bool = True,
) -> FilterResult:
    """Run the configured filters over candidates and write, atomically, under ``out``: ``decisions.jsonl``,
    ``verdicts.jsonl``, ``rejects.jsonl``, ``summary.json`` and ``cache/`` (the measurements and
    ``last_run.json``). The funnel is the caller's to write (it chains the earlier stages')."""
    if settings.fetch_missing:
        candidates = fetch_missing(candidates, out / "cache" / "images")
    context = context or FilterContext(use_given_ocr=settings.use_given_ocr)
    filters = build_filters(settings.order, context)
    with MeasurementCache(out / "cache" / "measurements.sqlite") as cache:
        result = run_filters(
            candidates,
            filters,
            settings.sections(),
            cache=cache,
            measure_all=settings.measure_all,
            workers=settings.workers,
            progress=progress,
        )
    write_jsonl(out / "decisions.jsonl", sorted_by_id(result.decisions))
    write_jsonl(out / "verdicts.jsonl", sorted_by_id(result.verdicts))
    write_jsonl(out / "rejects.jsonl", sorted_rejects(rejects))
    # run-specific (depends on what the cache held): beside the cache, outside what DVC hashes
    write_json(out / "cache" / "last_run.json", result.cache_use)
    summary = {
        **result.totals(),
        "rejected_input_lines": len(rejects),
        "order": list(settings.order),
        "params": settings.thresholds(),
    }
    write_json(out / "summary.json", summary)
    return result


INPUTS_FILE = Path("cache") / "inputs.json"
"""Under a filter run's ``out``: the checksums of the input files of the run that wrote its outputs."""


def inputs_of(tagged: Path, extractions: Path | None, crawl_file: Path | None) -> dict[str, str | None]:
    """The identity of a run's input files (sha256 of each; None for a file that does not exist), so a
    rerun can tell its own earlier outputs (replaced: new thresholds) from another run's (kept unless
    asked)."""
    return {
        "tagged": sha256_file(tagged),
        "extractions": sha256_file(extractions) if extractions is not None else None,
        "crawl": sha256_file(crawl_file) if crawl_file is not None and crawl_file.is_file() else None,
    }
