"""Readers that page through large files on the server: the browser only ever gets one page.

:class:`SampleIndex` reads the few columns a sample table filters on from every split of a version
(never the images or the long texts) and finds one sample's row group when it is opened;
:class:`JsonlIndex` keeps the byte offset of each record of a JSONL file by id, so one record is read
with one seek. Both set aside what they cannot read and say so in one line per file
(:attr:`problems`), never raising on a damaged file.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rwpost.dataset import row_to_sample
from rwpost.errors import RecordError
from rwpost.io import decode_line, iter_lines, parse_json_line
from rwpost.records import Sample

INDEX_COLUMNS = (
    "id",
    "claim",
    "label",
    "split",
    "subset",
    "category",
    "claim_time",
    "site",
    "publisher",
    "language",
)
"""Columns of a split read for the sample table (those a file has; site, publisher and language once the
dataset has them)."""
FACETS = ("label", "split", "subset", "category", "site", "publisher", "language")
"""Columns the sample table filters on with a choice of values."""
PAGE_LIMIT = 200
"""The most rows one page may ask for."""


def page_bounds(offset: Any, limit: Any, default: int = 50) -> tuple[int, int]:
    """An offset and a limit from a query string, clamped (a bad value is the default)."""
    try:
        start = max(0, int(offset))
    except (TypeError, ValueError):
        start = 0
    try:
        size = min(PAGE_LIMIT, max(1, int(limit)))
    except (TypeError, ValueError):
        size = default
    return start, size


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def file_problem(path: Path, base: Path, exc: BaseException) -> str:
    """One line naming a file (relative to ``base`` where it is under it) and what is wrong with it."""
    try:
        name = path.relative_to(base).as_posix()
    except ValueError:
        name = str(path)
    if isinstance(exc, RecordError):
        problem = exc.problem if exc.line is None else f"line {exc.line}: {exc.problem}"
    elif isinstance(exc, FileNotFoundError):
        problem = "not found"
    else:
        problem = _one_line(exc) or type(exc).__name__
    return f"{name}: {problem}"


@dataclass
class SampleIndex:
    """The filterable columns of every split file of a version, one Arrow table (file and row kept)."""

    files: list[Path]
    table: pa.Table
    problems: list[str] = field(default_factory=list)
    _lower: pa.ChunkedArray | None = field(default=None, repr=False)
    _where: dict[str, tuple[int, int]] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, files: Iterable[Path], base: Path, columns: tuple[str, ...] = INDEX_COLUMNS) -> SampleIndex:
        """``columns``: those to read (the rest are null: a run needs only ids and categories)."""
        parts, kept, problems = [], [], []
        for file in files:
            try:
                schema = pq.read_schema(file)
                present = [c for c in columns if c in schema.names]
                if "id" not in present:
                    raise RecordError("not an RW-Post split: no id column")
                part = pq.read_table(file, columns=present)
            except (OSError, pa.ArrowException, RecordError) as exc:
                problems.append(file_problem(file, base, exc))
                continue
            part = part.append_column("_file", pa.array([len(kept)] * part.num_rows, pa.int32()))
            part = part.append_column("_row", pa.array(range(part.num_rows), pa.int32()))
            for name in INDEX_COLUMNS:
                if name not in part.column_names:
                    part = part.append_column(name, pa.nulls(part.num_rows, pa.string()))
            part = part.select([*INDEX_COLUMNS, "_file", "_row"])
            parts.append(part.cast(_index_schema(part.schema)))
            kept.append(file)
        table = pa.concat_tables(parts) if parts else _empty_index()
        return cls(kept, table, problems)

    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """Each facet column's values with their counts (most common first); columns all null left out."""
        out: dict[str, list[tuple[str, int]]] = {}
        for name in FACETS:
            column = self.table.column(name)
            if column.null_count == len(column):
                continue
            counts = pc.value_counts(column).to_pylist()
            pairs = [(str(c["values"]), int(c["counts"])) for c in counts if c["values"] is not None]
            out[name] = sorted(pairs, key=lambda p: (-p[1], p[0]))
        return out

    def select(self, filters: dict[str, str], query: str = "") -> pa.Table:
        """The rows whose facet columns equal ``filters`` and whose id or claim contains ``query``."""
        return self.table.take(self.matching(filters, query))

    def page(self, filters: dict[str, str], query: str, start: int, size: int) -> tuple[int, pa.Table]:
        """How many rows match, and the rows of one page of them (only those rows are copied)."""
        if not query and not any(value for name, value in filters.items() if name in FACETS):
            return self.table.num_rows, self.table.slice(start, size)
        indices = self.matching(filters, query)
        return len(indices), self.table.take(indices.slice(start, size))

    def _lowered(self) -> pa.ChunkedArray:
        if self._lower is None:
            self._lower = pc.utf8_lower(self.table.column("claim"))
        return self._lower

    def matching(self, filters: dict[str, str], query: str = "") -> pa.Array:
        """Row numbers of the rows :meth:`select` picks."""
        table = self.table
        mask = None
        for name, value in filters.items():
            if name in FACETS and value:
                test = pc.equal(table.column(name), value)
                mask = test if mask is None else pc.and_(mask, test)
        if query:
            lowered = query.lower()
            test = pc.or_(
                pc.match_substring(self._lowered(), lowered),
                pc.match_substring(table.column("id"), lowered, ignore_case=True),
            )
            mask = test if mask is None else pc.and_(mask, test)
        if mask is None:
            return pa.array(np.arange(table.num_rows))
        return pc.indices_nonzero(pc.fill_null(mask, False))

    def locate(self, sample_id: str) -> tuple[Path, int] | None:
        """The file and row of one sample (the first split holding it)."""
        if self._where is None:
            where: dict[str, tuple[int, int]] = {}
            columns = (self.table.column(c).to_pylist() for c in ("id", "_file", "_row"))
            for key, file, row in zip(*columns, strict=True):
                where.setdefault(key, (file, row))
            self._where = where
        found = self._where.get(sample_id)
        return None if found is None else (self.files[found[0]], found[1])

    def row(self, sample_id: str) -> dict[str, Any] | None:
        """One sample's whole Parquet row (images undecoded), read from its row group alone."""
        where = self.locate(sample_id)
        if where is None:
            return None
        return read_row(*where)


