"""Run shards with an executor: ``local`` (one after the other, in this process) or ``ray`` (tasks, or one
actor per model replica holding its model). ``slurm`` writes scripts instead (:mod:`rwpost.executors.slurm`).
"""

from __future__ import annotations

from rwpost.errors import ConfigError
from rwpost.executors.params import ExecutorParams
from rwpost.executors.shards import ShardTask


def run_shards(executor: ExecutorParams, task: ShardTask) -> None:
    """Run every shard of ``task`` with ``executor`` (``local`` or ``ray``); a failed shard stops a local
    run, while Ray finishes the others and then names every shard that failed."""
    if not task.shards:
        return
    if executor.name == "local":
        held = task.hold() if task.hold is not None else None
        for shard in task.shards:
            task.run(shard, held)
    elif executor.name == "ray":
        from rwpost.executors.ray_executor import run_ray

        run_ray(task, address=executor.address, actors=executor.actors)
    else:
        raise ConfigError(f"executor {executor.name!r} writes job scripts; it does not run shards itself")
