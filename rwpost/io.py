"""File helpers shared by every stage: atomic writes, JSONL with line-numbered errors, typed readers
that set bad rows aside with their reason, and the one SHA-256 helper (content, checksums, cache keys)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from rwpost.errors import RecordError
from rwpost.records import Reject

M = TypeVar("M", bound=BaseModel)


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs get the usual mode
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[BinaryIO | Any]:
    """Open a file for writing that appears at ``path`` only when the block ends without error."""
    with atomic_path(path) as tmp:
        encoding = None if "b" in mode else "utf-8"
        with open(tmp, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write bytes atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 text atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write pretty, key-sorted JSON atomically (stable diffs for DVC metrics)."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n")


def _to_jsonable(row: BaseModel | dict[str, Any]) -> dict[str, Any]:
    return row.model_dump(mode="json") if isinstance(row, BaseModel) else row


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write records as JSON lines atomically; returns the number written."""
    count = 0
    with atomic_open(path, "w") as handle:
        for row in rows:
            handle.write(json.dumps(_to_jsonable(row), ensure_ascii=False) + "\n")
            count += 1
    return count


def append_jsonl(path: str | os.PathLike[str], row: BaseModel | dict[str, Any]) -> None:
    """Append one record and flush it to disk (for resumable stages: a line is either whole or absent)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(_to_jsonable(row), ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` per non-empty line; a bad line raises :class:`RecordError`.

    A last line without a newline that does not parse is treated as a write cut short by a kill and
    reported like any other bad line, so callers decide (skip with a reject, or stop).
    """
    source = str(path)
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError as exc:
        raise RecordError("file not found", source=source) from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise RecordError(
                    f"not valid JSON ({exc.msg} at column {exc.colno})", source=source, line=number
                ) from exc


def sha256_hex(data: bytes | str) -> str:
    """Hex SHA-256 of bytes, or of a string as UTF-8: content addresses of images and HTML, run
    identities and cache keys all use it (the project's one hash helper, with :func:`sha256_file`)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's content, read in 1 MiB chunks (dataset checksums, run identities)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def validation_problem(exc: ValidationError) -> tuple[str, str | None]:
    """``(message, dotted field)`` of the first problem pydantic found (one line, never the full dump)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return first.get("msg", "invalid"), where or None


def read_records(
    path: str | os.PathLike[str],
    model: type[M],
    *,
    rejects: list[Reject] | None = None,
    stage: str = "read",
) -> Iterator[M]:
    """Validated ``model`` records of a JSONL file.

    A row that does not validate raises :class:`RecordError` naming the file, line, record id and field;
    when ``rejects`` is given it is set aside there instead, as a ``Reject`` of ``stage`` with its data.
    """
    source = str(path)
    for line, row in iter_jsonl(path):
        try:
            yield model.model_validate(row)
        except ValidationError as exc:
            message, where = validation_problem(exc)
            rid = row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else None
            error = RecordError(
                f"not a {model.__name__}: {message}", source=source, line=line, record_id=rid, field=where
            )
            if rejects is None:
                raise error from exc
            rejects.append(Reject(id=rid, stage=stage, reason=str(error), source=source, line=line, data=row))
