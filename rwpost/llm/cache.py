"""A content-addressed, on-disk store of LLM answers (sqlite, safe to share between processes).

Keys come from :func:`cache_key`: the SHA-256 of the model, the prompt version, the answer schema and
the rendered messages with every image replaced by its hash. Only validated answers are stored, so a
rerun of a stage re-asks nothing that already succeeded and never re-bills the API (STYLE.md 11).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwpost.llm.types import LLMRequest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    task TEXT NOT NULL,
    answer TEXT NOT NULL,
    raw TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
)
"""


def cache_key(model: str, request: LLMRequest) -> str:
    """SHA-256 hex of everything that determines the answer (images by hash, not by bytes)."""
    payload = {
        "model": model,
        "prompt_version": request.prompt_version,
        "schema_name": request.schema_name,
        "schema": request.schema,
        "system": request.system,
        "user": request.user,
        "images": [image.sha256 for image in request.images],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """A stored validated answer with the tokens it cost when it was first bought."""

    answer: dict[str, Any]
    raw: str
    prompt_tokens: int
    completion_tokens: int


class LLMCache:
    """sqlite store of validated answers; WAL mode and a busy timeout let several processes share it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=60000")
        self._conn.execute(_SCHEMA)

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT answer, raw, prompt_tokens, completion_tokens FROM answers WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return CachedAnswer(json.loads(row[0]), row[1], int(row[2]), int(row[3]))

    def put(
        self,
        key: str,
        *,
        model: str,
        request: LLMRequest,
        answer: dict[str, Any],
        raw: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """Store a validated answer (the first writer of a key wins; answers are immutable)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    request.prompt_version,
                    request.task,
                    json.dumps(answer, ensure_ascii=False, sort_keys=True),
                    raw,
                    prompt_tokens,
                    completion_tokens,
                    time.time(),
                ),
            )

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
