"""Stage `annotate_merge`: apply exported human verdicts to samples (paper III-D).

Reads the ``annotate:`` section of params.yaml: ``samples`` (Sample or released JSONL), ``verdicts``
(``validation_verdicts.jsonl`` written by ``rwpost annotate pull``; missing or empty = no human
verdicts yet, samples pass through unchanged) and ``out``. Writes ``samples.jsonl``,
``decisions.jsonl`` (filter ``human_validation``), ``disputed.jsonl``, ``rejects.jsonl`` and
``summary.json`` under ``out``.
"""

from __future__ import annotations

from pathlib import Path

from pipelines.common import stage_main
from rwpost.annotate.merge import merge_verdicts, resolve_verdicts
from rwpost.annotate.report import post_link_rates
from rwpost.annotate.sources import read_annotation_samples as read_samples
from rwpost.errors import ConfigError
from rwpost.io import iter_jsonl, write_json, write_jsonl
from rwpost.records import Reject, ValidationVerdict


def run(params: dict) -> dict:
    """Merge verdicts into samples; returns the summary written to ``summary.json``."""
    section = params.get("annotate")
    if not isinstance(section, dict) or not {"samples", "verdicts", "out"} <= section.keys():
        raise ConfigError("params.yaml needs an 'annotate:' section with samples, verdicts and out")
    samples_path, verdicts_path, out = (
        Path(section["samples"]),
        Path(section["verdicts"]),
        Path(section["out"]),
    )
    rejects: list[Reject] = []
    samples = list(read_samples(samples_path, rejects))
    verdicts = []
    if verdicts_path.exists():
        verdicts = [ValidationVerdict.model_validate(row) for _line, row in iter_jsonl(verdicts_path)]
    human = resolve_verdicts(verdicts)
    result = merge_verdicts(samples, human)
    write_jsonl(out / "samples.jsonl", result.samples)
    write_jsonl(out / "decisions.jsonl", result.decisions)
    write_jsonl(out / "disputed.jsonl", [v for v in human if v.status == "disputed"])
    write_jsonl(out / "rejects.jsonl", rejects)
    summary = {"samples": len(result.samples), "verdicts": len(verdicts), "rejected_lines": len(rejects)}
    summary.update(result.counts)
    summary["post_link"] = post_link_rates(human, samples)
    write_json(out / "summary.json", summary)
    return summary


def _run_and_print(params: dict) -> None:
    print(run(params))


if __name__ == "__main__":
    stage_main(_run_and_print, __doc__ or "")
