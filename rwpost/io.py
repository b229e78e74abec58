"""File helpers shared by every stage: atomic writes and JSONL with line-numbered errors."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

from rwpost.errors import RecordError


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
