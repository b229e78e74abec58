"""The one executor protocol: a stage describes its shards as a :class:`ShardJob`; an :class:`Executor`
(:func:`rwpost.executors.run.executor_of`) runs the pending ones (``local``, ``ray``) or hands them to a
scheduler (``slurm``, returning the :class:`Submitted` job); the stage then merges. No stage asks which
executor it has.

Every executor runs each shard through :func:`run_in_worker`: the shard's own function, inside its worker's
held pool when it is a model shard (:mod:`rwpost.executors.held`), with the driver's BLAS/OpenMP thread
count (so float sums come out the same bytes on every worker) and, where asked, a time limit and a log file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rwpost.errors import ConfigError, RwpostError
from rwpost.executors.held import HeldPool, holding

Progress = Callable[[int], None]
ShardRun = Callable[[str, "Progress | None"], None]
"""Runs one shard (writes its outputs, then its marker); told how to report progress (None: not at all)."""

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass(frozen=True)
class ShardJob:
    """The shards of one stage run: every shard's input key, those to run, and what runs one.

    ``run(shard, progress)`` does one shard and writes its marker; a shard of ``models`` loads a local
    model and goes to a model replica (a worker that holds it for every shard it takes). ``module`` and
    ``params`` are what a scheduler's task needs to run a shard elsewhere (the stage module's
    ``run_shard(params, shard)`` and ``merge(params)``; params as JSON, never credentials).
    """

    name: str
    keys: Mapping[str, str]
    pending: Sequence[str]
    run: ShardRun
    root: Path
    """The job's work folder (markers, logs, scripts)."""
    models: frozenset[str] = frozenset()
    module: str | None = None
    params: Mapping[str, Any] | None = None
    gpus: float = 0
    """GPUs each model replica (or each plain Ray task) asks for."""
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Environment the shards need on other machines (credentials): sent to Ray's workers, never written."""
    progress: Progress | None = None
    """Told of each unit of work done (an article), where the executor can report it."""
    sizes: Mapping[str, int] = field(default_factory=dict)
    """Each shard's input bytes, where the stage knows them (:func:`rwpost.executors.shards.shard_inputs`):
    the shards run largest first (:meth:`for_plain`)."""

    def for_plain(self) -> list[str]:
        """The pending shards without a model, in the order to run them: the largest input first (ties and
        unknown sizes in job order). A large shard started last would run alone while the other workers
        wait: on the sample's 8-shard extraction the last shard is the largest, and ran alone for a fifth of
        the run at 2 workers."""
        plain = [shard for shard in self.pending if shard not in self.models]
        return sorted(plain, key=lambda shard: -self.sizes.get(shard, 0))

    def for_models(self) -> list[str]:
        return [shard for shard in self.pending if shard in self.models]


@dataclass(frozen=True)
class Submitted:
    """A job handed to a scheduler (the Slurm scripts written): nothing ran here yet."""

    submit: Path
    shards: int
    pending: int
    merge: str
    """The command that merges here once every shard has finished."""

    def message(self, stage: str, unit: str = "shards") -> str:
        if self.pending:
            return f"{stage}: {self.pending} of {self.shards} {unit} to run; submit with: bash {self.submit}"
        return (
            f"{stage}: all {self.shards} {unit} have finished, nothing to run; merge here with: {self.merge} "
            f"(or submit the merge job alone: bash {self.submit})"
        )


class Executor(Protocol):
    """Runs a :class:`ShardJob`'s pending shards: every one, then one error naming those that failed; or
    hands them to a scheduler and returns the :class:`Submitted` job."""

    def run(self, job: ShardJob) -> Submitted | None: ...


def check_shard_count(shards: int, records: int, what: str) -> None:
    """Refuse more shards than records (each extra shard is an empty folder and a marker, and a million of
    them churn for hours): one line saying what to give."""
    if shards > max(1, records):
        raise ConfigError(
            f"executor.shards: {shards} shards for {records} records in {what}; "
            f"give at most {max(1, records)}"
        )


def name_failures(name: str, total: int, failures: list[tuple[str, str]], order: Sequence[str]) -> None:
    """Raise one line naming the failed shards (in job order; the first five with their reason)."""
    if not failures:
        return
    rank = {shard: i for i, shard in enumerate(order)}
    failures = sorted(failures, key=lambda failure: rank.get(failure[0], len(rank)))
    shown = "; ".join(f"{shard}: {why}" for shard, why in failures[:5])
    more = f" and {len(failures) - 5} more" if len(failures) > 5 else ""
    raise RwpostError(f"{name}: {len(failures)} of {total} shards failed ({shown}{more})")


def one_line(exc: BaseException) -> str:
    """A shard's error on one line (a Ray task error wraps the shard's own)."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause) if isinstance(cause, RwpostError) else f"{type(cause).__name__}: {cause}"
    return " ".join(text.split())[:300]


def driver_threads() -> int:
    """The BLAS/OpenMP threads this process computes with: ``OMP_NUM_THREADS`` when set, else torch's
    count when torch is loaded, else the CPUs this process may use (libgomp's and OpenBLAS's default)."""
    given = os.environ.get("OMP_NUM_THREADS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.get_num_threads())
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def thread_env(threads: int) -> dict[str, str]:
    """The environment that gives a worker ``threads`` BLAS/OpenMP threads (read when they load)."""
    return dict.fromkeys(THREAD_VARIABLES, str(threads))


def pin_threads(threads: int) -> None:
    """This worker computes with ``threads`` threads, like the driver (Ray's workers start with
    ``OMP_NUM_THREADS=1``): the environment for libraries not loaded yet, and the BLAS/OpenMP pools and
    torch's setting of those loaded (threadpoolctl, a scikit-learn dependency)."""
    os.environ.update(thread_env(threads))
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


class ShardTimeout(RwpostError):
    """A shard ran past the executor's time limit."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Stop the block with :class:`ShardTimeout` after ``seconds`` (SIGALRM; the main thread only)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise ShardTimeout(f"stopped after the time limit of {seconds:g} s (a rerun resumes it)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def shard_log(path: Path | None) -> Iterator[None]:
    """The block's output (stdout, stderr, logging) appended to ``path`` (None: left where it goes)."""
    if path is None:
        yield
        return
    import logging

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        logging.getLogger().addHandler(handler)
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                yield
        finally:
            logging.getLogger().removeHandler(handler)


@dataclass
class Worker:
    """How a worker runs shards: its held pool (a model replica's; None: a plain worker), the driver's
    thread count, a time limit and a log folder."""

    threads: int | None = None
    """The driver's thread count, set here (None: this is the driver)."""
    pool: HeldPool | None = None
    time_limit_s: float | None = None
    logs: Path | None = None

    def __post_init__(self) -> None:
        if self.threads is not None:
            pin_threads(self.threads)

    def run(self, run: ShardRun, shard: str, progress: Progress | None = None) -> str:
        from rwpost.executors.shards import safe_name

        log = self.logs / f"{safe_name(shard)}.log" if self.logs is not None else None
        with shard_log(log), holding(self.pool), time_limit(self.time_limit_s):
            run(shard, progress)
        return shard


__all__ = [
    "Executor",
    "ShardJob",
    "ShardRun",
    "ShardTimeout",
    "Submitted",
    "Worker",
    "check_shard_count",
    "driver_threads",
    "name_failures",
]
