"""Shards with deterministic ids and completion markers: the engine-neutral half of scaling out.

A record belongs to shard ``shard_of(id, count)`` (the SHA-256 of its id, so the same shard on every
machine, executor and rerun). A finished shard writes its outputs, then a marker naming a ``key`` (what
its input was) and the SHA-256 of each output; :class:`ShardStore` says which shards are done (marker
there, same key, outputs unchanged), and :meth:`ShardStore.require` refuses a merge while any shard is
missing, naming it. Markers are written atomically, after the outputs, so a killed shard has none. The
hashes are what vouch for a shard's files, so a stage may write them without an fsync each
(:func:`rwpost.io.unsynced`, as extract's shards do): files a machine crash cut short make the shard pending.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.ids import stable_seed
from rwpost.io import iter_lines, json_for_fields, read_json, sha256_file, sha256_hex, write_json


def shard_name(index: int, count: int) -> str:
    """The id of shard ``index`` of ``count``: ``00003-of-00007`` (sorts in index order)."""
    return f"{index:05d}-of-{count:05d}"


def shard_names(count: int) -> list[str]:
    """Every shard id of a ``count``-way split, in order."""
    return [shard_name(i, count) for i in range(count)]


def shard_index(name: str) -> tuple[int, int]:
    """``(index, count)`` of a shard id written by :func:`shard_name`."""
    try:
        index, _, count = name.partition("-of-")
        return int(index), int(count)
    except ValueError:
        raise ConfigError(f"{name!r} is not a shard id (expected e.g. 00003-of-00007)") from None


def shard_of(record_id: str | None, count: int) -> int:
    """The shard of a record: by the SHA-256 of its id (a row without one: the shard of ``""``)."""
    return stable_seed("shard", record_id or "") % count


def row_id(raw: bytes) -> str:
    """The ``id`` of one JSONL line, ``""`` when the line has none or is no JSON object."""
    try:
        row = json_for_fields(raw, ("id",))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return ""
    value = row.get("id") if isinstance(row, dict) else None
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class ShardInputs:
    """What each shard of a split of one input file holds: its key and its size."""

    keys: dict[str, str]
    """Shard -> the SHA-256 of the input lines that fall in it (blank lines skipped). A shard's key changes
    when one of its records does, or when records arrive or leave."""
    sizes: dict[str, int]
    """Shard -> the bytes of those lines (what :attr:`rwpost.executors.ShardJob.sizes` orders by)."""
    records: int
    """The input's non-blank lines (records, or lines set aside as such)."""


def shard_inputs(path: Path, count: int) -> ShardInputs:
    """Each shard's key and size, in one read of ``path``."""
    lines: dict[int, list[bytes]] = defaultdict(list)
    if path.exists():
        for _, raw in iter_lines(path):
            if raw.strip():
                lines[shard_of(row_id(raw), count)].append(raw.rstrip(b"\r\n"))
    names = {shard_name(i, count): lines.get(i, []) for i in range(count)}
    return ShardInputs(
        keys={name: sha256_hex(b"\n".join(held)) for name, held in names.items()},
        sizes={name: sum(map(len, held)) for name, held in names.items()},
        records=sum(map(len, lines.values())),
    )


def shard_keys(path: Path, count: int) -> dict[str, str]:
    """Each shard's input key (:attr:`ShardInputs.keys`)."""
    return shard_inputs(path, count).keys


def safe_name(shard: str) -> str:
    """A file name for a shard id (``main/vlm-T_I`` -> ``main__vlm-T_I``)."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in shard.replace("/", "__"))


class ShardStore:
    """Shard folders and completion markers under ``root`` (``root/<shard>/``, ``root/done/<shard>.json``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def folder(self, shard: str) -> Path:
        """Where shard ``shard`` writes its outputs (when they are not elsewhere already)."""
        return self.root / safe_name(shard)

    def marker(self, shard: str) -> Path:
        return self.root / "done" / f"{safe_name(shard)}.json"

    def clear(self, shard: str) -> None:
        """Forget that ``shard`` finished (before running it again)."""
        self.marker(shard).unlink(missing_ok=True)

    def finish(self, shard: str, key: str, outputs: Iterable[Path]) -> None:
        """Mark ``shard`` done: its input ``key`` and the SHA-256 of each output, written atomically."""
        files = {str(path): sha256_file(path) for path in outputs if path.exists()}
        write_json(self.marker(shard), {"shard": shard, "key": key, "outputs": files})

    def done(self, shard: str, key: str) -> bool:
        """Whether ``shard`` finished on the input ``key`` and its outputs are as it left them."""
        path = self.marker(shard)
        if not path.exists():
            return False
        try:
            marker: Any = read_json(path)
        except Exception:  # a marker nobody can read is no marker
            return False
        if not isinstance(marker, dict) or marker.get("key") != key:
            return False
        outputs = marker.get("outputs") or {}
        return all(Path(name).exists() and sha256_file(name) == sha for name, sha in outputs.items())

    def pending(self, keys: Mapping[str, str]) -> list[str]:
        """The shards of ``keys`` (shard -> input key) without a valid marker, in order."""
        return [shard for shard, key in keys.items() if not self.done(shard, key)]

    def require(self, keys: Mapping[str, str], what: str) -> None:
        """Refuse to merge ``what`` while any shard lacks a valid marker: one line naming them."""
        missing = self.pending(keys)
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            raise ConfigError(
                f"{what}: {len(missing)} of {len(keys)} shards have not finished ({shown}; markers in "
                f"{self.root / 'done'}); nothing was merged: run them again (a rerun does only these)"
            )
