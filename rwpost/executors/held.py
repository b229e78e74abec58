"""What a worker holds: the objects it loads once (a local model) and reuses for every shard it takes.

"Held" has one meaning for every executor. A shard of :attr:`ShardJob.models` runs on a *model replica*: a
worker whose pool outlives its shards (the local executor's own process; a Ray actor); inside it,
:func:`held` returns the object built the first time under a key (``rwpost.llm.held.local_chat_model``
keys a model folder and its options). Any other shard, and any code outside a replica, builds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_POOL: ContextVar[dict[str, Any] | None] = ContextVar("rwpost_held", default=None)


class HeldPool(dict[str, Any]):
    """A model replica's pool: key -> the object built once (its lifetime is the worker's)."""


@contextmanager
def holding(pool: HeldPool | None) -> Iterator[None]:
    """Within: :func:`held` keeps what it builds in ``pool`` (None: every call builds its own)."""
    token = _POOL.set(pool)
    try:
        yield
    finally:
        _POOL.reset(token)


def held(key: str, build: Callable[[], T]) -> T:
    """The object the current replica holds under ``key`` (``build()`` the first time); ``build()`` outside
    a replica."""
    pool = _POOL.get()
    if pool is None:
        return build()
    if key not in pool:
        pool[key] = build()
    return pool[key]


__all__ = ["HeldPool", "held", "holding"]
