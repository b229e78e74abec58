"""The runs of an evaluation (detectors x cells, each with its RunSpec and folder) and their execution.

One plan serves both front doors: ``rwpost evaluate`` (one data file) and the DVC ``evaluate`` stage (the
subsets of a published version), so a command and the pipeline name, place and configure their runs alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from rwpost.evaluate.data import EvalData
from rwpost.evaluate.run import evaluate
from rwpost.evaluate.runner import RunSpec
from rwpost.evaluate.task import Cell, EvidenceSource, grid


class DetectorEntry(BaseModel):
    """One detector of a plan: a registered detector, its options, and where it runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    label: str | None = None
    """The runs' name and folder (None: ``name``); two entries of one detector (two models) need two."""
    settings: list[str] | None = None
    """Input cells (T, T+I, T+E, T+I+E, T+I+W; closed-book, gold-evidence, open-web are read as T+I,
    T+I+E, T+I+W); None: the plan's."""
    k: list[int] | None = None
    """Evidence-k ablation for this detector; None: the plan's (where this entry has a gold cell)."""
    subsets: list[str] | None = None
    """None: every subset."""
    config: dict[str, Any] = Field(default_factory=dict)
    repeats: PositiveInt = 1
    batch_size: PositiveInt = 16


@dataclass(frozen=True)
class PlannedRun:
    """One run of a plan: what to run and the folder it writes."""

    spec: RunSpec
    out: Path
    label: str
    """The detector entry's label (the run's name before its cell)."""


def folder_name(text: str) -> str:
    """A folder name for a detector label or a prediction set (``module:Class``, ``model/TE_k3``)."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in text)


def _ks(entry: DetectorEntry, ks: Sequence[int]) -> Sequence[int]:
    """The entry's evidence-k ablation: its own, else the plan's unless its own cells have no gold one."""
    if entry.k is not None:
        return entry.k
    if entry.settings is not None:
        cells = [Cell.parse(x) for x in entry.settings]
        return ks if any(c.evidence is EvidenceSource.GOLD for c in cells) else ()
    return ks


def plan_runs(
    detectors: Sequence[DetectorEntry],
    cells: Sequence[str],
    ks: Sequence[int] = (),
    *,
    out: Path,
    subset: str | None = None,
    name: str | None = None,
    single_in_out: bool = False,
    secrets: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
    **run_options: Any,
) -> list[PlannedRun]:
    """Every run of ``detectors`` x their cells (``cells`` and ``ks`` for an entry that names none).

    Runs are named ``<label>/<cell>`` (``<name>/<label>/<cell>`` when ``name`` is given) and written to
    ``<out>/<label>-<cell slug>``; with ``single_in_out`` a plan of one run writes into ``out`` itself,
    named ``name`` when given. ``secrets(detector, config)`` (an edge's reader of the environment) fills
    connection options into ``config`` and returns the credentials, kept out of every record.
    ``run_options`` are the :class:`RunSpec` fields every run shares (seed, failures, blocklist...).
    """
    chosen: dict[tuple[str, str, str, str], tuple[DetectorEntry, Cell]] = {}
    for entry in detectors:
        if subset is not None and entry.subsets is not None and subset not in entry.subsets:
            continue
        for cell in grid(entry.settings or cells, _ks(entry, ks)):
            key = (entry.label or entry.name, entry.name, json.dumps(entry.config, sort_keys=True), cell.name)
            chosen.setdefault(key, (entry, cell))
    single = single_in_out and len(chosen) == 1
    planned = []
    for entry, cell in chosen.values():
        label = entry.label or entry.name
        config = dict(entry.config)
        own = secrets(entry.name, config) if secrets else {}
        if single:
            system, folder = name or f"{label}/{cell}", out
        else:
            system = f"{name}/{label}/{cell}" if name else f"{label}/{cell}"
            folder = out / f"{folder_name(label)}-{cell.slug}"
        spec = RunSpec(
            detector=entry.name,
            config=config,
            setting=cell,
            repeats=entry.repeats,
            batch_size=entry.batch_size,
            name=system,
            secrets=own,
            **run_options,
        )
        planned.append(PlannedRun(spec, folder, label))
    return planned


def run_plan(
    plan: Sequence[PlannedRun],
    data: EvalData,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    on_change: str = "refuse",
    where: str | None = None,
    done: Callable[[PlannedRun, dict[str, Any]], None] | None = None,
    plots: bool = False,
) -> list[tuple[PlannedRun, dict[str, Any]]]:
    """Evaluate every planned run on ``data``, in order; ``done(run, metrics)`` after each. With
    ``where`` (``evaluate main``), a refusal names it and the run (``evaluate main/majority/T: ...``);
    ``plots`` draws each run's figures."""
    from rwpost.errors import ConfigError

    results = []
    for planned in plan:
        try:
            metrics = evaluate(
                data.test,
                planned.spec,
                planned.out,
                train=data.train,
                data_info=data.info,
                encode=encode,
                progress=progress,
                overwrite=overwrite,
                on_change=on_change,
                plots=plots,
            )
        except ConfigError as exc:
            if where is None:
                raise
            raise ConfigError(f"{where}/{planned.spec.system}: {exc}") from exc
        results.append((planned, metrics))
        if done is not None:
            done(planned, metrics)
    return results


__all__ = ["DetectorEntry", "PlannedRun", "folder_name", "plan_runs", "run_plan"]
