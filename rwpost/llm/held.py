"""Local models held by a long-lived process and reused: a Ray actor's replica, loaded once.

Inside :func:`holding_models` (a Ray actor's runs, or the runs of a sharded local evaluation)
:func:`local_chat_model` loads a :class:`~rwpost.llm.local.LocalChatModel` once per folder and options and
gives every caller its own view of it (its own usage counts and batcher, the same weights); outside, each
call loads its own, as before. Answers are the same either way: greedy decoding is deterministic, and
sampling is seeded by each batch's requests.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

_HELD: ContextVar[dict[str, Any] | None] = ContextVar("rwpost_held_local_models", default=None)


@contextmanager
def holding_models(pool: dict[str, Any] | None) -> Iterator[None]:
    """Within: the local models loaded are kept in ``pool`` and reused (None: each loads its own)."""
    token = _HELD.set(pool)
    try:
        yield
    finally:
        _HELD.reset(token)


def local_chat_model(path: str | Path, **options: Any) -> Any:
    """``LocalChatModel(path, **options)``: the one the pool holds (loaded the first time), or a new one
    outside :func:`holding_models`."""
    from rwpost.llm.local import Coalescer, LocalChatModel

    pool = _HELD.get()
    if pool is None:
        return LocalChatModel(path, **options)
    key = json.dumps([str(path), options], sort_keys=True, default=str)
    if key not in pool:
        pool[key] = LocalChatModel(path, **options)
    view = copy.copy(pool[key])
    view.usage, view.batches = {}, 0
    view._batcher = Coalescer(view._generate_pending)
    return view


__all__ = ["holding_models", "local_chat_model"]
