"""The ``executor:`` section of params.yaml: who runs a sharded stage, and how it is split."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)


def size_bytes(text: str) -> int:
    """``16G`` -> bytes (K, M, G, T: powers of 1024); a one-line error for anything else."""
    match = SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (e.g. 512M, 16G)")
    return int(float(match[1]) * 1024 ** ("", "K", "M", "G", "T").index(match[2].upper()))


class SlurmParams(BaseModel):
    """``executor.slurm``: the ``#SBATCH`` lines of the written job arrays and merge job."""

    model_config = ConfigDict(extra="forbid")

    partition: str | None = None
    time: str = "04:00:00"
    cpus_per_task: PositiveInt = 2
    mem: str | None = None
    """e.g. ``16G``; None: the partition's default."""
    max_parallel: PositiveInt | None = None
    """At most this many tasks of an array at once (``--array=...%N``); None: no limit."""
    max_array_size: PositiveInt = 1001
    """The cluster's ``MaxArraySize`` (Slurm's default 1001): more tasks are split into several arrays, each
    indexed from 0, and the merge waits for all of them."""
    shards_per_task: PositiveInt = 1
    """Shards one array task runs one after the other (fewer, longer tasks for many small shards)."""
    requeue: bool = True
    """Tasks are ``--requeue``-able (Slurm requeues a preempted one) and, on SIGUSR1 90 s before their time
    limit, stop their shard and requeue themselves (``scontrol requeue``); a requeued task skips the shards
    it had finished."""
    setup: list[str] = Field(default_factory=list)
    """Shell lines run before each command (``module load cuda``, ``source .venv/bin/activate``)."""
    python: str | None = None
    """The interpreter of the jobs; None: the one that writes the scripts."""


class RayParams(BaseModel):
    """``executor.ray``: what each Ray task (or model replica) reserves, how long it may take, how many run
    at once and where their logs go."""

    model_config = ConfigDict(extra="forbid")

    memory: str | None = None
    """Memory each task or replica reserves (``4G``): Ray schedules no more than fit; None: no reservation."""
    time_limit_s: PositiveFloat | None = None
    """A shard still running after this many seconds is stopped and named as failed (its rerun resumes it)."""
    max_concurrency: PositiveInt | None = None
    """At most this many shards at once (the workers started); None: the cluster's CPUs."""
    logs: Path | None = None
    """Each shard's output (``<shard>.log``); None: ``<work>/logs``."""

    @field_validator("memory")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None:
            size_bytes(value)
        return value


class ExecutorParams(BaseModel):
    """Who runs a sharded stage (``extract``, ``evaluate``) and into how many shards it is split.

    ``local`` with one shard is the plain in-process run (no markers); anything else splits the work into
    shards with completion markers and merges them in id order: the outputs are the same bytes whatever
    the executor, its workers and the shard count.
    """

    model_config = ConfigDict(extra="forbid")

    name: Literal["local", "ray", "slurm"] = "local"
    shards: PositiveInt = 1
    """extract: records split by id into this many shards, at most one per record (evaluate: one shard per
    planned run)."""
    workers: PositiveInt | None = None
    """local: processes running shards at once; None: the machine's cores (at most one per shard). Each has
    its own LLM ``concurrency``; they share the answer cache (SQLite, WAL). Shards of a local model run in
    this process instead, one model for all of them."""
    address: str | None = None
    """ray: a cluster's address (``auto``, ``ray://head:10001``); None: ``RAY_ADDRESS``, else a new Ray on
    this machine bound to 127.0.0.1."""
    gpus: NonNegativeFloat = 0
    """GPUs of one model replica: ray runs a local model as one actor per ``gpus`` (0: one GPU per actor
    where the cluster has GPUs, else one CPU actor); other ray tasks ask for them; slurm asks
    ``--gpus-per-task`` (0: none)."""
    actors: PositiveInt | None = None
    """ray: model replicas (actors) for a local model; None: the cluster's GPUs / ``gpus`` (1 when ``gpus``
    is 0), at least 1."""
    work: Path | None = None
    """Shard folders, markers, logs and Slurm scripts; None: ``<out>.shards`` beside the stage's output."""
    ray: RayParams = Field(default_factory=RayParams)
    slurm: SlurmParams = Field(default_factory=SlurmParams)

    @property
    def sharded(self) -> bool:
        """Whether the work goes through shards and markers (anything but one local shard)."""
        return self.name != "local" or self.shards > 1

    def work_dir(self, out: Path) -> Path:
        """The shard folder of a stage writing ``out``."""
        return self.work or out.with_name(f"{out.name}.shards")
