"""One exception family for rwpost: every message names the record or file and what is wrong."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RwpostError(Exception):
    """Base class of every error rwpost raises on purpose; the CLI prints it as one line."""

    exit_code = 1


class ConfigError(RwpostError):
    """A parameter, path or environment setting is missing or invalid."""

    exit_code = 2


class RecordError(RwpostError):
    """One input record is malformed: names where it is, which field, what was expected and found."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        record_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.record_id = record_id
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.source:
            where.append(f"{self.source}:{self.line}" if self.line is not None else self.source)
        if self.record_id:
            where.append(f"record {self.record_id}")
        if self.field:
            where.append(f"field {self.field!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def as_reject(self) -> dict[str, object]:
        """The fields a rejects file stores for this error."""
        return {
            "source": self.source,
            "line": self.line,
            "record_id": self.record_id,
            "field": self.field,
            "reason": self.problem,
        }


class UnknownRatingError(RwpostError):
    """A Snopes rating that the label table does not know: reported, never guessed."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM, saying what it kept and what was in flight (one line).

    A ``KeyboardInterrupt``, so everything that handles Ctrl-C handles it; the command line prints
    ``detail`` and how to resume."""

    def __init__(self, signal_name: str, detail: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.detail = detail


def signal_name(exc: KeyboardInterrupt) -> str:
    """The signal that raised ``exc``: ``SIGTERM`` (see :func:`sigterm_interrupts`) or ``SIGINT``."""
    if isinstance(exc, Interrupted):
        return exc.signal_name
    return str(exc) if str(exc).startswith("SIG") else "SIGINT"


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While the block runs, SIGTERM (what ``timeout``, ``dvc`` and schedulers send) stops it as Ctrl-C
    does, a ``KeyboardInterrupt`` naming ``SIGTERM``: what is written stays whole and the run says so,
    where the default SIGTERM kills it mid-write and silently. (Only in the main thread.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def failed_import(exc: BaseException) -> str | None:
    """The top-level module whose import failed somewhere in ``exc`` or its causes (an optional package
    not installed), or None when no import failed."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ImportError) and cause.name:
            return cause.name.partition(".")[0]
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    return None


def interrupted_line(command: str, exc: KeyboardInterrupt, out: object) -> str:
    """What a command interrupted by ``exc`` prints: the signal, what was kept and in flight (an
    :class:`Interrupted`'s detail), and how to resume."""
    detail = exc.detail if isinstance(exc, Interrupted) else f"what is written in {out} is kept"
    return f"{command} interrupted ({signal_name(exc)}): {detail}; run the same command again to resume"


def interrupted_exit(exc: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by ``exc``: 130 for SIGINT, 143 for SIGTERM (128 + the signal)."""
    return 128 + int(getattr(signal, signal_name(exc), signal.SIGINT))
