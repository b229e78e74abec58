"""The ``executor:`` section of params.yaml: who runs a sharded stage, and how it is split."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt


class SlurmParams(BaseModel):
    """``executor.slurm``: the ``#SBATCH`` lines of the written job array and merge job."""

    model_config = ConfigDict(extra="forbid")

    partition: str | None = None
    time: str = "04:00:00"
    cpus_per_task: PositiveInt = 2
    mem: str | None = None
    """e.g. ``16G``; None: the partition's default."""
    max_parallel: PositiveInt | None = None
    """At most this many array tasks at once (``--array=...%N``); None: no limit."""
    setup: list[str] = Field(default_factory=list)
    """Shell lines run before each command (``module load cuda``, ``source .venv/bin/activate``)."""
    python: str | None = None
    """The interpreter of the jobs; None: the one that writes the scripts."""


class ExecutorParams(BaseModel):
    """Who runs a sharded stage (``extract``, ``evaluate``) and into how many shards it is split.

    ``local`` with one shard is the plain in-process run (no markers); anything else splits the work into
    shards with completion markers and merges them in id order: the outputs are the same bytes whatever
    the executor and the shard count.
    """

    model_config = ConfigDict(extra="forbid")

    name: Literal["local", "ray", "slurm"] = "local"
    shards: PositiveInt = 1
    """extract: records split by id into this many shards (evaluate: one shard per planned run)."""
    address: str | None = None
    """ray: a cluster's address (``auto``, ``ray://head:10001``); None: ``ray.init()`` on this machine."""
    gpus: NonNegativeFloat = 0
    """GPUs of one model replica: ray runs a local model as one actor per ``gpus`` (0: one GPU per actor
    where the cluster has GPUs, else one CPU actor); other ray tasks ask for them; slurm asks
    ``--gpus-per-task`` (0: none)."""
    actors: PositiveInt | None = None
    """ray: model replicas (actors) for a local model; None: the cluster's GPUs / ``gpus`` (1 when ``gpus``
    is 0), at least 1."""
    work: Path | None = None
    """Shard folders, markers and Slurm scripts; None: ``<out>.shards`` beside the stage's output folder."""
    slurm: SlurmParams = Field(default_factory=SlurmParams)

    @property
    def sharded(self) -> bool:
        """Whether the work goes through shards and markers (anything but one local shard)."""
        return self.name != "local" or self.shards > 1

    def work_dir(self, out: Path) -> Path:
        """The shard folder of a stage writing ``out``."""
        return self.work or out.with_name(f"{out.name}.shards")
