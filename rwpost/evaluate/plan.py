"""The runs of an evaluation (detectors x cells, each with its RunSpec and folder) and their execution.

One plan serves both front doors: ``rwpost evaluate`` (one data file) and the DVC ``evaluate`` stage (the
subsets of a published version), so a command and the pipeline name, place and configure their runs alike.

Each planned run is one shard of the plan (its id: the run's folder). Run by an executor other than one
local shard (:class:`rwpost.executors.ExecutorParams`), a finished run gets a completion marker keyed by
:func:`run_key`; a rerun runs only the runs without one, and the results are read back only when every run
has finished.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import ModelOptions
from rwpost.evaluate.data import EvalData
from rwpost.evaluate.identity import PREDICTIONS_FILE, shard_key
from rwpost.evaluate.log import RunMetrics, read_log
from rwpost.evaluate.registry import resolve_detector
from rwpost.evaluate.run import evaluate
from rwpost.evaluate.runner import RunSpec, untrained
from rwpost.evaluate.task import Cell, EvidenceSource, check_evidence_k, grid
from rwpost.executors import ExecutorParams, ShardJob, ShardStore, Submitted, run_job
from rwpost.io import read_json, write_json


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


def prediction_entries(
    predictions: Path,
    format: str | None,
    config: dict[str, Any],
    *,
    strict: bool = False,
    reading: dict[str, Any] | None = None,
    **each: Any,
) -> list[DetectorEntry]:
    """The entries scoring another system's output (``--predictions``): one per prediction set the file
    or folder holds (``format`` detected when None), each named by its set (never "predictions", every
    file's name); a set that fixes its cell runs in that cell only. ``reading``: the generic format's
    ``id_field``, ``label_field``, ``label_map`` and ``id_map``."""
    from rwpost.evaluate.formats import detect_format, read_sets

    options = {k: v for k, v in (reading or {}).items() if v is not None}
    if options.get("id_map") is not None:
        options["id_map"] = str(options["id_map"])
    chosen = format or detect_format(predictions, generic=bool(options.keys() - {"id_map"}))
    base = {**config, "path": str(predictions), "strict": strict}
    if chosen == "flat":
        return [DetectorEntry(name="predictions", label=predictions.stem, config=base, **each)]
    entries = []
    for found in read_sets(predictions, chosen, **options):
        own = {**base, "format": chosen, "select": found.name, **options}
        cells = [found.setting] if found.setting else None  # the files fix the cell
        entries.append(
            DetectorEntry(name="predictions", label=found.name, config=own, settings=cells, k=[], **each)
        )
    return entries


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
    secrets: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    **run_options: Any,
) -> list[PlannedRun]:
    """Every run of ``detectors`` x their cells (``cells`` and ``ks`` for an entry that names none).

    Runs are named ``<label>/<cell>`` (``<name>/<label>/<cell>`` when ``name`` is given) and written to
    ``<out>/<label>-<cell slug>``; with ``single_in_out`` a plan of one run writes into ``out`` itself,
    named ``name`` when given. ``secrets(config)`` (an edge's reader of the environment) fills connection
    options into the ``config`` of a detector whose options are typed model settings
    (:func:`wants_connection`) and returns the credentials, kept out of every record.
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
        own = secrets(config) if secrets and wants_connection(entry.name) else {}
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


def wants_connection(detector: str) -> bool:
    """Whether ``detector``'s options are typed model settings (a :class:`ModelOptions`): it then gets the
    connection (model, base URL, API key) from the edge's environment, a plug-in as a built-in. An unknown
    detector gets none (the run refuses it by name)."""
    try:
        cls = resolve_detector(detector)
    except ConfigError:
        return False
    return isinstance(cls.Config, type) and issubclass(cls.Config, ModelOptions)


def shard_id(planned: PlannedRun) -> str:
    """A planned run's shard id: its folder."""
    return planned.out.as_posix()


def run_key(planned: PlannedRun, data: EvalData) -> str:
    """A planned run's completion marker key (:func:`rwpost.evaluate.identity.shard_key`): a change to
    any input makes the run pending again (the runner then resumes or restarts it by its full identity)."""
    return shard_key(data.test, planned.spec, data.train, data.info)


def _evaluate_one(
    planned: PlannedRun,
    data: EvalData,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    on_change: str = "refuse",
    where: str | None = None,
    plots: bool = False,
) -> RunMetrics:
    try:
        return evaluate(
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


SET_ASIDE_FILE = "set_aside.json"
"""A sharded run set aside: its reason, in the shard's folder of the store (the shard's marker holds it)."""


@dataclass(frozen=True)
class SetAside:
    """A run set aside (a detector that cannot train on a split of one label): the reason. Its run is
    named in the leaderboard and the summary, and the stage finishes (issue 39 §2)."""

    reason: str


@dataclass(frozen=True)
class RunShard:
    """One planned run as a shard: the run, the data it is scored on, and its subset (the stage's: its
    refusals are named ``evaluate <subset>/<system>``; None: the command's, named by system alone)."""

    planned: PlannedRun
    data: EvalData
    subset: str | None = None

    @property
    def where(self) -> str | None:
        return f"evaluate {self.subset}" if self.subset is not None else None


@dataclass(frozen=True)
class ShardedRuns:
    """Planned runs as shards, one per run (its :func:`shard_id`), their completion markers in ``store``.

    The one implementation, for the command's runs and the stage's, of a shard's input key
    (:func:`run_key`), its skip when its marker says it is done on the current input, its run and marker,
    the executor's job, the merge's refusal while a shard is missing, and a finished shard read back. The
    local and Ray executors call :meth:`run` in their workers; a Slurm task builds the same object from its
    job file (the command's settings, or the stage's params) and runs one shard.
    """

    shards: Mapping[str, RunShard]
    store: ShardStore
    options: Mapping[str, Any] = field(default_factory=dict)
    """How each run is evaluated (``encode``, ``overwrite``, ``on_change``, ``plots``; in a worker there is
    never a progress bar). ``overwrite``: every shard runs again, done or not."""
    set_aside: Callable[[ConfigError, EvalData], SetAside | None] | None = None
    """Which refusals set a run aside (its reason written to the shard's :data:`SET_ASIDE_FILE`, which
    its marker holds) instead of failing it; None: none do."""
    _keys: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The input keys computed so far (each hashes its run's data): the job's, its merge's and, in a
    forked or sent worker, its shard's are one computation."""

    @classmethod
    def of(cls, plan: Sequence[PlannedRun], data: EvalData, store: ShardStore, **fields: Any) -> ShardedRuns:
        """The runs of one plan on one data (the command's)."""
        return cls({shard_id(p): RunShard(p, data) for p in plan}, store, **fields)

    @property
    def plan(self) -> list[PlannedRun]:
        return [one.planned for one in self.shards.values()]

    def key(self, shard: str) -> str:
        """The input key of run ``shard`` (:func:`run_key`), computed once."""
        if shard not in self._keys:
            one = self.pick(shard)
            self._keys[shard] = run_key(one.planned, one.data)
        return self._keys[shard]

    def keys(self) -> dict[str, str]:
        """Every shard's input key."""
        return {shard: self.key(shard) for shard in self.shards}

    def pick(self, shard: str) -> RunShard:
        """The planned run ``shard``; refused in one line when the plan has none (a job written before
        its command or params changed)."""
        if shard not in self.shards:
            raise ConfigError(
                f"evaluate: no planned run {shard!r} (the command or params changed since the job was "
                "written)"
            )
        return self.shards[shard]

    def run(self, shard: str, progress: Any = None) -> None:
        """Evaluate the run ``shard`` and mark it done (``metrics.json`` hashed); skipped when it is done on
        the current input (a requeued or resent task), unless ``overwrite``. A refusal :attr:`set_aside`
        names is marked done with its reason instead."""
        one, key = self.pick(shard), self.key(shard)
        if self.store.done(shard, key) and not self.options.get("overwrite"):
            return
        self.store.clear(shard)
        aside = self.store.folder(shard) / SET_ASIDE_FILE
        aside.unlink(missing_ok=True)  # an earlier try's reason never outlives a new one
        try:
            _evaluate_one(one.planned, one.data, where=one.where, **{**self.options, "progress": False})
        except ConfigError as exc:
            reason = self.set_aside(exc, one.data) if self.set_aside is not None else None
            if reason is None:
                raise
            write_json(aside, {"shard": shard, "reason": reason.reason})
            self.store.finish(shard, key, [aside])
            return
        self.store.finish(shard, key, [one.planned.out / "metrics.json"])

    def job(
        self, name: str, *, gpus: float = 0, job: tuple[str, Mapping[str, Any]] | None = None
    ) -> ShardJob:
        """The executor's job: the shards not done (every one with ``overwrite``), each run by :meth:`run`;
        the runs of a local model go to model replicas that each hold it (one per GPU on Ray). ``job``: the
        module whose ``run_shard(params, shard)`` and ``merge(params)`` a scheduler's tasks call, and those
        params."""
        keys = self.keys()
        pending = list(keys) if self.options.get("overwrite") else self.store.pending(keys)
        self.check(pending)
        return ShardJob(
            name=name,
            keys=keys,
            pending=pending,
            run=self.run,
            root=self.store.root,
            models=frozenset(
                shard for shard, one in self.shards.items() if uses_local_model(one.planned.spec)
            ),
            gpus=gpus,
            module=job[0] if job is not None else None,
            params=job[1] if job is not None else None,
        )

    def check(self, shards: Sequence[str]) -> None:
        """Refuse, before any of ``shards`` starts or anything is written, what would fail a whole run (as
        an unsharded run refuses it before it writes): its detector unknown, an option its ``Config``
        refuses, or, where no rule sets such runs aside, a detector that learns given no training samples
        (and no answers on disk). Each shard's runner checks these again, with the rest."""
        for shard in shards:
            one = self.pick(shard)
            spec = one.planned.spec
            detector = resolve_detector(spec.detector)
            detector.checked_config(spec.config)
            learns = detector.capabilities.needs_training and not one.data.train
            if learns and self.set_aside is None and not (one.planned.out / PREDICTIONS_FILE).exists():
                raise untrained(spec)

    def require(self, what: str) -> None:
        """Refuse to merge while a shard has no valid marker: one line naming them."""
        self.store.require(self.keys(), what)

    def finished(self, shard: str) -> RunMetrics | SetAside:
        """A finished shard's metrics, or the reason it was set aside."""
        aside = self.store.folder(shard) / SET_ASIDE_FILE
        if aside.exists():
            return SetAside(str(read_json(aside)["reason"]))
        return read_log(self.pick(shard).planned.out / "metrics.json", RunMetrics)


def uses_local_model(spec: RunSpec) -> bool:
    """Whether a run's detector runs a local model (its typed model settings say so: ``backend=local``,
    or a detector whose default it is, ``local-vlm``): run by Ray as one actor per GPU holding the model,
    taking run after run."""
    try:
        config = resolve_detector(spec.detector).Config
    except ConfigError:  # refused when the run builds it
        return False
    try:
        options = config.model_validate(dict(spec.config))
    except ValidationError:  # refused when the run builds it; their type still says where the model runs
        options = config.model_construct(**spec.config)
    return isinstance(options, ModelOptions) and options.local


def run_plan(
    plan: Sequence[PlannedRun],
    data: EvalData,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    on_change: str = "refuse",
    where: str | None = None,
    done: Callable[[PlannedRun, RunMetrics], None] | None = None,
    executor: ExecutorParams | None = None,
    store: ShardStore | None = None,
    plots: bool = False,
    job: tuple[str, Mapping[str, Any]] | None = None,
) -> list[tuple[PlannedRun, RunMetrics]] | Submitted:
    """Evaluate every planned run on ``data``, in order, each run's typed ``metrics.json``
    (:class:`~rwpost.evaluate.log.RunMetrics`); ``done(run, metrics)`` after each. With
    ``where`` (``evaluate main``), a refusal names it and the run (``evaluate main/majority/T: ...``);
    ``plots`` draws each run's figures.

    With an ``executor`` other than one local shard, each run is a shard with a completion marker in
    ``store``: the runs without one are run by the executor (:class:`rwpost.executors.Executor`), and the
    results are read back from the runs' ``metrics.json`` once every run has its marker (else one line
    names those missing). ``job``: the module whose ``run_shard(params, shard)`` and ``merge(params)`` a
    scheduler's tasks call, and those params; a scheduler's executor (Slurm) returns the job it wrote
    (:class:`~rwpost.executors.Submitted`), and nothing has run yet."""
    for planned in plan:  # a k beyond every sample's evidence is refused before any run writes
        try:
            check_evidence_k(planned.spec.setting, data.test)
        except ConfigError as exc:
            if where is None:
                raise
            raise ConfigError(f"{where}/{planned.spec.system}: {exc}") from exc
    options = dict(
        encode=encode, progress=progress, overwrite=overwrite, on_change=on_change, where=where, plots=plots
    )
    results = []
    if executor is None or not executor.sharded:
        for planned in plan:
            metrics = _evaluate_one(planned, data, **options)
            results.append((planned, metrics))
            if done is not None:
                done(planned, metrics)
        return results
    if store is None:
        raise ConfigError("a sharded evaluation needs a shard store for its completion markers")
    runs = ShardedRuns.of(
        plan, data, store, options=dict(encode=encode, overwrite=overwrite, on_change=on_change, plots=plots)
    )
    submitted = run_job(executor, runs.job(where or "evaluate", gpus=executor.gpus, job=job))
    if submitted is not None:
        return submitted
    runs.require(where or "evaluate")
    for planned in plan:
        metrics = read_log(planned.out / "metrics.json", RunMetrics)
        results.append((planned, metrics))
        if done is not None:
            done(planned, metrics)
    return results


__all__ = [
    "DetectorEntry",
    "PlannedRun",
    "RunShard",
    "SET_ASIDE_FILE",
    "SetAside",
    "ShardedRuns",
    "folder_name",
    "plan_runs",
    "prediction_entries",
    "run_key",
    "run_plan",
    "shard_id",
]
