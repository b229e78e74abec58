"""The measurement cache: a SQLite store keyed by (filter name, filter version, input content hash).

A measurement is the expensive part of a filter (OCR, image decoding, an LLM answer). Keying it by
content means a rerun after a threshold change, a reordering of records or a moved file measures
nothing again, while a changed image or a new filter version measures afresh (STYLE.md 10, 11).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


class MeasurementCache:
    """Persistent ``(filter, version, key) -> measurement`` map; safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS measurements ("
            " filter TEXT NOT NULL, version TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
            " PRIMARY KEY (filter, version, key))"
        )

    def get(self, filter_name: str, version: str, key: str) -> dict[str, Any] | None:
        """The stored measurement, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM measurements WHERE filter=? AND version=? AND key=?",
                (filter_name, version, key),
            ).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, filter_name: str, version: str, key: str, value: dict[str, Any]) -> None:
        """Store one measurement (committed at once, so a killed run keeps what it measured)."""
        blob = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO measurements (filter, version, key, value) VALUES (?, ?, ?, ?)",
                (filter_name, version, key, blob),
            )

    def count(self, filter_name: str | None = None) -> int:
        """How many measurements are stored (for one filter, or all)."""
        with self._lock:
            if filter_name is None:
                return self._db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]
            return self._db.execute(
                "SELECT COUNT(*) FROM measurements WHERE filter=?", (filter_name,)
            ).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> MeasurementCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
