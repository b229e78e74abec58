"""The Slurm executor: job arrays (each task runs ``shards_per_task`` pending shards, every task the same
command) and a merge job that runs after every array succeeds, as plain ``sbatch`` files and a
``submit.sh`` (no Slurm library needed here; nothing is submitted for you).

- More tasks than ``max_array_size`` (Slurm's ``MaxArraySize``, 1001 by default) are split into several
  arrays (``array-000.sbatch``, ...), each indexed from 0 with its offset in the script; the merge job
  waits for all of them (``--dependency=afterok:A:B``).
- With ``requeue`` (default) a task is ``--requeue``-able (Slurm requeues it when preempted) and asks
  for SIGUSR1 90 s before its time runs out (``--signal=B:USR1@90``): on it the task stops its shard and
  requeues itself (``scontrol requeue``). A requeued task skips the shards it had finished (their markers).

Each task runs ``python -m rwpost.executors shard <job.json> <task>``: the job file names the stage module,
its params (never credentials: the tasks read those from their environment, as a local run does) and the
shards of each task; the module's ``run_shard(params, shard)`` does one shard, ``merge(params)`` the merge.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.executors.base import ShardJob, Submitted
from rwpost.executors.params import ExecutorParams
from rwpost.io import write_json, write_text

JOB_FILE = "job.json"
ARRAY_SCRIPT = "array-{:03d}.sbatch"
MERGE_SCRIPT = "merge.sbatch"
SUBMIT_SCRIPT = "submit.sh"
PREEMPT_SIGNAL = "USR1@90"

NO_SBATCH = (
    'command -v sbatch >/dev/null || {{ echo "{submit}: sbatch not found: run this on a Slurm login node. '
    'Without Slurm: run each task with SLURM_ARRAY_TASK_ID=i bash array-NNN.sbatch, then bash merge.sbatch" '
    ">&2; exit 127; }}"
)

SlurmJob = Submitted
"""The written job (its ``submit.sh``): the name the stages knew it by."""


def task_groups(pending: Sequence[str], per_task: int) -> list[list[str]]:
    """The pending shards, ``per_task`` to an array task, in order."""
    return [list(pending[i : i + per_task]) for i in range(0, len(pending), per_task)]


def array_spans(tasks: int, max_array_size: int) -> list[tuple[int, int]]:
    """``(offset, size)`` of each array: at most ``max_array_size`` tasks each, indexed from 0."""
    return [(start, min(max_array_size, tasks - start)) for start in range(0, tasks, max_array_size)]


def _header(executor: ExecutorParams, name: str, logs: Path, *, size: int | None) -> list[str]:
    slurm = executor.slurm
    lines = ["#!/bin/bash", f"#SBATCH --job-name=rwpost-{name}"]
    if size is not None:
        limit = f"%{slurm.max_parallel}" if slurm.max_parallel else ""
        lines.append(f"#SBATCH --array={'0' if size == 1 else f'0-{size - 1}'}{limit}")
        lines.append(f"#SBATCH --output={logs}/%x-%A_%a.out")
        if executor.gpus:
            lines.append(f"#SBATCH --gpus-per-task={int(max(1, executor.gpus))}")
        if slurm.requeue:
            lines += ["#SBATCH --requeue", f"#SBATCH --signal=B:{PREEMPT_SIGNAL}"]
    else:
        lines.append(f"#SBATCH --output={logs}/%x-%j.out")
    lines.append(f"#SBATCH --cpus-per-task={slurm.cpus_per_task}")
    lines.append(f"#SBATCH --time={slurm.time}")
    if slurm.partition:
        lines.append(f"#SBATCH --partition={slurm.partition}")
    if slurm.mem:
        lines.append(f"#SBATCH --mem={slurm.mem}")
    return lines


TRAP = [
    "preempted=0",
    "child=",
    "on_preempt() {",
    "  preempted=1",
    '  echo "rwpost: preempted: stopping task $SLURM_ARRAY_TASK_ID and requeueing it" >&2',
    '  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; fi',
    "}",
    "trap on_preempt USR1",
]
"""A requeueing task's first lines: SIGUSR1 (``--signal``) stops the shard and marks the task (SIGTERM is
left alone: ``scancel`` sends it, and Slurm requeues a preempted ``--requeue`` job itself)."""

REQUEUE = 'exec scontrol requeue "${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}_${SLURM_ARRAY_TASK_ID}"'


def _task_run(run: str, requeue: bool) -> list[str]:
    """The array task's command; with ``requeue`` run in the background, so the preemption trap can stop
    it (SIGTERM: the shard's writes stay resumable), then this task requeued instead of exiting."""
    if not requeue:
        return [f"exec {run}"]
    return [
        f'if [ "$preempted" = 0 ]; then {run} & child=$!; fi',
        'status=0; if [ -n "$child" ]; then wait "$child" || status=$?; fi',
        'while [ -n "$child" ] && kill -0 "$child" 2>/dev/null; do wait "$child" || true; done',
        f'if [ "$preempted" = 1 ]; then {REQUEUE}; fi',
        'exit "$status"',
    ]


def write_slurm(
    executor: ExecutorParams,
    *,
    name: str,
    module: str,
    params: Any,
    shards: Sequence[str],
    pending: Sequence[str],
    folder: Path,
    cwd: Path | None = None,
) -> Submitted:
    """Write ``job.json``, the ``array-NNN.sbatch`` scripts (the ``pending`` shards), ``merge.sbatch`` and
    ``submit.sh`` under ``folder`` (scripts of an earlier write are replaced); returns the job."""
    folder = folder.resolve()
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    slurm = executor.slurm
    tasks = task_groups(pending, slurm.shards_per_task)
    job = folder / JOB_FILE
    write_json(
        job, {"module": module, "name": name, "params": params, "shards": list(shards), "tasks": tasks}
    )
    python = shlex.quote(slurm.python or sys.executable)
    body = [f"cd {shlex.quote(str((cwd or Path.cwd()).resolve()))}", *slurm.setup]
    merge = f"{python} -m rwpost.executors merge {shlex.quote(str(job))}"
    merge_lines = [*_header(executor, name, logs, size=None), "set -euo pipefail", *body, f"exec {merge}"]
    write_text(folder / MERGE_SCRIPT, "\n".join(merge_lines) + "\n")
    for old in folder.glob("array*.sbatch"):
        old.unlink()
    submit_path = folder / SUBMIT_SCRIPT
    submit = [
        "#!/bin/bash",
        "set -euo pipefail",
        NO_SBATCH.format(submit=submit_path),
        f"cd {shlex.quote(str(folder))}",
    ]
    arrays = []
    for number, (offset, size) in enumerate(array_spans(len(tasks), slurm.max_array_size)):
        script = ARRAY_SCRIPT.format(number)
        task = f'"$(( SLURM_ARRAY_TASK_ID + {offset} ))"'
        run = f"{python} -m rwpost.executors shard {shlex.quote(str(job))} {task}"
        trap = TRAP if slurm.requeue else []
        lines = [*_header(executor, name, logs, size=size), "set -euo pipefail", *trap, *body]
        lines += _task_run(run, slurm.requeue)
        write_text(folder / script, "\n".join(lines) + "\n")
        submit.append(f"array{number}=$(sbatch --parsable {script})")
        arrays.append(f"${{array{number}%%;*}}")
    if arrays:
        submit.append(f'sbatch --dependency=afterok:"{":".join(arrays)}" {MERGE_SCRIPT}')
    else:
        submit.append(f"sbatch {MERGE_SCRIPT}")
    write_text(submit_path, "\n".join(submit) + "\n")
    submit_path.chmod(0o755)
    return Submitted(submit_path, len(shards), len(pending), merge=merge)


class SlurmExecutor:
    """Writes the job's Slurm scripts instead of running it (``bash submit.sh`` on a login node)."""

    def __init__(self, params: ExecutorParams) -> None:
        self.params = params

    def run(self, job: ShardJob) -> Submitted:
        if job.module is None or job.params is None:
            raise ConfigError(
                f"{job.name}: executor slurm writes job arrays for a pipeline stage (python -m "
                "pipelines.<stage> with executor.name: slurm in params.yaml); here give local or ray"
            )
        return write_slurm(
            self.params,
            name=job.name,
            module=job.module,
            params=dict(job.params),
            shards=list(job.keys),
            pending=list(job.pending),
            folder=job.root / "slurm",
        )
