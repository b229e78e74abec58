"""Stage ``filter``: size, image necessity, watermark and near-duplicate filters (paper III-A, III-C).

Reads the tagged articles, the extractions and the crawl store; writes under ``out``: ``decisions.jsonl``
(one :class:`rwpost.records.Decision` per record and filter), ``verdicts.jsonl`` (one summary per record),
``funnel.json`` (the funnel so far, then the filters' steps, which assemble and split extend for the dataset
card), ``rejects.jsonl`` (input lines that did not validate), ``summary.json`` (totals and the thresholds
set) and the measurement cache ``cache/``. With ``llm: true`` the necessity and watermark filters also ask
an LLM (Tables S2, S1) with the credentials from the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_MODEL``); without it they run offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, create_model, field_validator, model_validator

from rwpost.errors import ConfigError
from rwpost.filters import DEFAULT_ORDER, REGISTRY, neardup, necessity, size, watermark
from rwpost.filters.base import Candidate, Filter
from rwpost.filters.cache import MeasurementCache
from rwpost.filters.candidates import build_candidates, fetch_missing
from rwpost.filters.llm import TextJudge, VisionJudge
from rwpost.filters.runner import FilterResult, run_filters
from rwpost.io import sha256_file, sorted_by_id, sorted_rejects, write_json, write_jsonl
from rwpost.records import Reject
from rwpost.stages.base import FunnelStep, StageParams, StageReport, read_funnel, write_funnel

_CHOICES: dict[str, Any] = {
    "combine": Literal["ocr", "llm", "either", "both"],
    "index": Literal["mih", "bktree"],
    "keep_answers": list[Literal["yes", "no", "uncertain", True, False]],  # YAML reads a bare yes as true
}
"""Thresholds that name one of a few choices (the filter would fail mid-run, or keep nothing, on another)."""
_SHARES = ("min_confidence", "text_jaccard", "flat_share")
"""Thresholds that are a share, in [0, 1]."""


def _threshold_type(key: str, value: Any) -> Any:
    if key in _CHOICES:
        return _CHOICES[key]
    if isinstance(value, bool):
        return bool
    if isinstance(value, int | float):  # counts, sizes, radii and shares: a negative one is a typo
        return Annotated[type(value), Field(ge=0, le=1 if key in _SHARES else None, allow_inf_nan=False)]
    return type(value)


def _thresholds(name: str, defaults: Mapping[str, Any]) -> type[BaseModel]:
    """The typed params section of one filter, from the filter's own ``DEFAULTS`` (their one home)."""
    fields: dict[str, Any] = {key: (_threshold_type(key, value), value) for key, value in defaults.items()}
    model = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
    if {"min_words", "max_words"} <= defaults.keys():
        model = create_model(name, __base__=model, __validators__={"bounds": _words_in_order})
    return model


@model_validator(mode="after")
def _words_in_order(model: Any) -> Any:
    if model.min_words > model.max_words:
        raise ValueError(f"min_words {model.min_words} is above max_words {model.max_words}")
    return model


SizeParams = _thresholds("SizeParams", size.DEFAULTS)
NecessityParams = _thresholds("NecessityParams", necessity.DEFAULTS)
WatermarkParams = _thresholds("WatermarkParams", watermark.DEFAULTS)
NeardupParams = _thresholds("NeardupParams", neardup.DEFAULTS)


class Params(StageParams):
    """The ``filter:`` section of params.yaml; each filter's thresholds in its own sub-section."""

    section = "filter"

    tagged: Path = Path("data/work/tagged/articles.jsonl")
    extractions: Path | None = Path("data/work/extract/extractions.jsonl")
    crawl: Path | None = Path("data/work/crawl")
    """The crawl store: ``articles.jsonl``; image paths are relative to this folder."""
    out: Path = Path("data/work/filter")
    funnel: Path | None = None
    """The funnel so far (params.yaml: extract's, which starts with reformat's); ``out/funnel.json`` is it
    plus the filters' lines."""
    order: list[str] = Field(default_factory=lambda: list(DEFAULT_ORDER))
    measure_all: bool = False
    """True: every filter measures and decides every record (the funnel counts stay the same)."""
    workers: PositiveInt = 1
    fetch_missing: bool = False
    """Download post images the crawl does not hold."""
    use_given_ocr: bool = True
    """OCR text already on a record is used instead of the image."""
    llm: bool = False
    cache: Path = Path("data/cache/llm.sqlite")
    """The LLM answer cache of the judges (shared with extract)."""
    size: SizeParams = Field(default_factory=SizeParams)  # type: ignore[valid-type]
    necessity: NecessityParams = Field(default_factory=NecessityParams)  # type: ignore[valid-type]
    watermark: WatermarkParams = Field(default_factory=WatermarkParams)  # type: ignore[valid-type]
    neardup: NeardupParams = Field(default_factory=NeardupParams)  # type: ignore[valid-type]

    @field_validator("order")
    @classmethod
    def _known_once(cls, order: list[str]) -> list[str]:
        problem = _order_problem(order)
        if problem:
            raise ValueError(problem)
        return order

    def thresholds(self) -> dict[str, dict[str, Any]]:
        """Per filter in ``order``: the thresholds set in params (the filter fills in its defaults)."""
        return {name: getattr(self, name).model_dump(exclude_unset=True) for name in self.order}


