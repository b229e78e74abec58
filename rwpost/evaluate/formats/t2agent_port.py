"""The T2Agent port's per-sample files (``DANG-ai/ReMMD-Agent``, ``t2-agent/``, Apache-2.0), read as they are.

Its ``scripts/run_remmdbench.py`` writes ``<run>/details/<index:03d>_<sample id>.json``, one object per
sample::

    {"index": 0, "sample_id": "001", "ground_truth_verdict": "True", "predicted_verdict": "Mostly False",
     "predicted_taxonomy": ["T1 Fabrication"], ..., "prediction": {"final_scores": {"p_real": 0.21, ...},
     "subtask_results": {"text": {"best_answer": "TEXT_SUPPORT", "best_trajectory": [...]}, ...},
     "taxonomy_rationale": "...", ...}, "error": null}

``predicted_verdict`` is one of the port's five verdicts (True, Mostly True, Mixture, Mostly False,
False), mapped to RW-Post labels as RW-Post maps those Snopes ratings (paper Table II: the "mostly" ones
are Mixture); ``ERROR`` (its ``error`` holds the traceback) is a failure; a verdict Table II does not know
(``Pants on Fire``) sets that row aside with its reason, never the file. Rows join on ``sample_id``
(ReMMDBench's folder name ``001`` .. ``500`` for ``--data remmdbench:DIR``, an RW-Post id, or a
fact-check URL). The explanation's first line names the verdict and taxonomy as the port wrote them
(``T2Agent port verdict: Mostly False; taxonomy: ['T1 Fabrication']``): ReMMDBench's own label space is
scored from it (:mod:`rwpost.evaluate.datasets.remmdbench`). ``ground_truth_verdict`` and
``ground_truth_taxonomy`` are the gold a run carries (``--data t2agent-port:RUN``, the default when no
``--data`` is given). The explanation holds each sub-task's best answer, ``p_real`` and the
taxonomy rationale; the evidence URLs are those the trajectories' observations cite. A folder gives one
set per ``details`` folder below it (the set is named by the run folder).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError, UnknownRatingError
from rwpost.evaluate.datasets.remmdbench import DETAIL, detail_files, detail_folders
from rwpost.evaluate.formats.common import PredictionSet, Row, join_id
from rwpost.io import decode_json, read_text
from rwpost.labels import map_rating

_URL = re.compile(r"\((https?://[^\s)]+)\)")


def _line_of(text: str, key: str) -> int:
    """The line where ``"key":`` first appears in ``text`` (1 when it does not)."""
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _explanation(prediction: Any) -> tuple[str | None, list[str]]:
    """The port's reasoning in a few lines, and the URLs its trajectories' observations cite."""
    if not isinstance(prediction, dict):
        return None, []
    lines, urls = [], []
    scores = prediction.get("final_scores") or {}
    if isinstance(scores, dict) and isinstance(scores.get("p_real"), int | float):
        lines.append(f"p(real) {scores['p_real']:.2f}")
    subtasks = prediction.get("subtask_results") or {}
    for name, sub in subtasks.items() if isinstance(subtasks, dict) else ():
        if not isinstance(sub, dict):
            continue
        lines.append(f"- {name}: {sub.get('best_answer')} (visits {sub.get('visits')})")
        for step in sub.get("best_trajectory") or []:
            if isinstance(step, dict):
                urls += _URL.findall(str(step.get("observation") or ""))
    if prediction.get("taxonomy_rationale"):
        lines.append(str(prediction["taxonomy_rationale"]))
    return "\n".join(lines) or None, list(dict.fromkeys(urls))


def _read_detail(path: Path, result: PredictionSet) -> None:
    """Add one detail file's row, failure or problem (naming the file and line) to ``result``."""
    match = DETAIL.match(path.name)
    try:
        text = read_text(path)
    except RecordError as exc:
        result.bad_rows.append({"line": exc.line or 1, "reason": str(exc)})
        return
    try:
        record = decode_json(text, str(path))
    except RecordError as exc:  # not JSON, or nested too deeply: set aside naming the line
        result.bad_rows.append({"line": exc.line, "reason": str(exc)})
        return
    if not isinstance(record, dict):
        result.bad_rows.append({"line": 1, "reason": f"{path}:1: expected an object"})
        return
    rid = join_id(record.get("sample_id"))
    if rid is None:
        line = _line_of(text, "sample_id")
        result.bad_rows.append({"line": line, "reason": f"{path}:{line}: no sample_id"})
        return
    if match and record.get("index") != int(match[1]):
        line = _line_of(text, "index")
        reason = f"{path}:{line}: index {record.get('index')!r}, but the file name says {int(match[1])}"
        result.bad_rows.append({"line": line, "reason": reason})
        return
    raw, line = record.get("predicted_verdict"), _line_of(text, "predicted_verdict")
    if record.get("error") or raw == "ERROR":
        error = str(record.get("error") or "ERROR").strip().splitlines() or ["ERROR"]
        result.fail(rid, f"{error[-1]} ({path})")
        return
    if not isinstance(raw, str) or not raw.strip():
        result.bad_rows.append({"line": line, "reason": f"{path}:{line}: no predicted_verdict"})
        return
    try:
        label = map_rating(raw).label
    except UnknownRatingError as exc:
        result.bad_rows.append({"line": line, "reason": f"{path}:{line}: predicted_verdict: {exc}"})
        return
    explanation, urls = _explanation(record.get("prediction"))
    head = f"T2Agent port verdict: {raw}; taxonomy: {record.get('predicted_taxonomy') or 'none'}"
    result.add(
        Row(
            line=line,
            id=rid,
            raw_label=raw,
            label=label,
            explanation="\n".join(x for x in (head, explanation) if x),
            evidence_urls=urls,
        )
    )


def read_t2agent_port(path: str | Path) -> list[PredictionSet]:
    """The sets of a run folder (or its ``details`` folder, or a folder of runs)."""
    source = Path(path)
    folders = detail_folders(source) if source.is_dir() else []
    if not folders:
        raise ConfigError(f"{source}: no details/<index>_<id>.json files of the T2Agent port at or below")
    sets = []
    for folder in folders:
        run = folder.parent
        name = run.relative_to(source).as_posix() if run != source and source in run.parents else run.name
        result = PredictionSet(name=name or "t2agent-port", format="t2agent-port", source=str(folder))
        for file in detail_files(folder):
            result.files.append(str(file))
            _read_detail(file, result)
        sets.append(result)
    return sets


__all__ = ["detail_folders", "read_t2agent_port"]
