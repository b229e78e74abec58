"""Any JSONL, JSON (a list of objects) or CSV file: ``--id-field`` (an id or a fact-check article URL),
``--label-field`` (a dotted path into each object), ``--label-map`` (spelling -> RW-Post label)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.formats.common import (
    PredictionSet,
    Row,
    dotted,
    iter_csv_rows,
    iter_json_rows,
    join_id,
    map_label,
)
from rwpost.io import read_json, read_text


def _objects(source: Path) -> Iterable[tuple[int, Any, str | None]]:
    if source.suffix.lower() == ".csv":
        return iter_csv_rows(source)
    text = read_text(source)
    if source.suffix.lower() == ".json" or text.lstrip().startswith("["):
        data = read_json(source, text=text)
        if not isinstance(data, list):
            raise RecordError("expected a JSON list of objects", source=str(source))
        return [(n, row, None) for n, row in enumerate(data, start=1)]
    return iter_json_rows(source)


def read_generic(
    path: str | Path,
    *,
    id_field: str = "id",
    label_field: str = "label",
    label_map: dict[str, str] | None = None,
    explanation_field: str | None = None,
) -> PredictionSet:
    """The set of one file; an empty label is a failure, an unknown one is counted by spelling."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"predictions file not found: {source}")
    result = PredictionSet(name=source.stem, format="generic", source=str(source))
    absent = object()
    first: tuple[int, dict] | None = None  # the first row with an id, and whether any has the label field
    labelled = False
    for line, data, problem in _objects(source):
        if problem or not isinstance(data, dict):
            result.bad_rows.append({"line": line, "reason": problem or f"{source}:{line}: not an object"})
            continue
        rid = join_id(dotted(data, id_field))
        if rid is None:
            result.bad_rows.append({"line": line, "reason": f"{source}:{line}: no {id_field!r}"})
            continue
        raw = dotted(data, label_field, absent)
        first = first or (line, data)
        labelled = labelled or raw is not absent
        if raw is absent or raw in (None, ""):
            result.fail(rid, f"no {label_field!r} in {source}:{line}")
            continue
        explanation = dotted(data, explanation_field) if explanation_field else None
        result.add(
            Row(line=line, id=rid, raw_label=raw, label=map_label(raw, label_map), explanation=explanation)
        )
    if first is not None and not labelled:  # a mistyped --label-field: not "every answer failed"
        line, data = first
        keys = ", ".join(map(repr, list(data)[:8]))
        raise ConfigError(
            f"{source}: no row has the field --label-field {label_field!r} (line {line} has {keys})"
        )
    return result
