"""The AgentFact repository's outputs, read as they are.

Main workflow: ``output/<dataset>/<split>/<mode>/<start_id>/<model>/output.jsonl`` batch folders; the label
is ``final_answer.updated_answer.validation_result["3-class_authenticity_label"]`` (lower case), joined on
``post_info.news_url``; ``output_failed.jsonl`` beside holds the failures (bare input records). A claim in
both (failed, then succeeded in a rerun) counts as its success. The batches of one
``<dataset>/<split>/<mode>/<model>`` are one set, filed under the cell its ``<mode>`` names
(:data:`MODES`: ``open_book`` gold evidence T+E, ``open_web`` T+W, ``close_book`` T).

Baselines: ``baseline_lvlms/results/<model>/<T|TI|TE|TIE>[_kK]/output.jsonl``, the same label path in the
model's own case; failures ``{claim_id, news_url, raw_output, error}`` in a ``*failed*.jsonl`` beside. A
results folder gives one set per model x setting x k.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rwpost.evaluate.formats.common import PredictionSet, Row, dotted, iter_json_rows, join_id, map_label

LABEL_PATH = "final_answer.updated_answer.validation_result.3-class_authenticity_label"
SETTING_FOLDER = re.compile(r"^(T|TI|TE|TIE)(_k\d+)?$")
MODES = {"open_book": "T+E", "open_web": "T+W", "close_book": "T"}
"""The main workflow's ``search_mode`` path segment and the cell it is (their ``main_workflow.py``)."""


def _news_url(record: Any) -> Any:
    if not isinstance(record, dict):
        return None
    return dotted(record, "post_info.news_url") or record.get("news_url")


def _read_outputs(folder: Path, result: PredictionSet) -> None:
    """Add one batch folder's output.jsonl rows and its failures to ``result``."""
    output = folder / "output.jsonl"
    if output.is_file():
        result.files.append(str(output))
        for line, record, problem in iter_json_rows(output):
            rid = join_id(_news_url(record))
            if problem or rid is None:
                result.bad_rows.append(
                    {"line": line, "reason": problem or f"{output}:{line}: no post_info.news_url"}
                )
                continue
            raw = dotted(record, LABEL_PATH)
            if raw in (None, ""):
                result.fail(rid, f"no 3-class label in {output}:{line}")
                continue
            answer = dotted(record, "final_answer.updated_answer.validation_result") or {}
            explanation = answer.get("reasoning_logic") if isinstance(answer, dict) else None
            result.add(
                Row(line=line, id=rid, raw_label=raw, label=map_label(raw), explanation=explanation or None)
            )
    for failed in sorted(folder.glob("*failed*.jsonl")):
        result.files.append(str(failed))
        for line, record, problem in iter_json_rows(failed):
            rid = join_id(_news_url(record))
            if problem or rid is None:
                result.bad_rows.append({"line": line, "reason": problem or f"{failed}:{line}: no news_url"})
                continue
            error = record.get("error") if isinstance(record, dict) else None
            result.fail(rid, f"failed in the system's run ({error or failed.name})")


def _batch_folders(root: Path) -> list[Path]:
    folders = {p.parent for p in root.rglob("output.jsonl")} | {
        p.parent for p in root.rglob("*failed*.jsonl")
    }
    return sorted(folders)


def read_main(root: str | Path) -> list[PredictionSet]:
    """The main workflow's sets under ``root`` (the output folder, or any folder inside it)."""
    base = Path(root)
    groups: dict[str, list[Path]] = {}
    for folder in _batch_folders(base):
        parts = folder.relative_to(base).parts
        name = "/".join(parts[:-2] + parts[-1:]) if len(parts) >= 2 else (parts[0] if parts else base.name)
        groups.setdefault(name, []).append(folder)
    sets = []
    for name, folders in sorted(groups.items()):
        modes = [MODES[x] for x in Path(name).parts + base.resolve().parts if x in MODES]
        result = PredictionSet(
            name=name, format="agentfact", source=str(base / name), setting=modes[0] if modes else None
        )
        successes_first = sorted(folders)  # every batch's output is read before any failure counts
        for folder in successes_first:
            _read_outputs(folder, result)
        result.failures = {k: v for k, v in result.failures.items() if k not in result.rows}
        sets.append(result)
    return sets


def read_baselines(root: str | Path) -> list[PredictionSet]:
    """One set per ``<model>/<setting>[_kK]`` folder under ``root`` (a results folder or one model's)."""
    from rwpost.evaluate.task import Cell

    base = Path(root)
    sets = []
    for folder in _batch_folders(base):
        if not SETTING_FOLDER.match(folder.name):
            continue
        model = folder.parent.name
        cell = Cell.parse(folder.name)
        result = PredictionSet(
            name=f"{model}/{cell.slug}", format="agentfact-baselines", source=str(folder), setting=cell.name
        )
        _read_outputs(folder, result)
        sets.append(result)
    return sorted(sets, key=lambda s: s.name)


def looks_like_baselines(root: Path) -> bool:
    """Whether ``root`` holds baselines folders (named T, TI, TE, TIE, with an optional _kK)."""
    if root.is_file():
        return bool(SETTING_FOLDER.match(root.parent.name))
    return any(SETTING_FOLDER.match(p.parent.name) for p in root.rglob("output.jsonl"))
