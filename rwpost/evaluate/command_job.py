"""What the Slurm tasks of ``rwpost evaluate --executor slurm`` call (``python -m rwpost.executors``): the
job file holds the command's settings (:class:`~rwpost.evaluate.shards.EvaluateCommand` as JSON, never
credentials); each task reads the command's data again, plans its runs as the command does and evaluates
its shard (one planned run); the merge job writes the leaderboard once every run has its marker. The
evaluate stage's tasks call :mod:`rwpost.stages.evaluate` instead: the same plan, its own data.
"""

from __future__ import annotations

from typing import Any

from rwpost.evaluate.shards import EvaluateCommand, command_leaderboard, command_runs


def _quiet(line: str) -> None:
    """A task's notes (what the command said when it wrote the job) are not repeated in each task's log."""


def run_shard(params: dict[str, Any], shard: str) -> None:
    """Evaluate the command's planned run ``shard`` and mark it done; skipped when it is done already (a
    requeued task), unless the command asked ``--overwrite``."""
    command_runs(EvaluateCommand.model_validate(params), _quiet).run(shard)


def merge(params: dict[str, Any]) -> str:
    """The leaderboard over the command's runs once every one has its marker (else one line names those
    missing, and nothing is written); returns what it did."""
    command = EvaluateCommand.model_validate(params)
    runs = command_runs(command, _quiet)
    runs.require("evaluate")
    said: list[str] = []
    command_leaderboard(command, runs.plan, said.append, beside_paper=True)
    return "\n".join(said) or f"evaluate: {len(runs.plan)} run in {runs.plan[0].out}"
