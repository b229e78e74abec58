"""Local models held by a model replica and reused (:mod:`rwpost.executors.held`): loaded once per folder
and options, every caller gets its own view of it (its own usage counts and batcher, the same weights);
outside a replica each call loads its own, as before. Answers are the same either way: greedy decoding is
deterministic, and sampling is seeded by each batch's requests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rwpost.executors.held import held


def local_chat_model(path: str | Path, **options: Any) -> Any:
    """``LocalChatModel(path, **options)``: a view of the one the replica holds (loaded the first time), or
    a new one outside a replica."""
    from rwpost.llm.local import LocalChatModel

    key = json.dumps(["LocalChatModel", str(path), options], sort_keys=True, default=str)
    return held(key, lambda: LocalChatModel(path, **options)).view()


__all__ = ["local_chat_model"]
