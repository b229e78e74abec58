"""DEFAME's ``predictions.csv`` (``sample_index, claim, target, predicted, justification, ...``).

Labels SUPPORTED / REFUTED / NEI / CONFLICTING map to True / False / Unproven / Mixture;
REFUSED_TO_ANSWER is a failure. ``sample_index`` is joined through an id map (a JSON object, or a
CSV / JSONL file with ``sample_index`` and ``id`` or ``news_url``); without one it is the position of the
sample in the evaluated data. Claims absent from the CSV (crashed workers) are failures.
"""

from __future__ import annotations

from pathlib import Path

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.formats.common import (
    PredictionSet,
    Row,
    iter_csv_rows,
    iter_json_rows,
    join_id,
    map_label,
)
from rwpost.io import read_json, read_text

LABEL_MAP: dict[str, str] = {
    "supported": "True",
    "refuted": "False",
    "nei": "Unproven",
    "not enough information": "Unproven",
    "conflicting": "Mixture",
    "conflicting/cherrypicking": "Mixture",
    "cherrypicking": "Mixture",
    "refused_to_answer": "",
}
"""DEFAME's verdict names -> RW-Post labels; an empty target is a failure."""


def read_id_map(path: str | Path) -> dict[str, str]:
    """``sample_index -> RW-Post id`` from a JSON object or a CSV / JSONL table."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"--id-map not found: {source}")
    text = read_text(source) if source.suffix.lower() == ".json" else ""
    if text.lstrip().startswith("{"):
        data = read_json(source, text=text)
        if not isinstance(data, dict):
            raise RecordError("expected a JSON object of sample_index -> id or news_url", source=str(source))
        return {str(k): join_id(v) or "" for k, v in data.items()}
    rows = iter_csv_rows(source) if source.suffix.lower() == ".csv" else iter_json_rows(source)
    out = {}
    for line, row, problem in rows:
        if problem or not isinstance(row, dict):
            raise RecordError(problem or "expected an object", source=str(source), line=line)
        target = join_id(row.get("id") or row.get("news_url"))
        if "sample_index" not in row or not target:
            raise RecordError("each row needs sample_index and id or news_url", source=str(source), line=line)
        out[str(row["sample_index"]).strip()] = target
    return out


def read_defame(path: str | Path, id_map: str | Path | None = None) -> PredictionSet:
    """The set of one DEFAME predictions.csv (a folder holding one is read too)."""
    source = Path(path)
    if source.is_dir():
        source = source / "predictions.csv"
    if not source.is_file():
        raise ConfigError(f"DEFAME predictions not found: {source}")
    ids = read_id_map(id_map) if id_map else None
    result = PredictionSet(
        name=source.parent.name or "defame", format="defame", source=str(source), by_position=ids is None
    )
    for line, row, problem in iter_csv_rows(source):
        if problem:
            result.bad_rows.append({"line": line, "reason": problem})
            continue
        index = str(row.get("sample_index") or "").strip()
        rid = (ids.get(index) if ids is not None else index) or None
        if rid is None:
            result.bad_rows.append(
                {"line": line, "reason": f"{source}:{line}: sample_index {index!r} unmapped"}
            )
            continue
        raw = (row.get("predicted") or "").strip()
        if raw.lower() == "refused_to_answer" or not raw:
            result.fail(rid, f"no verdict ({raw or 'empty'}) in {source}:{line}")
            continue
        label = map_label(raw, LABEL_MAP)
        result.add(
            Row(
                line=line,
                id=rid,
                raw_label=raw,
                label=label,
                explanation=row.get("justification") or None,
            )
        )
    return result
