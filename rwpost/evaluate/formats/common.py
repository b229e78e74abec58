"""What every predictions reader returns: one :class:`PredictionSet` per system (x setting x k) in a file or
folder, with rows joined on RW-Post ids, failures with their reasons and every unknown label spelling."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.ids import record_id
from rwpost.io import (
    MAX_TEXT_BYTES,
    csv_field_limit,
    decode_line,
    iter_lines,
    parse_json_line,
    read_json,
    read_text,
)
from rwpost.labels import Label

_LABELS = {label.value.lower(): label for label in Label}


def parse_label(value: Any) -> Label | None:
    """An RW-Post label from its name in any letter case (``FALSE``, ``false``, ``False``); else None."""
    return _LABELS.get(str(value).strip().lower()) if value is not None else None


@dataclass
class Row:
    """One parsed row of a predictions file, with where it came from."""

    line: int
    id: str
    raw_label: Any
    label: Label | None
    probabilities: dict[Label, float] | None = None
    explanation: str | None = None
    evidence_urls: list[str] = field(default_factory=list)
    news_url: str | None = None
    """The article URL as the row wrote it, when its id was computed from it (named in the input report)."""


@dataclass
class PredictionSet:
    """The answers of one system in one setting: rows by id, failed ids with why, label spellings."""

    name: str
    format: str
    source: str
    rows: dict[str, Row] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    """Ids the system failed on (crashes, unreadable answers), with the reason; a later success wins."""
    unknown_labels: Counter[str] = field(default_factory=Counter)
    bad_rows: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[Row] = field(default_factory=list)
    """Rows of an id already read (the first row is used; these are reported, never dropped)."""
    failed_rows: int = 0
    """Records that were failures (several may name one id, or an id that later succeeded)."""
    files: list[str] = field(default_factory=list)
    """The files read, when ``source`` is a folder."""
    setting: str | None = None
    """The input cell the files say (``T+E k=3`` for an AgentFact baselines folder), if any."""
    by_position: bool = False
    """Ids are positions in the evaluated data (DEFAME's sample_index without an id map)."""
    claims: dict[str, str] = field(default_factory=dict)
    """With ``by_position``: each position's claim text in the file, to check the join against the data."""
    claims_checked: bool = True
    """With ``by_position``: the join needs the claims to match (False: ``--id-map position``)."""

    def add(self, row: Row) -> None:
        """Keep the first row of an id (a duplicate is listed); an unknown label is counted."""
        if row.label is None:
            self.unknown_labels[str(row.raw_label)] += 1
        if row.id in self.rows:
            self.duplicates.append(row)
            return
        self.rows[row.id] = row
        self.failures.pop(row.id, None)

    def fail(self, rid: str, reason: str) -> None:
        """A failure, unless the id already succeeded (a claim that failed and later succeeded)."""
        self.failed_rows += 1
        if rid not in self.rows:
            self.failures.setdefault(rid, reason)


def dotted(data: Any, path: str, missing: Any = None) -> Any:
    """``data["a"]["b"]`` for ``a.b``; a key may itself hold dots (``validation_result.3-class_label``);
    ``missing`` where there is no such field."""
    if isinstance(data, Mapping) and path in data:
        return data[path]
    head, sep, rest = path.partition(".")
    while sep:
        if isinstance(data, Mapping) and head in data:
            return dotted(data[head], rest, missing)
        more, sep, rest = rest.partition(".")
        head = f"{head}.{more}"
    return data.get(head, missing) if isinstance(data, Mapping) else missing


def join_id(value: Any) -> str | None:
    """An RW-Post id from an id or a fact-check article URL (the id is computed from the URL)."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    return record_id(text) if "://" in text else text


def map_label(value: Any, label_map: Mapping[str, str | None] | None = None) -> Label | None:
    """A label through ``label_map`` (keys matched ignoring case and spacing; a value of None or ``""``
    means no answer), else by name in any letter case."""
    if value is None:
        return None
    if label_map:
        wanted = str(value).strip().lower()
        for key, target in label_map.items():
            if key.strip().lower() == wanted:
                return parse_label(target) if target else None
    return parse_label(value)


def parse_label_map(value: str | Path | Mapping[str, str] | None) -> dict[str, str] | None:
    """A label map from a mapping, ``k=v,k2=v2``, or a JSON / ``k=v`` lines file; an empty spelling, or a
    target that is neither an RW-Post label nor empty (no answer), is refused naming it."""
    if value is None or isinstance(value, Mapping):
        return _checked_label_map(dict(value), "--label-map") if value else None
    text = str(value)
    path = Path(text)
    where = "--label-map"
    if path.is_file():
        where = f"--label-map {path}"
        text = read_text(path)
        if text.lstrip().startswith("{"):
            data = read_json(path, text=text)
            if not isinstance(data, dict) or not all(isinstance(v, str | None) for v in data.values()):
                raise RecordError("expected a JSON object of spelling -> label name", source=str(path))
            return _checked_label_map({str(k): v for k, v in data.items()}, where)
        pairs: Iterable[str] = text.split("\n")
    else:
        pairs = text.split(",")
    out = {}
    for number, pair in enumerate(pairs, start=1):
        if not pair.strip() or pair.strip().startswith("#"):
            continue
        key, sep, target = pair.partition("=")
        if not sep:
            at = f"{where}:{number}" if path.is_file() else where
            raise ConfigError(f"{at}: expected spelling=Label, got {pair!r}")
        at = f"{where}:{number}" if path.is_file() else where
        out.update(_checked_label_map({key.strip(): target.strip()}, at))
    return out


def _checked_label_map(label_map: dict[str, Any], where: str) -> dict[str, Any]:
    for key, target in label_map.items():
        if not key.strip():
            raise ConfigError(f"{where}: an empty spelling (before '=') for {target!r}")
        if target not in (None, "") and parse_label(target) is None:
            names = ", ".join(str(x) for x in Label)
            raise ConfigError(
                f"{where}: {key}={target!r}: {target!r} is not a label ({names}; empty: no answer)"
            )
    return label_map


def iter_json_rows(path: Path) -> Iterable[tuple[int, Any, str | None]]:
    """``(line, object, problem)`` for each non-empty line of a JSONL file (BOM tolerated); a line that is
    not UTF-8 or not JSON is a problem naming file and line, and reading goes on."""
    for number, raw in iter_lines(path):
        try:
            text = decode_line(raw, str(path), number)
            if text.strip():
                yield number, parse_json_line(text, str(path), number), None
        except RecordError as exc:
            yield number, None, str(exc)


def iter_csv_rows(path: Path) -> Iterable[tuple[int, dict[str, Any], str | None]]:
    """``(line, row, problem)`` for each row of a CSV file with a header (BOM tolerated; the first row is
    line 2); a row with more cells than the header, or with a field over the csv module's size limit
    (128 KiB: one long justification), is a problem, set aside by the caller. Text that is not UTF-8, or
    that the csv module cannot read (a NUL byte), is a :class:`RecordError` naming the line."""
    with csv_field_limit(MAX_TEXT_BYTES) as limit:  # read a long field whole (the file is bounded), refuse it
        reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
        try:
            rows = list(enumerate(reader, start=2))
        except csv.Error as exc:
            raise RecordError(f"not readable as CSV ({exc})", source=str(path), line=reader.line_num) from exc
    for number, row in rows:
        extra = row.pop(None, None)  # type: ignore[call-overload]
        big = next((k for k, v in row.items() if isinstance(v, str) and len(v) > limit), None)
        problem = (
            f"{path}:{number}: {len(extra)} cells more than the header"
            if extra
            else f"{path}:{number}: field {big!r} longer than {limit} characters"
            if big is not None
            else None
        )
        yield number, row, problem
