"""Sharded work and its executors: split a stage's records into shards with deterministic ids, run them with
one :class:`Executor` (``local``, ``ray``, ``slurm``), mark each finished shard, and merge in id order.

- :mod:`rwpost.executors.shards`: shard ids by record id, completion markers, the merge's refusal;
- :mod:`rwpost.executors.base`: the protocol (:class:`ShardJob`, :class:`Executor`, :class:`Submitted`)
  and how a worker runs a shard (held pool, thread count, time limit, log); :mod:`rwpost.executors.run`:
  :func:`executor_of` the ``executor:`` section and :func:`run_job`;
- :mod:`rwpost.executors.local`: a process pool of ``workers``; :mod:`rwpost.executors.ray_executor`:
  ``ActorPool``\\ s of Ray workers and model replicas; :mod:`rwpost.executors.slurm`: job arrays and the
  merge job as ``sbatch`` scripts;
- :mod:`rwpost.executors.held`: what a model replica holds across its shards (a loaded model).

A stage that shards (``rwpost.stages.extract``, ``rwpost.stages.evaluate``) describes its shards as a
:class:`ShardJob` and provides ``run_shard(params, shard)`` and ``merge(params)``; every executor runs the
same shard function, so the outputs are identical.
"""

from rwpost.executors.base import Executor, ShardJob, Submitted, check_shard_count
from rwpost.executors.params import ExecutorParams, RayParams, SlurmParams
from rwpost.executors.run import executor_of, run_job
from rwpost.executors.shards import (
    ShardInputs,
    ShardStore,
    shard_index,
    shard_inputs,
    shard_keys,
    shard_name,
    shard_names,
    shard_of,
)
from rwpost.executors.slurm import SlurmJob, write_slurm

__all__ = [
    "Executor",
    "ExecutorParams",
    "RayParams",
    "ShardInputs",
    "ShardJob",
    "ShardStore",
    "SlurmJob",
    "SlurmParams",
    "Submitted",
    "check_shard_count",
    "executor_of",
    "run_job",
    "shard_index",
    "shard_inputs",
    "shard_keys",
    "shard_name",
    "shard_names",
    "shard_of",
    "write_slurm",
]
