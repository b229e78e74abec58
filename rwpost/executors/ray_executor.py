"""The Ray executor (Ray is in the ``ray`` and ``dev`` extras).

- plain shards: Ray tasks (one CPU, ``gpus`` each), at most ``executor.ray.max_concurrency`` at once
  (None: as many as the cluster fits), in Ray's pooled worker processes;
- model shards (a local model): a ``ray.util.ActorPool`` of ``executor.actors`` model replicas (default
  one per GPU, else one CPU actor; ``gpus`` each) that hold the model for every shard they take
  (:mod:`rwpost.executors.held`), each taking the next shard when it is free.

Each task or replica reserves ``executor.ray.memory``, stops a shard after ``executor.ray.time_limit_s`` and
writes each shard's output to ``<logs>/<shard>.log``; it computes with the driver's BLAS/OpenMP thread
count (Ray's workers default to one thread), so the outputs are the local executor's bytes. A task whose
worker dies (SIGKILL, out of memory) fails; a model replica that dies is restarted (reloading its model)
and its lost shard sent again, at most twice. Every shard runs, then the failures are named.

With no ``address`` (nor ``RAY_ADDRESS``) and no Ray initialised here, a new Ray starts on this machine
bound to 127.0.0.1 and is shut down at the end; a cluster (``address``, ``RAY_ADDRESS=auto``) or a Ray the
caller initialised is left running.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from rwpost.errors import ConfigError
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
from rwpost.executors.params import ExecutorParams, size_bytes


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("executor ray needs Ray: pip install 'rwpost[ray]'") from None
    return ray


RESTARTS = 2
"""Restarts of a model replica that died (its model reloaded each time)."""


class ModelReplica:
    """A Ray actor holding local models (a :class:`~rwpost.executors.base.Worker` with a held pool) for
    every shard it takes."""

    def __init__(self, run: ShardRun, threads: int, time_limit_s: float | None, logs: str) -> None:
        from pathlib import Path

        self.shard_run = run
        self.worker = Worker(threads, HeldPool(), time_limit_s, Path(logs))

    def run(self, shard: str) -> str:
        return self.worker.run(self.shard_run, shard)


def _task(run: ShardRun, shard: str, threads: int, time_limit_s: float | None, logs: str) -> str:
    """A plain shard as a Ray task (in one of Ray's pooled worker processes)."""
    from pathlib import Path

    return Worker(threads, None, time_limit_s, Path(logs)).run(run, shard)


def actor_gpus(asked: float, cluster: float) -> float:
    """GPUs of one model replica (actor): those ``asked``; when none are asked, one where the cluster
    has GPUs (so N GPUs run N replicas), else none (one CPU actor)."""
    return asked or (1.0 if cluster >= 1 else 0.0)


LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for a single-machine Ray (its default on macOS and Windows): with it at 0 the node's address
is 127.0.0.1 and the GCS, raylet, object manager and workers listen there only. ``ray.init(
_node_ip_address="127.0.0.1")`` does not do it (Ray swaps a loopback address for the routable one)."""


@contextlib.contextmanager
def loopback_only(ray: Any) -> Iterator[None]:
    """Within: a Ray started here binds 127.0.0.1 only (its processes read the environment; this
    process's Ray read it at import). Restored after, so a later cluster connection is unaffected."""
    constants = ray._private.ray_constants
    before_env, before = os.environ.get(LOCAL_ONLY), constants.ENABLE_RAY_CLUSTER
    os.environ[LOCAL_ONLY], constants.ENABLE_RAY_CLUSTER = "0", False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before
        if before_env is None:
            os.environ.pop(LOCAL_ONLY, None)
        else:
            os.environ[LOCAL_ONLY] = before_env


LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}
"""The local Ray's workers run at this process's priority. Ray starts its workers at nice 15, so that a
cluster node's raylet and GCS stay responsive. The local Ray that rwpost starts runs only rwpost's shards,
and at nice 15 any other busy process on the machine starves them: the Ray evaluate test took 4.9 s on a
quiet 2-core machine and 408-530 s beside four busy processes."""


def init_local(ray: Any, **options: Any) -> None:
    """Start Ray on this machine, bound to 127.0.0.1 only (the raylet and GCS keep the setting for the
    workers they start; this process's Ray needs it only while it starts them), its workers at this
    process's priority (:data:`LOCAL_SYSTEM_CONFIG`)."""
    with loopback_only(ray):  # "local": a new Ray even where `ray start` left an address to connect to
        ray.init(
            address="local",
            include_dashboard=False,
            log_to_driver=False,
            _system_config=LOCAL_SYSTEM_CONFIG,
            **options,
        )


class RayExecutor:
    """Shards on a Ray cluster (or a local Ray started here)."""

    def __init__(self, params: ExecutorParams) -> None:
        self.params = params

    def run(self, job: ShardJob) -> Submitted | None:
        if not job.pending:
            return None
        ray = import_ray()
        started = not ray.is_initialized()
        if started:
            address = self.params.address or os.environ.get("RAY_ADDRESS")  # ray's own variable
            if address is None:
                init_local(ray)
            else:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
        try:
            failures = self._tasks(ray, job, job.for_plain()) + self._replicas(ray, job, job.for_models())
        finally:
            if started:
                ray.shutdown()
        name_failures(job.name, len(job.pending), failures, job.pending)
        return None

    def _options(self, job: ShardJob) -> dict[str, Any]:
        """What each task or replica reserves, and the environment it needs (credentials)."""
        options: dict[str, Any] = {"num_cpus": 1}
        if job.env:  # a runtime_env starts workers of its own: only when there are credentials to pass
            options["runtime_env"] = {"env_vars": dict(job.env)}
        if self.params.ray.memory:
            options["memory"] = size_bytes(self.params.ray.memory)
        return options

    def _tasks(self, ray: Any, job: ShardJob, shards: list[str]) -> list[tuple[str, str]]:
        """Plain shards as Ray tasks, at most ``max_concurrency`` in flight (None: as the cluster fits)."""
        if not shards:
            return []
        threads, limits = driver_threads(), self.params.ray
        options = {**self._options(job), "num_gpus": job.gpus, "max_retries": 0}
        remote, run = ray.remote(_task).options(**options), ray.put(job.run)
        logs = str(limits.logs or job.root / "logs")
        todo, running, failures = list(shards), {}, []
        while todo or running:
            while todo and len(running) < (limits.max_concurrency or len(shards)):
                shard = todo.pop(0)
                running[remote.remote(run, shard, threads, limits.time_limit_s, logs)] = shard
            [ready], _ = ray.wait(list(running), num_returns=1)
            shard = running.pop(ready)
            try:
                ray.get(ready)
            except Exception as exc:  # the shard's error (a RayTaskError), or its worker died
                failures.append((shard, one_line(exc)))
        return failures

    def _replicas(self, ray: Any, job: ShardJob, shards: list[str]) -> list[tuple[str, str]]:
        """Model shards on an ``ActorPool`` of replicas, each taking the next shard when it is free."""
        if not shards:
            return []
        from ray.util import ActorPool

        threads, limits, gpus = driver_threads(), self.params.ray, ray.cluster_resources().get("GPU", 0)
        each = actor_gpus(job.gpus, gpus)
        count = self.params.actors or (max(1, int(gpus // each)) if each else 1)
        # a replica that dies (SIGKILL, out of memory) is restarted, reloading its model, and the shards
        # sent to it meanwhile, its lost one included, are sent again: at most RESTARTS times
        restarts = {"max_restarts": RESTARTS, "max_task_retries": -1}
        options = {**self._options(job), "num_gpus": each, **restarts}
        replica = ray.remote(ModelReplica).options(**options)
        logs = str(limits.logs or job.root / "logs")
        actors = [
            replica.remote(job.run, threads, limits.time_limit_s, logs)
            for _ in range(min(count, len(shards)))
        ]
        pool = ActorPool(actors)
        for shard in shards:
            pool.submit(lambda actor, shard: actor.run.remote(shard), shard)
        failures = []
        for shard in shards:  # get_next() answers in submission order: its i-th answer is shards[i]'s
            try:
                pool.get_next()
            except Exception as exc:  # the shard's error, or its replica died (loading the model, killed)
                failures.append((shard, one_line(exc)))
        for actor in actors:
            ray.kill(actor)
        return failures
