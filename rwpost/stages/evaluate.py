"""Stage ``evaluate``: score the configured detectors on a published version's splits, over the input grid.

For each subset every detector is trained on ``train_split`` (dev) and scored on ``test_split`` (test), in
each cell of the grid (``settings`` x ``k``: T, T+I, T+E, T+I+E and the evidence-k ablation, or the legacy
closed-book / gold-evidence / open-web); each run writes ``<out>/<subset>/<detector>-<cell>/``
(metrics.json, report.md, plots, predictions), and the stage writes one ``<out>/leaderboard/`` over every
cell and the ``summary`` file (headline scores per run, the DVC metrics file).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

from rwpost.dataset import read_parquet, split_file
from rwpost.errors import ConfigError
from rwpost.evaluate import BlockList, RunSpec, evaluate
from rwpost.evaluate.data import lazy_encoder
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.evaluate.ledger import PriceEntry
from rwpost.evaluate.protocol import EVIDENCE_SEED, grid
from rwpost.evaluate.registry import with_task_labels
from rwpost.io import sha256_file, write_json
from rwpost.llm.config import detector_secrets_from_env
from rwpost.records import Sample
from rwpost.stages.base import DatasetParams, StageParams, StageReport


class DetectorParams(BaseModel):
    """One entry of ``evaluate.detectors``: a registered detector, its settings and subsets."""

    model_config = ConfigDict(extra="forbid")

    name: str
    label: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    """The runs' name and folder (None: ``name``); two entries of one detector (two models) need two."""
    settings: list[str] | None = None
    """Input cells (T, T+I, T+E, T+I+E, T+I+W, or closed-book / gold-evidence / open-web); None: the
    stage's ``settings``."""
    k: list[int] | None = None
    """Evidence-k ablation for this detector; None: the stage's ``k``."""
    subsets: list[str] | None = None
    """None: every subset of the stage."""
    config: dict[str, Any] = Field(default_factory=dict)
    repeats: PositiveInt = 1
    batch_size: PositiveInt = 16


class Params(StageParams):
    """The ``evaluate:`` section of params.yaml, with the ``dataset:`` section naming the version."""

    section = "evaluate"
    shared = ("dataset",)

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
    settings: list[str] = Field(default_factory=lambda: ["closed-book"])
    """The grid's input cells for every detector that names none."""
    k: list[int] = Field(default_factory=list)
    """Evidence-k ablation: k gold items per claim in each evidence cell."""
    evidence_seed: int = EVIDENCE_SEED
    allow_missing_images: bool = False
    failures: Literal["wrong", "exclude", "class"] = "wrong"
    """How failed answers are scored (named in every table): all samples, answered only, or a class."""
    detectors: list[DetectorParams] = Field(default_factory=list)
    prices: dict[str, PriceEntry] | None = None
    dataset: DatasetParams

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


def _labelled(path: Path) -> list[Sample]:
    return [s for s in read_parquet(path) if s.label is not None]


def run(params: Params) -> StageReport:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    version_dir = params.dataset.version_dir
    blocklist = BlockList.from_file(params.blocked_domains)
    encode = lazy_encoder() if params.key_points else None
    run_dirs: list[Path] = []
    summary: dict[str, dict[str, Any]] = {}
    lines: list[str] = []
    for subset in params.subsets:
        train_path = split_file(version_dir, subset, params.train_split)
        test_path = split_file(version_dir, subset, params.test_split)
        train, test = _labelled(train_path), _labelled(test_path)
        data_info = {
            "path": str(test_path),
            "sha256": sha256_file(test_path),
            "train": {"path": str(train_path), "sha256": sha256_file(train_path)},
            "version": params.dataset.version,
            "subset": subset,
        }
        for entry in params.detectors:
            label = entry.label or entry.name  # the runs' name and folder
            if entry.subsets is not None and subset not in entry.subsets:
                continue
            cells = grid(entry.settings or params.settings, params.k if entry.k is None else entry.k)
            for cell in (replace(c, seed=params.evidence_seed) for c in cells):
                setting = cell.evidence if cell.legacy else cell
                config = with_task_labels(entry.name, dict(entry.config), test)
                spec = RunSpec(
                    detector=entry.name,
                    config=config,
                    setting=setting,
                    seed=params.seed,
                    repeats=entry.repeats,
                    batch_size=entry.batch_size,
                    n_resamples=params.bootstrap,
                    name=f"{label}/{setting}",
                    prices=params.prices or None,  # type: ignore[arg-type]
                    blocklist=blocklist,
                    secrets=detector_secrets_from_env(entry.name, config),
                    allow_missing_images=params.allow_missing_images,
                    failures=params.failures,
                )
                out = params.out / subset / f"{label}-{cell.slug}"
                try:
                    metrics = evaluate(
                        test,
                        spec,
                        out,
                        train=train,
                        data_info=data_info,
                        encode=encode,
                        on_change="restart",
                    )
                except ConfigError as exc:
                    raise ConfigError(f"evaluate {subset}/{label}/{setting}: {exc}") from exc
                run_dirs.append(out)
                summary.setdefault(subset, {})[f"{label}/{setting}"] = {
                    k: metrics.get(k) for k in ("accuracy", "macro_f1", "weighted_f1")
                }
                lines.append(f"evaluate: {subset} {entry.name}/{setting}: macro F1 {metrics.get('macro_f1')}")
                print(lines[-1])
    if run_dirs:
        write_leaderboard(run_dirs, params.out / "leaderboard")
    write_json(params.summary or Path(f"{params.out}-summary.json"), summary)
    return StageReport(
        stage="evaluate",
        counts=summary,
        message=f"evaluate: {len(run_dirs)} runs -> {params.out}",
    )
