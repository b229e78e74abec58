"""Sharded work and its executors: split a stage's records into shards with deterministic ids, run them
``local``-ly, on Ray or as a Slurm job array, mark each finished shard, and merge in id order.

- :mod:`rwpost.executors.shards`: shard ids by record id, completion markers, the merge's refusal;
- :mod:`rwpost.executors.run`: :func:`run_shards` with ``local`` or ``ray``
  (:mod:`rwpost.executors.ray_executor`: tasks, or one actor per model replica);
- :mod:`rwpost.executors.slurm`: the job array and the merge job as ``sbatch`` scripts.

A stage that shards (``rwpost.stages.extract``, ``rwpost.stages.evaluate``) provides ``run_shard(params,
shard)`` and ``merge(params)``; every executor calls the same two, so the outputs are identical.
"""

from rwpost.executors.params import ExecutorParams, SlurmParams
from rwpost.executors.run import run_shards
from rwpost.executors.shards import (
    ShardStore,
    ShardTask,
    concat_files,
    shard_index,
    shard_keys,
    shard_name,
    shard_names,
    shard_of,
)
from rwpost.executors.slurm import SlurmJob, write_slurm

__all__ = [
    "ExecutorParams",
    "ShardStore",
    "ShardTask",
    "SlurmJob",
    "SlurmParams",
    "concat_files",
    "run_shards",
    "shard_index",
    "shard_keys",
    "shard_name",
    "shard_names",
    "shard_of",
    "write_slurm",
]
