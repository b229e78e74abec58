"""Stage ``evaluate``: score the configured detectors on a published version's splits, over the input grid.

For each subset every detector is trained on ``train_split`` (dev) and scored on ``test_split`` (test), in
each cell of the grid (``settings`` x ``k``: T, T+I, T+E, T+I+E, T+I+W and the evidence-k ablation; the
names closed-book / gold-evidence / open-web are read as T+I / T+I+E / T+I+W); the runs are planned by
:func:`rwpost.evaluate.plan.plan_runs`, as ``rwpost evaluate`` plans its own; each run writes
``<out>/<subset>/<detector>-<cell slug>/``
(metrics.json, report.md, predictions; the PNG figures only with ``plots: true``), and the stage writes one
``<out>/leaderboard/`` over every cell and the ``summary`` file (headline scores per run, the DVC metrics
file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, NonNegativeInt, model_validator

from rwpost.dataset import split_file
from rwpost.evaluate.data import load_eval_data
from rwpost.evaluate.encoders import lazy_encoder
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.plan import DetectorEntry, plan_runs, run_plan
from rwpost.evaluate.task import EVIDENCE_SEED
from rwpost.io import write_json
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
    settings: list[str] = Field(default_factory=lambda: ["T+I"])
    """The grid's input cells for every detector that names none."""
    k: list[int] = Field(default_factory=list)
    """Evidence-k ablation: k gold items per claim in each evidence cell."""
    evidence_seed: int = EVIDENCE_SEED
    allow_missing_images: bool = False
    image_root: Path | None = None
    """Where relative image paths are found (Parquet splits hold the image bytes: None)."""
    plots: bool = False
    """Draw each run's PNG figures (report.md shows them) and the leaderboard's cost plot; off, the reports
    link none (drawing them was half the stage's time)."""
    failures: Literal["wrong", "exclude", "class"] = "wrong"
    """How failed answers are scored (named in every table): all samples, answered only, or a class."""
    detectors: list[DetectorParams] = Field(default_factory=list)
    prices: PriceTable | None = None
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


def run(params: Params) -> StageReport:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    version_dir = params.dataset.version_dir
    blocklist = BlockList.from_file(params.blocked_domains)
    encode = lazy_encoder() if params.key_points else None
    run_dirs: list[Path] = []
    summary: dict[str, dict[str, Any]] = {}
    lines: list[str] = []
    for subset in params.subsets:
        data = load_eval_data(
            split_file(version_dir, subset, params.test_split),
            train=split_file(version_dir, subset, params.train_split),
            about={"version": params.dataset.version, "subset": subset, "split": params.test_split},
        )
        plan = plan_runs(
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
        for planned, metrics in run_plan(
            plan, data, encode=encode, on_change="restart", where=f"evaluate {subset}", plots=params.plots
        ):
            run_dirs.append(planned.out)
            system = planned.spec.system
            summary.setdefault(subset, {})[system] = {
                k: metrics.get(k) for k in ("accuracy", "macro_f1", "weighted_f1")
            }
            run_name = f"{planned.spec.detector}/{planned.spec.setting}"
            lines.append(f"evaluate: {subset} {run_name}: macro F1 {metrics.get('macro_f1')}")
            print(lines[-1])
    if run_dirs:
        write_leaderboard(run_dirs, params.out / "leaderboard", plot=params.plots)
    write_json(params.summary or Path(f"{params.out}-summary.json"), summary)
    return StageReport(
        stage="evaluate",
        counts=summary,
        message=f"evaluate: {len(run_dirs)} runs -> {params.out}",
    )
