"""The filter stage as one function: read the stage inputs, run the filters, write every output.

Shared by ``pipelines/filter.py`` (DVC) and ``rwpost filter`` (CLI); both pass parameters in
explicitly (the ``filter:`` section of params.yaml), nothing here reads configuration itself.

Outputs under ``out_dir``: ``decisions.jsonl`` (one :class:`rwpost.records.Decision` per record and
filter), ``verdicts.jsonl`` (one summary per record), ``funnel.json`` (counts in filter order),
``rejects.jsonl`` (input lines that did not parse), ``summary.json`` (totals and the thresholds used)
and the measurement cache ``cache/``. ``funnel.json`` is a list of steps (``step``, ``in``,
``removed``, ``out``, ``reasons``) that later stages extend and the dataset card prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.filters import DEFAULT_ORDER, REGISTRY
from rwpost.filters.base import Candidate, Filter
from rwpost.filters.cache import MeasurementCache
from rwpost.filters.candidates import build_candidates, fetch_missing
from rwpost.filters.llm import TextJudge, VisionJudge
from rwpost.filters.runner import RunResult, run_filters
from rwpost.io import write_json, write_jsonl
from rwpost.records import Reject

STAGE_DEFAULTS: dict[str, Any] = {
    "order": list(DEFAULT_ORDER),
    "measure_all": False,
    "workers": 1,
    "fetch_missing": False,
    "use_given_ocr": True,
}


def build_filters(
    order: Sequence[str],
    *,
    use_given_ocr: bool = True,
    vision_judge: VisionJudge | None = None,
    text_judge: TextJudge | None = None,
    judge_id: str | None = None,
) -> list[Filter]:
    """Filter instances in funnel order; judges (LLM callables) are optional, offline otherwise."""
    unknown = [name for name in order if name not in REGISTRY]
    if unknown:
        raise ConfigError(f"filter.order: unknown filter(s) {unknown}; known: {sorted(REGISTRY)}")
    out: list[Filter] = []
    for name in order:
        if name == "watermark":
            out.append(REGISTRY[name](use_given_ocr=use_given_ocr, judge=vision_judge, judge_id=judge_id))
        elif name == "necessity":
            out.append(REGISTRY[name](judge=text_judge, judge_id=judge_id))
        else:
            out.append(REGISTRY[name]())
    return out


def run_candidates(
    candidates: Sequence[Candidate],
    params: Mapping[str, Any],
    out_dir: str | Path,
    *,
    rejects: Sequence[Reject] = (),
    vision_judge: VisionJudge | None = None,
    text_judge: TextJudge | None = None,
    judge_id: str | None = None,
    progress: bool = True,
) -> RunResult:
    """Run the configured filters over candidates and write all outputs atomically under ``out_dir``."""
    p = {**STAGE_DEFAULTS, **params}
    out = Path(out_dir)
    if p["fetch_missing"]:
        candidates = fetch_missing(candidates, out / "cache" / "images")
    filters = build_filters(
        p["order"],
        use_given_ocr=p["use_given_ocr"],
        vision_judge=vision_judge,
        text_judge=text_judge,
        judge_id=judge_id,
    )
    sections = {name: dict(p.get(name) or {}) for name in p["order"]}
    with MeasurementCache(out / "cache" / "measurements.sqlite") as cache:
        result = run_filters(
            candidates,
            filters,
            sections,
            cache=cache,
            measure_all=p["measure_all"],
            workers=p["workers"],
            progress=progress,
        )
    write_jsonl(out / "decisions.jsonl", result.decisions)
    write_jsonl(out / "verdicts.jsonl", result.verdicts)
    write_jsonl(out / "rejects.jsonl", rejects)
    write_json(out / "funnel.json", result.funnel())
    summary = {
        **result.totals(),
        "rejected_input_lines": len(rejects),
        "order": list(p["order"]),
        "params": sections,
    }
    write_json(out / "summary.json", summary)
    return result


def run_stage(
    tagged_path: str | Path,
    extractions_path: str | Path | None,
    crawl_path: str | Path | None,
    out_dir: str | Path,
    params: Mapping[str, Any],
    *,
    crawl_root: str | Path | None = None,
    progress: bool = True,
) -> RunResult:
    """The DVC stage: stage inputs in, decisions + verdicts + funnel out (offline judges only)."""
    rejects: list[Reject] = []
    candidates = build_candidates(
        tagged_path, extractions_path, crawl_path, crawl_root=crawl_root, rejects=rejects
    )
    return run_candidates(candidates, params, out_dir, rejects=rejects, progress=progress)
