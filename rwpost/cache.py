"""One on-disk key-value store of JSON values (sqlite), shared by the LLM answer cache and the filters'
measurement cache.

WAL mode and a busy timeout let several processes share a file; a lock lets threads share a connection.
Every ``put`` commits at once, so a killed run keeps what it stored (STYLE.md 11). Values live in one
table under a namespace (``llm``, a filter's name...), keyed by a string the caller builds from content.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rwpost.errors import RwpostError

_TABLE = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (namespace, key)
)
"""

_INSERT = "{verb} INTO entries (namespace, key, value, created_at) VALUES (?, ?, ?, ?)"


def _dumps(value: Any) -> str:
    # key order kept as the producer wrote it: a value read back from the cache then serialises to the same
    # bytes as a fresh one (a decision measured now and one served from the cache are byte-identical)
    return json.dumps(value, ensure_ascii=False, default=str)


class SqliteStore:
    """``(namespace, key) -> JSON value`` in one sqlite file; safe to share between threads and processes."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._failing("open"):
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            self._conn.execute(_TABLE)

    @contextmanager
    def _failing(self, doing: str) -> Iterator[None]:
        """An sqlite error (a full disk, a file that is no database) as one line naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise RwpostError(f"{self.path}: cannot {doing} the cache ({exc})") from exc

    def get(self, namespace: str, key: str) -> Any | None:
        """The stored value, or None."""
        with self._lock, self._failing("read"):
            row = self._conn.execute(
                "SELECT value FROM entries WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, namespace: str, key: str, value: Any, *, replace: bool = True) -> None:
        """Store one value; with ``replace=False`` the first writer of a key wins (immutable entries)."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._lock, self._failing("write"):
            self._conn.execute(_INSERT.format(verb=verb), (namespace, key, _dumps(value), time.time()))

    def contains(self, namespace: str, key: str) -> bool:
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM entries WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
        return row is not None

    def count(self, namespace: str | None = None) -> int:
        """How many values are stored (in one namespace, or all)."""
        with self._lock:
            if namespace is None:
                row = self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()
            else:
                row = self._conn.execute(
                    "SELECT COUNT(*) FROM entries WHERE namespace = ?", (namespace,)
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
