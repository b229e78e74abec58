"""Stage ``annotate_merge``: apply exported human verdicts to samples (paper III-D).

Reads ``samples`` (Sample or released JSONL) and ``verdicts`` (``validation_verdicts.jsonl`` written by
``rwpost annotate pull``; missing or empty = no human verdicts yet, samples pass through unchanged).
Writes ``samples.jsonl``, ``decisions.jsonl`` (filter ``human_validation``), ``disputed.jsonl``,
``rejects.jsonl`` and ``summary.json`` under ``out``.
"""

from __future__ import annotations

from pathlib import Path

from rwpost.annotate.merge import merge_verdicts, resolve_verdicts
from rwpost.annotate.report import post_link_rates
from rwpost.annotate.sources import read_annotation_samples
from rwpost.io import read_records, sorted_by_id, sorted_rejects, write_json, write_jsonl
from rwpost.records import Reject, ValidationVerdict
from rwpost.stages.base import StageParams, StageReport


class Params(StageParams):
    """The ``annotate:`` section of params.yaml."""

    section = "annotate"
    upstream = {"samples": "assemble.out/samples.jsonl"}
    reads = ("samples", "verdicts")
    writes = ("out",)

    samples: Path = Path("data/work/assemble/samples.jsonl")
    verdicts: Path = Path("annotation/export/validation_verdicts.jsonl")
    out: Path = Path("data/work/annotated")


OUTPUT_FILES = ("samples.jsonl", "decisions.jsonl", "disputed.jsonl", "rejects.jsonl", "summary.json")
"""What the stage writes under ``out``."""


def run(params: Params) -> StageReport:
    """Merge verdicts into samples; the report's counts are what ``summary.json`` holds."""
    rejects: list[Reject] = []
    samples = list(read_annotation_samples(params.samples, rejects))
    verdicts = list(read_records(params.verdicts, ValidationVerdict)) if params.verdicts.exists() else []
    human = resolve_verdicts(verdicts)
    result = merge_verdicts(samples, human)
    write_jsonl(params.out / "samples.jsonl", sorted_by_id(result.samples))
    write_jsonl(params.out / "decisions.jsonl", sorted_by_id(result.decisions))
    write_jsonl(params.out / "disputed.jsonl", sorted_by_id(v for v in human if v.status == "disputed"))
    write_jsonl(params.out / "rejects.jsonl", sorted_rejects(rejects))
    summary = {"samples": len(result.samples), "verdicts": len(verdicts), "rejected_lines": len(rejects)}
    summary.update(result.counts)
    summary["post_link"] = post_link_rates(human, samples)
    write_json(params.out / "summary.json", summary)
    return StageReport(stage="annotate_merge", counts=summary, message=f"annotate_merge: {summary}")
