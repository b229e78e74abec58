"""What the Slurm tasks of ``rwpost evaluate --executor slurm`` call (``python -m rwpost.executors``): the
job file holds the command's settings (:class:`~rwpost.evaluate.shards.EvaluateCommand` as JSON, never
credentials); each task reads the command's data again, plans its runs as the command does and evaluates
its shard (one planned run); the merge job writes the leaderboard once every run has its marker. The
evaluate stage's tasks call :mod:`rwpost.stages.evaluate` instead: the same plan, its own data.
"""

from __future__ import annotations

from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.encoders import lazy_encoder
from rwpost.evaluate.plan import evaluate_shard, run_key, shard_id
from rwpost.evaluate.shards import (
    EvaluateCommand,
    command_data,
    command_leaderboard,
    command_plan,
)
from rwpost.executors import ShardStore


def _quiet(line: str) -> None:
    """A task's notes (what the command said when it wrote the job) are not repeated in each task's log."""


def run_shard(params: dict[str, Any], shard: str) -> None:
    """Evaluate the command's planned run ``shard`` and mark it done; skipped when it is done already (a
    requeued task), unless the command asked ``--overwrite``."""
    command = EvaluateCommand.model_validate(params)
    c, data = command_data(command, _quiet)
    runs = {shard_id(planned): planned for planned in command_plan(c)}
    if shard not in runs:
        raise ConfigError(
            f"evaluate: no planned run {shard!r} (the command changed since the job was written)"
        )
    planned, store = runs[shard], ShardStore(c.executor.work_dir(c.out))
    key = run_key(planned, data)
    if store.done(shard, key) and not c.overwrite:
        return
    evaluate_shard(
        planned,
        data,
        store,
        key,
        encode=lazy_encoder() if c.key_points else None,
        progress=False,
        overwrite=c.overwrite,
        on_change="refuse",  # as the command's local run: a changed input is refused, not restarted
        where=None,
        plots=c.plots,
    )


def merge(params: dict[str, Any]) -> str:
    """The leaderboard over the command's runs once every one has its marker (else one line names those
    missing, and nothing is written); returns what it did."""
    command = EvaluateCommand.model_validate(params)
    c, data = command_data(command, _quiet)
    plan = command_plan(c)
    ShardStore(c.executor.work_dir(c.out)).require({shard_id(p): run_key(p, data) for p in plan}, "evaluate")
    said: list[str] = []
    command_leaderboard(c, plan, said.append, beside_paper=True)
    return "\n".join(said) or f"evaluate: {len(plan)} run in {plan[0].out}"
