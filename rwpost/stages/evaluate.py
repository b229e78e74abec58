"""Stage ``evaluate``: score the configured detectors on a published version's splits, over the input grid.

For each subset every detector is trained on ``train_split`` (dev) and scored on ``test_split`` (test), in
each cell of the grid (``settings`` x ``k``: T, T+I, T+E, T+I+E, T+I+W and the evidence-k ablation; the
names closed-book / gold-evidence / open-web are read as T+I / T+I+E / T+I+W); the runs are planned by
:func:`rwpost.evaluate.plan.plan_runs`, as ``rwpost evaluate`` plans its own; each run writes
``<out>/<subset>/<detector>-<cell slug>/``
(metrics.json, report.md, plots, predictions), and the stage writes one ``<out>/leaderboard/`` over every
cell and the ``summary`` file (headline scores per run, the DVC metrics file).

With the optional ``executor:`` section each run is a shard with a completion marker (under
``<out>.shards``), run locally, as Ray tasks (``gpus`` each, for local models) or as a Slurm job array;
:func:`merge` writes the leaderboard and summary only when every run has finished.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, NonNegativeInt, model_validator

from rwpost.dataset import split_file
from rwpost.errors import ConfigError
from rwpost.evaluate.data import EvalData, load_eval_data
from rwpost.evaluate.encoders import lazy_encoder
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.plan import (
    DetectorEntry,
    PlannedRun,
    evaluate_shard,
    plan_runs,
    run_key,
    run_plan,
    shard_id,
)
from rwpost.evaluate.task import EVIDENCE_SEED
from rwpost.executors import ExecutorParams, ShardStore, write_slurm
from rwpost.io import read_json, write_json
from rwpost.llm.config import detector_secrets_from_env
from rwpost.llm.types import PriceTable
from rwpost.stages.base import DatasetParams, StageParams, StageReport


class DetectorParams(DetectorEntry):
    """One entry of ``evaluate.detectors``: a registered detector, its settings and subsets."""

    label: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    """The runs' name and folder (None: ``name``); two entries of one detector (two models) need two."""


class Params(StageParams):
    """The ``evaluate:`` section of params.yaml, with the ``dataset:`` section naming the version."""

    section = "evaluate"
    shared = ("dataset", "executor")
    reads = ("blocked_domains", "image_root")
    writes = ("out", "summary")

    out: Path = Path("reports/evaluate")
    summary: Path | None = None
    """None: ``<out>-summary.json``."""
    subsets: list[str] = Field(default_factory=lambda: ["main"], min_length=1)
    train_split: str = "dev"
    test_split: str = "test"
    seed: int = 0
    bootstrap: NonNegativeInt = 1000
    """Resamples for the 95% confidence intervals."""
    key_points: bool = True
    """Key-point coverage of explanations (embedding similarity)."""
    blocked_domains: Path | None = None
    """More blocked domains, on top of the built-in fact-checkers and the packaged released list."""
    settings: list[str] = Field(default_factory=lambda: ["T+I"])
    """The grid's input cells for every detector that names none."""
    k: list[int] = Field(default_factory=list)
    """Evidence-k ablation: k gold items per claim in each evidence cell."""
    evidence_seed: int = EVIDENCE_SEED
    allow_missing_images: bool = False
    image_root: Path | None = None
    """Where relative image paths are found (Parquet splits hold the image bytes: None)."""
    failures: Literal["wrong", "exclude", "class"] = "wrong"
    """How failed answers are scored (named in every table): all samples, answered only, or a class."""
    detectors: list[DetectorParams] = Field(default_factory=list)
    prices: PriceTable | None = None
    dataset: DatasetParams
    executor: ExecutorParams = Field(default_factory=ExecutorParams)

    def paths_read(self) -> dict[str, Path]:
        return {**super().paths_read(), "dataset.version": self.dataset.version_dir}

    @model_validator(mode="after")
    def _one_entry_per_run_folder(self) -> Self:
        labels = [entry.label or entry.name for entry in self.detectors]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:  # the second would write its runs over the first's folders
            raise ValueError(
                f"detectors: {', '.join(repeated)} named more than once; give each entry its own label"
            )
        return self

    @model_validator(mode="after")
    def _scored_on_unseen_split(self) -> Self:
        if self.train_split == self.test_split:  # a trained detector would be scored on its training data
            raise ValueError(f"train_split and test_split are both {self.test_split!r}")
        return self


def _data(params: Params, subset: str) -> EvalData:
    version_dir = params.dataset.version_dir
    return load_eval_data(
        split_file(version_dir, subset, params.test_split),
        train=split_file(version_dir, subset, params.train_split),
        about={"version": params.dataset.version, "subset": subset, "split": params.test_split},
    )