def _order_problem(order: Sequence[str]) -> str | None:
    unknown = [name for name in order if name not in REGISTRY]
    if unknown:
        return f"unknown filter(s) {unknown}; known: {sorted(REGISTRY)}"
    twice = sorted({name for name in order if order.count(name) > 1})
    if twice:  # a second pass of a filter would count its removals twice in the funnel
        return f"{', '.join(twice)} named more than once"
    return None


def build_filters(
    order: Sequence[str],
    *,
    use_given_ocr: bool = True,
    vision_judge: VisionJudge | None = None,
    text_judge: TextJudge | None = None,
    judge_id: str | None = None,
) -> list[Filter]:
    """Filter instances in funnel order; judges (LLM callables) are optional, offline otherwise."""
    problem = _order_problem(order)
    if problem:
        raise ConfigError(f"filter.order: {problem}")
    out: list[Filter] = []
    for name in order:
        if name == "watermark":
            out.append(REGISTRY[name](use_given_ocr=use_given_ocr, judge=vision_judge, judge_id=judge_id))
        elif name == "necessity":
            out.append(REGISTRY[name](judge=text_judge, judge_id=judge_id))
        else:
            out.append(REGISTRY[name]())
    return out


def _judges(params: Params) -> dict[str, Any]:
    """LLM judges from the environment when ``llm`` is on (the only place that reads it)."""
    if not params.llm:
        return {}
    from rwpost.filters.llm import client_judges
    from rwpost.llm import client_from, settings_from_env

    client = client_from(settings_from_env(), cache_path=params.cache)
    vision, text = client_judges(client)
    return {"vision_judge": vision, "text_judge": text, "judge_id": client.model}


def run_candidates(
    candidates: Sequence[Candidate],
    params: Params,
    *,
    rejects: Sequence[Reject] = (),
    vision_judge: VisionJudge | None = None,
    text_judge: TextJudge | None = None,
    judge_id: str | None = None,
    progress: bool = True,
) -> FilterResult:
    """Run the configured filters over candidates and write all outputs atomically under ``params.out``."""
    out = params.out
    if params.fetch_missing:
        candidates = fetch_missing(candidates, out / "cache" / "images")
    filters = build_filters(
        params.order,
        use_given_ocr=params.use_given_ocr,
        vision_judge=vision_judge,
        text_judge=text_judge,
        judge_id=judge_id,
    )
    sections = params.thresholds()
    with MeasurementCache(out / "cache" / "measurements.sqlite") as cache:
        result = run_filters(
            candidates,
            filters,
            sections,
            cache=cache,
            measure_all=params.measure_all,
            workers=params.workers,
            progress=progress,
        )
    write_jsonl(out / "decisions.jsonl", sorted_by_id(result.decisions))
    write_jsonl(out / "verdicts.jsonl", sorted_by_id(result.verdicts))
    write_jsonl(out / "rejects.jsonl", sorted_rejects(rejects))
    write_funnel(out / "funnel.json", [*read_funnel(params.funnel), *funnel_steps(result)])
    # run-specific (depends on what the cache held): beside the cache, outside what DVC hashes
    write_json(out / "cache" / "last_run.json", result.cache_use())
    summary = {
        **result.totals(),
        "rejected_input_lines": len(rejects),
        "order": list(params.order),
        "params": sections,
    }
    write_json(out / "summary.json", summary)
    return result


def funnel_steps(result: FilterResult) -> list[FunnelStep]:
    """The filters' lines of the dataset card's funnel."""
    return [FunnelStep.model_validate(step) for step in result.funnel()]


INPUTS_FILE = Path("cache") / "inputs.json"
"""Under ``out``: the checksums of the input files of the run that wrote its outputs (:func:`inputs_of`)."""


def inputs_of(tagged: Path, extractions: Path, crawl_file: Path | None) -> dict[str, str | None]:
    """The identity of a run's input files (sha256 of each; None for a crawl file that does not exist), so
    a rerun can tell its own earlier outputs (replaced: new thresholds) from another run's (kept unless
    asked)."""
    return {
        "tagged": sha256_file(tagged),
        "extractions": sha256_file(extractions),
        "crawl": sha256_file(crawl_file) if crawl_file is not None and crawl_file.is_file() else None,
    }


def run(params: Params, *, crawl_file: Path | None = None, progress: bool = True) -> StageReport:
    """The stage; ``crawl_file`` overrides ``<crawl>/articles.jsonl`` (the CLI's ``--crawl``)."""
    rejects: list[Reject] = []
    if crawl_file is None and params.crawl is not None:
        crawl_file = params.crawl / "articles.jsonl"
    candidates = build_candidates(
        params.tagged, params.extractions, crawl_file, crawl_root=params.crawl, rejects=rejects
    )
    result = run_candidates(candidates, params, rejects=rejects, progress=progress, **_judges(params))
    write_json(params.out / INPUTS_FILE, inputs_of(params.tagged, params.extractions, crawl_file))
    totals = result.totals()
    steps = funnel_steps(result)
    removed = ", ".join(f"{s.step} -{s.removed}" for s in steps)
    return StageReport(
        stage="filter",
        counts={**totals, "rejected_input_lines": len(rejects)},
        funnel=steps,
        message=f"filter: {totals['input']} records -> {totals['kept']} kept ({removed}) -> {params.out}",
    )
