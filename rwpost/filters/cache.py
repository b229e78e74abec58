"""The measurement cache: measurements keyed by (filter name, filter version, input content hash).

A measurement is the expensive part of a filter (OCR, image decoding, an LLM answer). Keying it by
content means a rerun after a threshold change, a reordering of records or a moved file measures
nothing again, while a changed image or a new filter version measures afresh (STYLE.md 10, 11).
A typed layer over :class:`rwpost.cache.SqliteStore`: one namespace per filter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rwpost.cache import SqliteStore


def _key(version: str, key: str) -> str:
    """The store key of one measurement within its filter's namespace."""
    return json.dumps([version, key])


class MeasurementCache:
    """Persistent ``(filter, version, key) -> measurement`` map; safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.store = SqliteStore(path)
        self.path = self.store.path

    def get(self, filter_name: str, version: str, key: str) -> dict[str, Any] | None:
        """The stored measurement, or None."""
        return self.store.get(filter_name, _key(version, key))

    def put(self, filter_name: str, version: str, key: str, value: dict[str, Any]) -> None:
        """Store one measurement (committed at once, so a killed run keeps what it measured)."""
        self.store.put(filter_name, _key(version, key), value)

    def count(self, filter_name: str | None = None) -> int:
        """How many measurements are stored (for one filter, or all)."""
        return self.store.count(filter_name)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MeasurementCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
