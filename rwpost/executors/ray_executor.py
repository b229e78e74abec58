"""The Ray executor (``pip install 'rwpost[ray]'``): shards as Ray tasks, or, for a local model, one actor
per replica (``num_gpus`` each) that loads the model once and takes shard after shard.

Works with ``ray.init()`` on a laptop (started here, shut down at the end) and with a running cluster
(``address``; or a Ray already initialised by the caller, left running).
"""

from __future__ import annotations

from typing import Any

from rwpost.errors import ConfigError, RwpostError
from rwpost.executors.shards import ShardTask


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("executor ray needs Ray: pip install 'rwpost[ray]'") from None
    return ray


def _run(run: Any, shard: str, held: Any) -> str:
    run(shard, held)
    return shard


class ModelHolder:
    """A Ray actor's state: the object ``hold()`` built (a loaded model), used for every shard it gets."""

    def __init__(self, hold: Any) -> None:
        self.held = hold()

    def run(self, run: Any, shard: str) -> str:
        return _run(run, shard, self.held)


def actor_gpus(asked: float, cluster: float) -> float:
    """GPUs of one model replica (actor): those ``asked``; when none are asked, one where the cluster
    has GPUs (so N GPUs run N replicas), else none (one CPU actor)."""
    return asked or (1.0 if cluster >= 1 else 0.0)


def _cause(exc: BaseException) -> str:
    """The shard's own error, on one line (a Ray task error wraps it)."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause) if isinstance(cause, RwpostError) else f"{type(cause).__name__}: {cause}"
    return " ".join(text.split())[:300]


def run_ray(task: ShardTask, *, address: str | None = None, actors: int | None = None) -> None:
    """Run ``task``'s shards on Ray; every shard runs even when one fails, then the failures are named."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        failures = _dispatch(ray, task, actors)
    finally:
        if started:
            ray.shutdown()
    if failures:
        order = {shard: i for i, shard in enumerate(task.shards)}
        failures.sort(key=lambda failure: order[failure[0]])
        shown = "; ".join(f"{shard}: {why}" for shard, why in failures[:5])
        raise RwpostError(f"{task.name}: {len(failures)} of {len(task.shards)} shards failed ({shown})")


def _dispatch(ray: Any, task: ShardTask, actors: int | None) -> list[tuple[str, str]]:
    options: dict[str, Any] = {"max_retries": 0}
    if task.env:
        options["runtime_env"] = {"env_vars": dict(task.env)}
    running: dict[Any, tuple[str, Any]] = {}
    todo = list(task.shards)
    free: list[Any] = []
    if task.hold is None:
        remote = ray.remote(num_cpus=1, num_gpus=task.gpus)(_run).options(**options)
    else:
        gpus = ray.cluster_resources().get("GPU", 0)
        each = actor_gpus(task.gpus, gpus)
        count = actors or (max(1, int(gpus // each)) if each else 1)
        holder = ray.remote(num_cpus=1, num_gpus=each)(ModelHolder)
        actor_options = {"runtime_env": options["runtime_env"]} if "runtime_env" in options else {}
        free = [holder.options(**actor_options).remote(task.hold) for _ in range(min(count, len(todo)))]
    failures: list[tuple[str, str]] = []
    while todo or running:
        while todo and (task.hold is None or free):
            shard = todo.pop(0)
            if task.hold is None:
                running[remote.remote(task.run, shard, None)] = (shard, None)
            else:
                actor = free.pop()
                running[actor.run.remote(task.run, shard)] = (shard, actor)
        [ref], _ = ray.wait(list(running), num_returns=1)
        shard, actor = running.pop(ref)
        try:
            ray.get(ref)
        except Exception as exc:  # the shard's error (a RayTaskError), or its actor died loading the model
            failures.append((shard, _cause(exc)))
            if actor is not None and "ActorDiedError" in type(exc).__name__:
                continue  # a dead actor takes no more shards
        if actor is not None:
            free.append(actor)
        if task.hold is not None and not free and not running and todo:
            failures.extend((s, "no model replica left (every actor failed)") for s in todo)
            todo.clear()
    return failures
