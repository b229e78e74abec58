"""The local executor: a process pool of ``workers`` (default: the machine's cores) for plain shards, and
this process as the one model replica for the shards that load a local model (it holds the model for all
of them: a second copy would only share the same cores or GPU).

One worker, or one shard to run, runs in this process (no pool). A failed shard stops a run in this
process with its own error; in the pool the other shards still run, then the failures are named (one
alone: its own error). Worker processes are forked on Linux (the shard function is inherited, never
pickled) and spawned elsewhere; they report progress through a queue.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from rwpost.errors import RwpostError
from rwpost.executors.base import (
    ShardJob,
    ShardRun,
    Submitted,
    Worker,
    driver_threads,
    name_failures,
    one_line,
)
from rwpost.executors.held import HeldPool
from rwpost.executors.params import ExecutorParams

_STATE: tuple[ShardRun, Worker, Any] | None = None
"""A pool worker's shard function, its :class:`Worker` and the progress queue (set by :func:`_start`)."""


def machine_cores() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _start(run: ShardRun, threads: int | None, queue: Any) -> None:
    global _STATE
    # the parent stops its workers (SIGTERM, default: they die; a shard's writes are atomic or resumable):
    # Ctrl-C reaches the whole process group but is the parent's to handle, and a forked worker must not
    # keep the parent's SIGTERM-as-KeyboardInterrupt handler, which the pool would catch and carry on
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _STATE = (run, Worker(threads), queue)


def _one(shard: str) -> str:
    assert _STATE is not None, "a pool worker runs shards after _start"
    run, worker, queue = _STATE
    try:
        return worker.run(run, shard, queue.put if queue is not None else None)
    except Exception as exc:  # sent back pickled: one that does not survive it goes as its one line
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise RwpostError(one_line(exc)) from None
        raise


class LocalExecutor:
    """Shards on this machine: a pool of ``workers`` processes, and this process for model shards."""

    def __init__(self, params: ExecutorParams) -> None:
        self.workers = params.workers or machine_cores()

    def run(self, job: ShardJob) -> Submitted | None:
        plain, models = job.for_plain(), job.for_models()
        if min(self.workers, len(plain)) > 1:
            self._pool(job, plain)
        else:
            here = Worker()
            for shard in plain:
                here.run(job.run, shard, job.progress)
        replica = Worker(pool=HeldPool())  # loads each model once for all its shards
        for shard in models:
            replica.run(job.run, shard, job.progress)
        return None

    def _pool(self, job: ShardJob, shards: list[str]) -> None:
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        queue = context.SimpleQueue() if job.progress is not None else None
        relay = threading.Thread(target=_relay, args=(queue, job.progress), daemon=True) if queue else None
        if relay is not None:
            relay.start()
        pool = ProcessPoolExecutor(
            min(self.workers, len(shards)),
            context,
            initializer=_start,
            # a forked worker has this process's thread settings already; a spawned one is told them
            initargs=(job.run, None if context.get_start_method() == "fork" else driver_threads(), queue),
        )
        answered = False
        try:
            # the first submit forks the workers: objects frozen here are left out of a worker's garbage
            # collections, which would otherwise touch (and so copy) every page of this process's heap
            gc.freeze()
            try:
                futures: dict[str, Future[str]] = {shard: pool.submit(_one, shard) for shard in shards}
            finally:
                gc.unfreeze()
            failures: list[tuple[str, str]] = []
            errors: list[BaseException] = []
            for shard, future in futures.items():
                try:
                    future.result()
                except Exception as exc:  # the shard's own error, or its worker died (BrokenProcessPool)
                    failures.append((shard, one_line(exc)))
                    errors.append(exc)
            answered = True
        except BaseException:  # Ctrl-C or SIGTERM here: stop the workers' shards too (a rerun resumes them)
            for process in list(getattr(pool, "_processes", {}).values()):  # no public way before 3.14
                process.terminate()
            raise
        finally:
            # every shard answered: the workers only have to exit, which the pool's own thread waits for
            # while the stage merges (stopped or failed: wait until they have)
            pool.shutdown(wait=not answered, cancel_futures=True)
            if queue is not None and relay is not None:
                queue.put(None)
                relay.join()
        if len(errors) == 1:
            raise errors[0]
        name_failures(job.name, len(shards), failures, job.pending)


def _relay(queue: Any, progress: Any) -> None:
    """Tell ``progress`` what the workers report, until None."""
    while (done := queue.get()) is not None:
        progress(done)