def _plan(params: Params, subset: str, blocklist: BlockList) -> list[PlannedRun]:
    return plan_runs(
        params.detectors,
        params.settings,
        params.k,
        out=params.out / subset,
        subset=subset,
        secrets=detector_secrets_from_env,
        seed=params.seed,
        n_resamples=params.bootstrap,
        prices=params.prices or None,
        blocklist=blocklist,
        allow_missing_images=params.allow_missing_images,
        failures=params.failures,
        evidence_seed=params.evidence_seed,
        image_root=params.image_root,
    )


def _options(params: Params) -> dict[str, Any]:
    return {"encode": lazy_encoder() if params.key_points else None, "on_change": "restart"}


def _store(params: Params) -> ShardStore:
    return ShardStore(params.executor.work_dir(params.out))


def run(params: Params) -> StageReport:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    blocklist = BlockList.from_file(params.blocked_domains)
    if params.executor.name == "slurm":
        return _write_slurm(params, blocklist)
    results: list[tuple[str, PlannedRun, dict[str, Any]]] = []
    options = _options(params)  # one key-point encoder for every subset
    for subset in params.subsets:
        for planned, metrics in run_plan(
            _plan(params, subset, blocklist),
            _data(params, subset),
            where=f"evaluate {subset}",
            executor=params.executor,
            store=_store(params),
            **options,
        ):
            results.append((subset, planned, metrics))
    return _publish(params, results)


def _publish(params: Params, results: list[tuple[str, PlannedRun, dict[str, Any]]]) -> StageReport:
    """The leaderboard over every run and the summary file (headline scores per run)."""
    summary: dict[str, dict[str, Any]] = {}
    for subset, planned, metrics in results:
        system = planned.spec.system
        summary.setdefault(subset, {})[system] = {
            k: metrics.get(k) for k in ("accuracy", "macro_f1", "weighted_f1")
        }
        run_name = f"{planned.spec.detector}/{planned.spec.setting}"
        print(f"evaluate: {subset} {run_name}: macro F1 {metrics.get('macro_f1')}")
    if results:
        write_leaderboard([planned.out for _, planned, _ in results], params.out / "leaderboard")
    write_json(params.summary or Path(f"{params.out}-summary.json"), summary)
    return StageReport(
        stage="evaluate",
        counts=summary,
        message=f"evaluate: {len(results)} runs -> {params.out}",
    )


# --- shards (one per planned run): what the Slurm array's tasks and its merge job call -------------------


def _params(params: Params | dict[str, Any]) -> Params:
    return params if isinstance(params, Params) else Params.model_validate(params)


def _runs(params: Params) -> dict[str, tuple[str, PlannedRun]]:
    blocklist = BlockList.from_file(params.blocked_domains)
    return {
        shard_id(planned): (subset, planned)
        for subset in params.subsets
        for planned in _plan(params, subset, blocklist)
    }


def run_shard(params: Params | dict[str, Any], shard: str) -> None:
    """Evaluate the planned run ``shard`` (its folder) and mark it done; skipped when already done."""
    params = _params(params)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    runs = _runs(params)
    if shard not in runs:
        raise ConfigError(
            f"evaluate: no planned run {shard!r} (the params changed since the job was written)"
        )
    subset, planned = runs[shard]
    data, store = _data(params, subset), _store(params)
    key = run_key(planned, data)
    if not store.done(shard, key):
        evaluate_shard(
            planned,
            data,
            store,
            key,
            progress=False,
            overwrite=False,
            where=f"evaluate {subset}",
            **_options(params),
        )


def merge(params: Params | dict[str, Any]) -> StageReport:
    """The leaderboard and summary once every planned run has its marker (else one line names those
    missing, and nothing is written)."""
    params = _params(params)
    runs, store = _runs(params), _store(params)
    data = {subset: _data(params, subset) for subset in params.subsets}
    store.require({shard: run_key(p, data[subset]) for shard, (subset, p) in runs.items()}, "evaluate")
    results = [(subset, p, read_json(p.out / "metrics.json")) for subset, p in runs.values()]
    return _publish(params, results)


def _write_slurm(params: Params, blocklist: BlockList) -> StageReport:
    store, keys = _store(params), {}
    for subset in params.subsets:
        data = _data(params, subset)
        keys.update({shard_id(p): run_key(p, data) for p in _plan(params, subset, blocklist)})
    todo = store.pending(keys)
    submit = write_slurm(
        params.executor,
        name="evaluate",
        module=__name__,
        params=params.model_dump(mode="json"),
        shards=list(keys),
        pending=todo,
        folder=store.root / "slurm",
    )
    return StageReport(
        stage="evaluate",
        counts={"shards": len(keys), "pending": len(todo)},
        message=f"evaluate: {len(todo)} of {len(keys)} runs to run; submit with: bash {submit}",
    )
