"""The Slurm executor: a job-array script (one array task per shard, every task the same command) and a
merge job that runs after the array succeeds, as plain ``sbatch`` files (no Slurm library needed here).

Each task runs ``python -m rwpost.executors shard <job.json> $SLURM_ARRAY_TASK_ID``: the job file names the
stage module and its params (never credentials: the tasks read those from their environment, as a local
run does), and the module's ``run_shard(params, shard)`` does one shard, ``merge(params)`` the merge.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rwpost.executors.params import ExecutorParams
from rwpost.io import write_json, write_text

JOB_FILE = "job.json"
ARRAY_SCRIPT = "array.sbatch"
MERGE_SCRIPT = "merge.sbatch"
SUBMIT_SCRIPT = "submit.sh"


class SlurmJob(NamedTuple):
    """A written job: its ``submit.sh``, its shards and how many of them are still to run."""

    submit: Path
    shards: int
    pending: int


def _header(executor: ExecutorParams, name: str, logs: Path, *, array: str | None) -> list[str]:
    slurm = executor.slurm
    lines = ["#!/bin/bash", f"#SBATCH --job-name=rwpost-{name}"]
    if array is not None:
        limit = f"%{slurm.max_parallel}" if slurm.max_parallel else ""
        lines.append(f"#SBATCH --array={array}{limit}")
        lines.append(f"#SBATCH --output={logs}/%x-%A_%a.out")
        if executor.gpus:
            lines.append(f"#SBATCH --gpus-per-task={int(max(1, executor.gpus))}")
    else:
        lines.append(f"#SBATCH --output={logs}/%x-%j.out")
    lines.append(f"#SBATCH --cpus-per-task={slurm.cpus_per_task}")
    lines.append(f"#SBATCH --time={slurm.time}")
    if slurm.partition:
        lines.append(f"#SBATCH --partition={slurm.partition}")
    if slurm.mem:
        lines.append(f"#SBATCH --mem={slurm.mem}")
    return lines


def write_slurm(
    executor: ExecutorParams,
    *,
    name: str,
    module: str,
    params: dict[str, Any],
    shards: Sequence[str],
    pending: Sequence[str],
    folder: Path,
    cwd: Path | None = None,
) -> Path:
    """Write ``job.json``, ``array.sbatch`` (the ``pending`` shards, by their index in ``shards``),
    ``merge.sbatch`` and ``submit.sh`` under ``folder``; returns ``submit.sh`` (run it on the login node)."""
    folder = folder.resolve()
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    job = folder / JOB_FILE
    write_json(job, {"module": module, "name": name, "params": params, "shards": list(shards)})
    python = shlex.quote(executor.slurm.python or sys.executable)
    body = ["set -euo pipefail", f"cd {shlex.quote(str((cwd or Path.cwd()).resolve()))}"]
    body += executor.slurm.setup
    indices = ",".join(str(list(shards).index(s)) for s in pending)
    run = f'exec {python} -m rwpost.executors shard {shlex.quote(str(job))} "$SLURM_ARRAY_TASK_ID"'
    merge = f"exec {python} -m rwpost.executors merge {shlex.quote(str(job))}"
    write_text(
        folder / MERGE_SCRIPT, "\n".join([*_header(executor, name, logs, array=None), *body, merge]) + "\n"
    )
    submit = ["#!/bin/bash", "set -euo pipefail", f"cd {shlex.quote(str(folder))}"]
    if pending:
        array = _header(executor, name, logs, array=indices)
        write_text(folder / ARRAY_SCRIPT, "\n".join([*array, *body, run]) + "\n")
        submit += [
            f"array=$(sbatch --parsable {ARRAY_SCRIPT})",
            f'sbatch --dependency=afterok:"${{array%%;*}}" {MERGE_SCRIPT}',
        ]
    else:
        (folder / ARRAY_SCRIPT).unlink(missing_ok=True)
        submit.append(f"sbatch {MERGE_SCRIPT}")
    path = folder / SUBMIT_SCRIPT
    write_text(path, "\n".join(submit) + "\n")
    path.chmod(0o755)
    return path
