"""A content-addressed, on-disk store of LLM answers (sqlite, safe to share between processes).

Keys come from :func:`cache_key`: the SHA-256 of the model, the prompt version, the answer schema and
the rendered messages with every image replaced by its hash. Only validated answers are stored, so a
rerun of a stage re-asks nothing that already succeeded and never re-bills the API (STYLE.md 11).
"""

from __future__ import annotations

import json
import os
from typing import Any

from rwpost.cache import SqliteStore
from rwpost.io import sha256_hex
from rwpost.llm.types import CachedAnswer, LLMRequest

NAMESPACE = "llm"
"""The store namespace of LLM answers."""


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
    return sha256_hex(text)


class LLMCache:
    """Validated answers by :func:`cache_key`: a typed layer over :class:`rwpost.cache.SqliteStore`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.store = SqliteStore(path)
        self.path = self.store.path

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        value = self.store.get(NAMESPACE, key)
        if value is None:
            return None
        return CachedAnswer(
            value["answer"], value["raw"], int(value["prompt_tokens"]), int(value["completion_tokens"])
        )

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
        value = {
            "model": model,
            "prompt_version": request.prompt_version,
            "task": request.task,
            "answer": answer,
            "raw": raw,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }
        self.store.put(NAMESPACE, key, value, replace=False)

    def __contains__(self, key: str) -> bool:
        return self.store.contains(NAMESPACE, key)

    def __len__(self) -> int:
        return self.store.count(NAMESPACE)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
