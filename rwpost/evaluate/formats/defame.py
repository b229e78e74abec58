"""DEFAME's ``predictions.csv`` (``sample_index, claim, target, predicted, justification, ...``).

Labels SUPPORTED / REFUTED / NEI / CONFLICTING map to True / False / Unproven / Mixture;
REFUSED_TO_ANSWER is a failure. ``sample_index`` is joined through an id map (a JSON object, or a
CSV / JSONL file with ``sample_index`` and ``id`` or ``news_url``); without one it is the position of the
sample in the evaluated data, taken only where each row's ``claim`` is that sample's claim (another order
of the data, or a train/test split, would score every row against another sample's label); ``--id-map
position`` takes it regardless. Claims absent from the CSV (crashed workers) are failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rwpost.errors import ConfigError, RecordError, RwpostError
from rwpost.evaluate.formats.common import (
    PredictionSet,
    Row,
    iter_csv_rows,
    iter_json_rows,
    join_id,
    map_label,
)
from rwpost.io import read_json, read_text
from rwpost.records import Sample

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


POSITION = "position"
"""``--id-map position``: ``sample_index`` is the position in the evaluated data, claims unchecked."""


def _claim_text(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def join_positions(
    claims: Mapping[str, str], samples: Sequence[Sample], source: str, *, checked: bool = True
) -> dict[str, str]:
    """``sample_index -> sample id`` by position in ``samples``; with ``checked``, a :class:`RwpostError`
    unless each row's claim (``claims``: sample_index -> the row's claim text) holds its sample's claim."""
    by_index = {str(i): s for i, s in enumerate(samples)}
    if checked:
        wrong = [
            (index, claim)
            for index, claim in claims.items()
            if index in by_index and _claim_text(by_index[index].claim) not in _claim_text(claim)
        ]
        if wrong:
            index, claim = wrong[0]
            sample = by_index[index]
            raise RwpostError(
                f"{source}: the claim of {len(wrong)} of {len(claims)} rows is not the claim of the sample "
                f"at their sample_index in the evaluated data (sample_index {index}: {claim[:60]!r}, sample "
                f"{sample.id}: {sample.claim[:60]!r}); pass --id-map FILE (sample_index -> id or news_url), "
                f"or --id-map {POSITION} to join by position anyway"
            )
    return {index: sample.id for index, sample in by_index.items()}


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
    positional = id_map is None or str(id_map) == POSITION
    ids = None if positional else read_id_map(id_map)  # type: ignore[arg-type]
    result = PredictionSet(
        name=source.parent.name or "defame",
        format="defame",
        source=str(source),
        by_position=positional,
        claims_checked=id_map is None,
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
        if positional:
            result.claims.setdefault(index, str(row.get("claim") or ""))
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
