"""Stage ``filter``: size, image necessity, watermark and near-duplicate filters (paper III-A, III-C).

Reads the tagged articles and the extractions (``reformat.out``, ``extract.out``) and the crawl store
(``crawl.out``); writes under ``out``: ``decisions.jsonl`` (one :class:`rwpost.records.Decision`
per record and filter), ``verdicts.jsonl`` (one summary per record), ``funnel.json`` (the funnel so far,
then the filters' steps), ``rejects.jsonl`` (input lines that did not validate), ``summary.json`` (totals
and the thresholds set) and the measurement cache ``cache/``. With ``llm: true`` the necessity and
watermark filters also ask an LLM (Tables S2, S1) with the credentials from the environment
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``RWPOST_LLM_MODEL``); without it they run offline.
"""

from __future__ import annotations

from pathlib import Path

from rwpost.filters.base import FilterContext
from rwpost.filters.candidates import build_candidates
from rwpost.filters.runner import INPUTS_FILE, FilterSettings, inputs_of, run_candidates
from rwpost.io import write_json
from rwpost.records import Reject
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams, FilterSettings):
    """The ``filter:`` section of params.yaml (each filter's thresholds in its own sub-section), with the
    upstream outputs it reads."""

    section = "filter"
    upstream = {
        "tagged": "reformat.out/articles.jsonl",
        "extractions": "extract.out/extractions.jsonl",
        "crawl": "crawl.out",
    }
    reads = ("tagged", "extractions", "crawl", "funnel")
    writes = ("out", "cache")
    file_kinds = {"cache": "sqlite"}

    tagged: Path = Path("data/work/tagged/articles.jsonl")
    extractions: Path | None = Path("data/work/extract/extractions.jsonl")
    crawl: Path | None = Path("data/work/crawl")
    """The crawl store: ``articles.jsonl``; image paths are relative to this folder."""
    funnel: Path | None = None
    """The funnel so far; None: the ``funnel.json`` beside ``extractions`` (extract's, which starts with
    reformat's). ``out/funnel.json`` adds the filters' lines."""
    out: Path = Path("data/work/filter")
    llm: bool = False
    cache: Path = Path("data/cache/llm.sqlite")
    """The LLM answer cache of the judges (shared with extract)."""


def _context(params: Params) -> FilterContext:
    """The filters' judges: LLMs from the environment when ``llm`` is on (the only place that reads it)."""
    if not params.llm:
        return FilterContext(use_given_ocr=params.use_given_ocr)
    from rwpost.filters.llm import client_judges
    from rwpost.llm import client_from, settings_from_env

    client = client_from(settings_from_env(), cache_path=params.cache)
    vision, text = client_judges(client)
    return FilterContext(params.use_given_ocr, vision_judge=vision, text_judge=text, judge_id=client.model)


def run(params: Params, *, crawl_file: Path | None = None, progress: bool = True) -> StageReport:
    """The stage; ``crawl_file`` overrides ``<crawl>/articles.jsonl`` (the CLI's ``--crawl``)."""
    if crawl_file is None and params.crawl is not None:
        crawl_file = params.crawl / "articles.jsonl"
    rejects: list[Reject] = []
    candidates = build_candidates(
        params.tagged, params.extractions, crawl_file, crawl_root=params.crawl, rejects=rejects
    )
    result = run_candidates(
        candidates, params, params.out, context=_context(params), rejects=rejects, progress=progress
    )
    write_json(params.out / INPUTS_FILE, inputs_of(params.tagged, params.extractions, crawl_file))
    totals = result.totals()
    removed = ", ".join(f"{s.step} -{s.removed}" for s in result.steps)
    report = StageReport(
        stage="filter",
        counts={**totals, "rejected_input_lines": len(rejects)},
        funnel=result.steps,
        message=f"filter: {totals['input']} records -> {totals['kept']} kept ({removed}) -> {params.out}",
    )
    earlier = params.funnel or (params.extractions.with_name("funnel.json") if params.extractions else None)
    write_funnel(params.out / "funnel.json", funnel_so_far(earlier, report))
    return report
