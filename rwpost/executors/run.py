"""The executor an ``executor:`` section names, and a job run with it."""

from __future__ import annotations

from rwpost.executors.base import Executor, ShardJob, Submitted
from rwpost.executors.local import LocalExecutor
from rwpost.executors.params import ExecutorParams
from rwpost.executors.slurm import SlurmExecutor


def executor_of(params: ExecutorParams) -> Executor:
    """The executor the ``executor:`` section names (Ray is imported only when a Ray job runs)."""
    if params.name == "ray":
        from rwpost.executors.ray_executor import RayExecutor

        return RayExecutor(params)
    if params.name == "slurm":
        return SlurmExecutor(params)
    return LocalExecutor(params)


def run_job(params: ExecutorParams, job: ShardJob) -> Submitted | None:
    """Run ``job`` with the executor of ``params``: None once every pending shard ran (else one error
    naming those that failed), or the job a scheduler was handed."""
    return executor_of(params).run(job)


__all__ = ["executor_of", "run_job"]