def read_row(file: Path, row: int) -> dict[str, Any]:
    """Row ``row`` of a Parquet file, reading only the row group that holds it."""
    handle = pq.ParquetFile(file)
    start = 0
    for group in range(handle.num_row_groups):
        rows = handle.metadata.row_group(group).num_rows
        if row < start + rows:
            return handle.read_row_group(group).slice(row - start, 1).to_pylist()[0]
        start += rows
    raise RecordError(f"no row {row}", source=str(file))


def row_sample(row: dict[str, Any]) -> tuple[Sample | None, str | None]:
    """A Parquet row as a Sample, or the one-line reason it is not one."""
    try:
        return row_to_sample(row), None
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return None, _one_line(exc)


def _index_schema(schema: pa.Schema) -> pa.Schema:
    fields = [pa.field(f.name, pa.int32() if f.name in ("_file", "_row") else pa.string()) for f in schema]
    return pa.schema(fields)


def _empty_index() -> pa.Table:
    names = [*INDEX_COLUMNS, "_file", "_row"]
    return pa.table({n: pa.array([], pa.int32() if n.startswith("_") else pa.string()) for n in names})


@dataclass
class JsonlIndex:
    """The byte offset and line of every record of a JSONL file, by a key of the record (``id``).

    ``keep`` picks what to hold in memory of each record besides its offset (the few fields a table
    filters on); several records may share a key (a sample's filter decisions)."""

    path: Path
    offsets: dict[str, list[tuple[int, int]]]
    kept: list[dict[str, Any]]
    problems: list[str]
    stamp: tuple[int, int]

    @classmethod
    def open(
        cls,
        path: Path,
        base: Path,
        *,
        key: str = "id",
        keep: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
    ) -> JsonlIndex:
        offsets: dict[str, list[tuple[int, int]]] = {}
        kept: list[dict[str, Any]] = []
        bad: list[str] = []
        stamp = _stamp(path)
        source = str(path)
        try:
            position = 0
            for number, raw in iter_lines(path):
                at, position = position, position + len(raw)
                try:
                    text = decode_line(raw, source, number)
                    if not text.strip():
                        continue
                    record = parse_json_line(text, source, number)
                except RecordError as exc:
                    bad.append(f"line {number}: {exc.problem}")
                    continue
                if not isinstance(record, dict) or not isinstance(record.get(key), str):
                    bad.append(f"line {number}: no {key!r} string")
                    continue
                offsets.setdefault(record[key], []).append((at, number))
                if keep is not None:
                    light = keep(record)
                    if light is not None:
                        kept.append(light)
        except RecordError as exc:
            return cls(path, offsets, kept, [file_problem(path, base, exc)], stamp)
        problems = []
        if bad:
            name = file_problem(path, base, RecordError(""))[:-2]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            problems.append(f"{name}: {len(bad)} unreadable line(s) set aside: {bad[0]}{more}")
        return cls(path, offsets, kept, problems, stamp)

    @classmethod
    def open_columns(cls, path: Path, base: Path, schema: pa.Schema) -> JsonlIndex:
        """The index with ``schema``'s fields of every record kept, read by Arrow's JSON reader (C++, the
        rest of each record skipped); a file it cannot read whole (a bad line, a field of another type)
        is read line by line instead, which names the bad lines and sets them aside."""
        import pyarrow.json as pj

        stamp = _stamp(path)
        try:
            offsets: dict[str, list[tuple[int, int]]] = {}
            spots = []
            position = 0
            with open(path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if raw.strip():
                        spots.append((position, number))
                    position += len(raw)
            options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
            table = pj.read_json(path, parse_options=options) if spots else schema.empty_table()
            if table.num_rows != len(spots) or table.column("id").null_count:
                raise ValueError("records and lines differ")
            kept = table.to_pylist()
            for spot, record in zip(spots, kept, strict=True):
                offsets.setdefault(record["id"], []).append(spot)
            return cls(path, offsets, kept, [], stamp)
        except (OSError, pa.ArrowException, ValueError):
            return cls.open(path, base, keep=lambda r: {f.name: r.get(f.name) for f in schema})

    def fresh(self) -> bool:
        """Whether the file is as it was when indexed (a run still writing grows it)."""
        return _stamp(self.path) == self.stamp

    def records(self, key: str) -> list[dict[str, Any]]:
        """Every record under ``key``, read by offset, in file order."""
        out = []
        spots = self.offsets.get(key, [])
        if not spots:
            return out
        with open(self.path, "rb") as handle:
            for offset, _line in spots:
                handle.seek(offset)
                try:
                    out.append(json.loads(handle.readline()))
                except (ValueError, UnicodeDecodeError):
                    continue
        return out

    def first(self, key: str) -> dict[str, Any] | None:
        found = self.records(key)
        return found[0] if found else None


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


def counts(values: Iterable[Any]) -> list[tuple[str, int]]:
    """Values with their counts, most common first (None as ``none``)."""
    tally = Counter("none" if v is None else str(v) for v in values)
    return sorted(tally.items(), key=lambda p: (-p[1], p[0]))
