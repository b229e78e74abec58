"""Stage ``evaluate``: score the configured detectors on a published version's splits, over the input grid.

For each subset every detector is trained on ``train_split`` (dev) and scored on ``test_split`` (test), in
each cell of the grid (``settings`` x ``k``: T, T+I, T+E, T+I+E, T+I+W and the evidence-k ablation; the
names closed-book / gold-evidence / open-web are read as T+I / T+I+E / T+I+W); the runs are planned by
:func:`rwpost.evaluate.plan.plan_runs`, as ``rwpost evaluate`` plans its own; each run writes
``<out>/<subset>/<detector>-<cell slug>/``
(metrics.json, report.md, predictions; the PNG figures only with ``plots: true``), and the stage writes
one ``<out>/leaderboard/`` over every cell and the ``summary`` file (headline scores per run, the DVC
metrics file).

With the optional ``executor:`` section each run is a shard with a completion marker (under
``<out>.shards``), run locally, as Ray tasks (``gpus`` each, for local models) or as a Slurm job array;
:func:`merge` writes the leaderboard and summary only when every run has finished. The settings and their
(sharded) run are :mod:`rwpost.evaluate.shards`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rwpost.evaluate import shards
from rwpost.evaluate.shards import EvaluateSettings, Result
from rwpost.executors import Submitted
from rwpost.stages.base import DatasetParams, StageParams, StageReport


class Params(StageParams, EvaluateSettings):
    """The ``evaluate:`` section of params.yaml (:class:`rwpost.evaluate.shards.EvaluateSettings`), with the
    ``dataset:`` section naming the version."""

    section = "evaluate"
    shared = ("dataset", "executor")
    reads = ("blocked_domains", "image_root")
    writes = ("out", "summary")
    file_kinds = {"summary": "summary"}

    dataset: DatasetParams

    def paths_read(self) -> dict[str, Path]:
        return {**super().paths_read(), "dataset.version": self.dataset.version_dir}


def run(params: Params) -> StageReport:
    return _report(params, shards.evaluate_all(params, params.dataset, module=__name__))


def _report(params: Params, results: list[Result] | Submitted) -> StageReport:
    """The Slurm job to submit, or the leaderboard over every run and the summary file."""
    if isinstance(results, Submitted):
        return StageReport.of_job("evaluate", results, unit="runs")
    summary = shards.publish(params, results)
    aside = [
        f"{subset}/{planned.spec.system}: {metrics.reason}"
        for subset, planned, metrics in results
        if isinstance(metrics, shards.SetAside)
    ]
    note = f" ({len(aside)} set aside: {'; '.join(aside)})" if aside else ""
    return StageReport(
        stage="evaluate",
        counts=summary,
        message=f"evaluate: {len(results) - len(aside)} runs{note} -> {params.out}",
    )


# --- what a Slurm array's tasks and its merge job call (``python -m rwpost.executors``) ----------------


def run_shard(params: dict[str, Any], shard: str) -> None:
    """Evaluate one planned run of the job's params (:func:`rwpost.evaluate.shards.run_shard`)."""
    p = Params.model_validate(params)
    shards.run_shard(p, p.dataset, shard)


def merge(params: Params | dict[str, Any]) -> StageReport:
    """The leaderboard and summary once every planned run has its marker (else one line names those
    missing, and nothing is written)."""
    p = params if isinstance(params, Params) else Params.model_validate(params)
    return _report(p, shards.merge(p, p.dataset))
