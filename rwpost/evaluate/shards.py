"""The ``evaluate:`` settings and their run over a published version: the grid of every subset, run in
order, or one shard per planned run (locally, on Ray or as a Slurm array), then one leaderboard.

:class:`EvaluateSettings` is the typed ``evaluate:`` section the stage (:mod:`rwpost.stages.evaluate`)
extends with the ``dataset:`` section naming the version; the runs of each subset are planned by
:func:`rwpost.evaluate.plan.plan_runs` and run by :func:`rwpost.evaluate.plan.run_plan`. With an
``executor:`` other than one local shard each run is a shard with a completion marker under
``<out>.shards``; :func:`run_shard` runs one (a Slurm task), :func:`merge` reads them all back once every
run has its marker, and :func:`publish` writes the leaderboard and the summary file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveFloat, model_validator

from rwpost.dataset import split_file
from rwpost.errors import ConfigError
from rwpost.evaluate.contract import EvidenceK, Seed
from rwpost.evaluate.data import Denominators, EvalData, authors_denominators, load_eval_data
from rwpost.evaluate.encoders import lazy_encoder
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.log import RunMetrics
from rwpost.evaluate.plan import (
    DetectorEntry,
    PlannedRun,
    RunShard,
    SetAside,
    ShardedRuns,
    plan_runs,
    prediction_entries,
    run_plan,
    shard_id,
)
from rwpost.evaluate.task import EVIDENCE_SEED, EvidenceKBeyond, EvidenceSampler
from rwpost.executors import ExecutorParams, ShardStore, Submitted, run_job
from rwpost.io import write_json
from rwpost.llm.config import connection_from_env
from rwpost.llm.types import PriceTable

Result = tuple[str, PlannedRun, RunMetrics | SetAside]
"""One finished run: its subset, the run, its typed metrics (or why it was set aside)."""


def untrainable(exc: ConfigError, data: EvalData) -> SetAside | None:
    """A run's refusal that is the split's doing, set aside: a training split of fewer than two labels (a
    detector that learns cannot train on it), or an evidence-k beyond every test sample's evidence
    (:class:`~rwpost.evaluate.task.EvidenceKBeyond`); None for any other refusal (the stage stops)."""
    if isinstance(exc, EvidenceKBeyond) or isinstance(exc.__cause__, EvidenceKBeyond):  # (named by run)
        return SetAside(str(exc))
    if len({s.label for s in data.train or () if s.label is not None}) >= 2:
        return None
    return SetAside(str(exc))


class Version(Protocol):
    """The published version evaluated (the ``dataset:`` section)."""

    @property
    def version(self) -> str: ...

    @property
    def version_dir(self) -> Path: ...


class DetectorParams(DetectorEntry):
    """One entry of ``evaluate.detectors``: a registered detector, its settings and subsets."""

    label: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    """The runs' name and folder (None: ``name``); two entries of one detector (two models) need two."""


class EvaluateSettings(BaseModel):
    """What is scored on which splits, in which grid cells, and the executor running it."""

    model_config = ConfigDict(extra="forbid")

    out: Path = Path("reports/evaluate")
    summary: Path | None = None
    """None: ``<out>-summary.json``."""
    subsets: list[str] = Field(default_factory=lambda: ["main"], min_length=1)
    train_split: str = "dev"
    test_split: str = "test"
    seed: Seed = 0
    bootstrap: NonNegativeInt = 1000
    """Resamples for the 95% confidence intervals."""
    key_points: bool = True
    """Key-point coverage of explanations (embedding similarity)."""
    blocked_domains: Path | None = None
    """More blocked domains, on top of the built-in fact-checkers and the packaged released list."""
    settings: list[str] = Field(default_factory=lambda: ["T+I"])
    """The grid's input cells for every detector that names none."""
    k: list[EvidenceK] = Field(default_factory=list)
    """Evidence-k ablation: k gold items per claim in each evidence cell."""
    evidence_seed: Seed = EVIDENCE_SEED
    evidence_sampler: EvidenceSampler = "rwpost"
    """``authors``: the authors' baseline runner's evidence-k draw, item for item (by position)."""
    denominators: Denominators = "ours"
    """``authors``: score only the claims the authors' loader keeps (post image present and opening)."""
    allow_missing_images: bool = False
    plots: bool = False
    """Draw each run's PNG figures (report.md shows them) and the leaderboard's cost plot; off, the reports
    link none (drawing them was half the stage's time)."""
    image_root: Path | None = None
    """Where relative image paths are found (Parquet splits hold the image bytes: None)."""
    failures: Literal["wrong", "exclude", "class"] = "wrong"
    """How failed answers are scored (named in every table): all samples, answered only, or a class."""
    detectors: list[DetectorParams] = Field(default_factory=list)
    prices: PriceTable | None = None
    batch_api: bool = False
    """Ask API models (the ``vlm`` detector) through the provider's Batch API first: about half price,
    answers within 24 h; the batch id is kept beside the answer cache, so a killed run resumes the same
    batch (:mod:`rwpost.evaluate.batch`). Multi-step detectors over an API model are refused."""
    batch_poll_s: PositiveFloat = 30.0
    """Seconds between polls of a batch."""
    executor: ExecutorParams = Field(default_factory=ExecutorParams)
    recipe: str | dict[str, Any] | None = None
    """A paper table's runs (``rwpost-table3``, or ``{name: ..., set: {model: ...}}``): its rows, cells and
    failure policy replace ``detectors``, ``settings``, ``k`` and ``failures``
    (:func:`rwpost.evaluate.recipes.stage_settings`); the leaderboard shows the paper's figures beside
    ours."""

    @model_validator(mode="before")
    @classmethod
    def _apply_recipe(cls, data: Any) -> Any:
        from rwpost.evaluate.recipes import stage_settings

        return stage_settings(data) if isinstance(data, dict) else data

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


def _data(settings: EvaluateSettings, dataset: Version, subset: str) -> EvalData:
    version_dir = dataset.version_dir
    data = load_eval_data(
        split_file(version_dir, subset, settings.test_split),
        train=split_file(version_dir, subset, settings.train_split),
        about={"version": dataset.version, "subset": subset, "split": settings.test_split},
    )
    return authors_denominators(data, settings.image_root) if settings.denominators == "authors" else data


def plan_for(
    settings: EvaluateSettings,
    detectors: Sequence[DetectorEntry],
    *,
    out: Path,
    subset: str | None = None,
    name: str | None = None,
    single_in_out: bool = False,
    blocklist: BlockList | None = None,
) -> list[PlannedRun]:
    """The runs of ``detectors`` under ``settings`` (their cells, seeds, scoring and image options): the
    one plan of both front doors, the evaluate stage (a version's subsets) and ``rwpost evaluate`` (one
    data file, ``single_in_out``); connections come from the environment by the options' type."""
    return plan_runs(
        detectors,
        settings.settings,
        settings.k,
        out=out,
        subset=subset,
        name=name,
        single_in_out=single_in_out,
        secrets=connection_from_env,
        seed=settings.seed,
        n_resamples=settings.bootstrap,
        prices=settings.prices or None,
        blocklist=blocklist if blocklist is not None else BlockList.from_file(settings.blocked_domains),
        allow_missing_images=settings.allow_missing_images,
        failures=settings.failures,
        evidence_seed=settings.evidence_seed,
        evidence_sampler=settings.evidence_sampler,
        image_root=settings.image_root,
        batch_api=settings.batch_api,
        batch_poll_s=settings.batch_poll_s,
    )


def _plan(settings: EvaluateSettings, subset: str, blocklist: BlockList) -> list[PlannedRun]:
    return plan_for(
        settings, settings.detectors, out=settings.out / subset, subset=subset, blocklist=blocklist
    )


def _options(settings: EvaluateSettings) -> dict[str, Any]:
    return {
        "encode": lazy_encoder() if settings.key_points else None,
        "on_change": "restart",
        "plots": settings.plots,
    }


def _store(settings: EvaluateSettings) -> ShardStore:
    return ShardStore(settings.executor.work_dir(settings.out))


def evaluate_all(settings: EvaluateSettings, dataset: Version, *, module: str) -> list[Result] | Submitted:
    """Every planned run of every subset, in order; sharded, the executor's runs merged, or the job a
    scheduler was given (its tasks call ``module``'s ``run_shard`` and ``merge``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if settings.executor.sharded:
        return _run_sharded(settings, dataset, module)
    blocklist = BlockList.from_file(settings.blocked_domains)
    results: list[Result] = []
    options = _options(settings)  # one key-point encoder for every subset
    for subset in settings.subsets:
        plan, data = _plan(settings, subset, blocklist), _data(settings, dataset, subset)
        for one in plan:  # one by one: a run that cannot train on this split is set aside, the rest run
            try:
                ran = run_plan([one], data, where=f"evaluate {subset}", **options)
            except ConfigError as exc:
                aside = untrainable(exc, data)
                if aside is None:
                    raise  # not the split's doing: the stage stops, as before
                results.append((subset, one, aside))
                continue
            results.extend((subset, planned, metrics) for planned, metrics in ran)
    return results


SET_ASIDE = "set_aside"
"""The summary key of a run set aside (:class:`SetAside`): the reason."""

SUMMARY_KEYS: tuple[str, ...] = ("accuracy", "macro_f1", "weighted_f1")
"""The headline scores of each run in the summary file."""


def _recipe(settings: EvaluateSettings) -> Any:
    """The ``recipe`` of the settings, loaded (None without one)."""
    from rwpost.evaluate.recipes import RecipeChoice, load_recipe

    choice = settings.recipe
    if not choice:
        return None
    return load_recipe(choice if isinstance(choice, str) else RecipeChoice.model_validate(choice).name)


def publish(settings: EvaluateSettings, results: list[Result]) -> dict[str, dict[str, Any]]:
    """Write the leaderboard over every run and the summary file; returns the summary (headline scores
    per subset and run)."""
    summary: dict[str, dict[str, Any]] = {}
    set_aside: list[tuple[str, str]] = []
    for subset, planned, metrics in results:
        system = planned.spec.system
        run_name = f"{planned.spec.detector}/{planned.spec.setting}"
        if isinstance(metrics, SetAside):
            summary.setdefault(subset, {})[system] = dict.fromkeys(SUMMARY_KEYS) | {SET_ASIDE: metrics.reason}
            set_aside.append((f"{subset}/{system}", metrics.reason))
            print(f"evaluate: {subset} {run_name}: set aside ({metrics.reason})")
            continue
        summary.setdefault(subset, {})[system] = {k: getattr(metrics, k) for k in SUMMARY_KEYS}
        print(f"evaluate: {subset} {run_name}: macro F1 {metrics.macro_f1}")
    if results:
        write_leaderboard(
            [planned.out for _, planned, metrics in results if not isinstance(metrics, SetAside)],
            settings.out / "leaderboard",
            plot=settings.plots,
            recipe=_recipe(settings),
            set_aside=set_aside,
        )
    write_json(settings.summary or Path(f"{settings.out}-summary.json"), summary)
    return summary


# --- shards (one per planned run): what the Slurm array's tasks and its merge job call -------------------


def _sharded(settings: EvaluateSettings, dataset: Version) -> ShardedRuns:
    """Every planned run of every subset as a shard, each on its subset's data; a run that cannot train
    on its split is set aside (:func:`untrainable`), as in the unsharded stage."""
    blocklist = BlockList.from_file(settings.blocked_domains)
    shards = {}
    for subset in settings.subsets:
        data = _data(settings, dataset, subset)
        for planned in _plan(settings, subset, blocklist):
            shards[shard_id(planned)] = RunShard(planned, data, subset)
    return ShardedRuns(shards, _store(settings), options=_options(settings), set_aside=untrainable)


def run_shard(settings: EvaluateSettings, dataset: Version, shard: str) -> None:
    """Evaluate the planned run ``shard`` (its folder) and mark it done; skipped when already done."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _sharded(settings, dataset).run(shard)


def merge(settings: EvaluateSettings, dataset: Version, runs: ShardedRuns | None = None) -> list[Result]:
    """Every planned run's metrics once each has its marker (else one line names those missing).
    ``runs``: the stage's shards when the caller has them (its data read already)."""
    runs = runs if runs is not None else _sharded(settings, dataset)
    runs.require("evaluate")
    return [(one.subset or "", one.planned, runs.finished(shard)) for shard, one in runs.shards.items()]


def _run_sharded(settings: EvaluateSettings, dataset: Version, module: str) -> list[Result] | Submitted:
    """One shard per planned run of every subset, run by the executor (each shard:
    :meth:`~rwpost.evaluate.plan.ShardedRuns.run`), then merged; a scheduler's executor (Slurm) returns the
    job it wrote instead."""
    runs = _sharded(settings, dataset)
    job = runs.job("evaluate", gpus=settings.executor.gpus, job=(module, settings.model_dump(mode="json")))
    submitted = run_job(settings.executor, job)
    return submitted if submitted is not None else merge(settings, dataset, runs)


# --- the command's front door: `rwpost evaluate` builds these settings and makes this one call ---------


class EvaluateCommand(EvaluateSettings):
    """``rwpost evaluate``'s settings: the stage's (an option left unset takes the stage's default, as
    params.yaml's ``evaluate:`` section would) and what a command names itself instead of a published
    version: the data file, its training samples, the planned entries and the one folder they write."""

    data: Path
    out: Path
    entries: list[DetectorEntry] = Field(default_factory=list)
    """The detectors (or prediction sets, or a recipe's rows) to plan; ``detectors`` is the stage's."""
    train: Path | None = None
    train_fraction: float | None = None
    name: str | None = None
    """The system name in reports (None: ``detector/cell``)."""
    overwrite: bool = False
    select_tools: bool = False
    """Choose the detector's toolset (Algorithm 2) and write ``out/toolset.json`` instead of running."""
    progress: bool = False

    @model_validator(mode="before")
    @classmethod
    def _apply_recipe(cls, data: Any) -> Any:  # the command applies its recipe to its own data's cells
        return data


def command_settings(
    *,
    data: Path | None,
    out: Path | None,
    detectors: Sequence[str] = (),
    predictions: Path | None = None,
    format: str | None = None,
    reading: dict[str, Any] | None = None,
    strict: bool = False,
    sets: Sequence[str] = (),
    model: str | None = None,
    cells: Sequence[str] = (),
    recipe: str | None = None,
    prices: Path | None = None,
    executor: str = "local",
    gpus: float = 0,
    **given: Any,
) -> EvaluateCommand:
    """The settings of one ``rwpost evaluate`` from its options (None: unset, the stage's default); every
    refusal is one :class:`ConfigError` naming the option, before anything is read or written.

    ``given`` are the stage's settings the command names alike (``seed``, ``k``, ``failures``, ...) and
    the command's own (``train``, ``name``, ``overwrite``, ...); ``reading`` the generic predictions
    format's fields; ``sets`` the ``--set key=value`` options, ``model`` the same as ``--set model=``."""
    from pydantic import ValidationError

    from rwpost.evaluate.contract import check_option, parse_options
    from rwpost.evaluate.ledger import read_price_file
    from rwpost.io import validation_problem

    if out is None:
        raise ConfigError("give --out (the run folder)")
    for option, kind in (("seed", Seed), ("evidence_seed", Seed)):
        if given.get(option) is not None:
            check_option(f"--{option.replace('_', '-')}", given[option], kind)
    for k in given.get("k") or []:
        check_option("--k", k, EvidenceK)
    given = {key: value for key, value in given.items() if value is not None}
    given["settings"] = list(cells) or None
    if data is None:  # issue 37: a predictions folder may carry its own gold
        from rwpost.evaluate.formats import gold_of_predictions

        found = gold_of_predictions(predictions, format) if predictions is not None else None
        if found is None:
            raise ConfigError("give --data (the samples to score)")
        data = Path(found)
    chosen = None
    if recipe is not None:
        from rwpost.evaluate.recipes import recipe_for_data

        if detectors or predictions is not None:
            raise ConfigError("--recipe names its detectors: leave out --detector and --predictions")
        chosen = recipe_for_data(recipe, data, given)
    config = parse_options(sets)
    if model is not None:
        if "model" in config and str(config["model"]) != model:
            raise ConfigError(f"--model {model!r} and --set model={config['model']!r} differ: give one")
        config["model"] = model
    each = {
        "repeats": given.pop("repeats", DetectorEntry.model_fields["repeats"].default),
        "batch_size": given.pop("batch_size", DetectorEntry.model_fields["batch_size"].default),
    }
    if chosen is not None:
        entries = chosen.entries(config, **each)
    elif predictions is not None:
        if list(detectors) not in ([], ["predictions"]):
            raise ConfigError(
                "--predictions scores a file: leave out --detector or give --detector predictions"
            )
        entries = prediction_entries(predictions, format, config, strict=strict, reading=reading, **each)
    else:
        if not detectors:
            raise ConfigError("give --detector NAME or --predictions FILE")
        entries = [DetectorEntry(name=d, config=dict(config), **each) for d in detectors]
    for option, allowed in (
        ("evidence_sampler", ("rwpost", "authors")),
        ("denominators", ("ours", "authors")),
    ):
        if option in given and given[option] not in allowed:
            raise ConfigError(f"--{option.replace('_', '-')} {given[option]!r}: give {' or '.join(allowed)}")
    if executor not in ("local", "ray", "slurm"):
        raise ConfigError(f"--executor {executor!r}: give local, ray or slurm")
    if prices is not None:
        given["prices"] = read_price_file(prices)
    given = {key: value for key, value in given.items() if value is not None}
    try:  # the one settings model of the stage, validated once
        return EvaluateCommand.model_validate(
            {
                **given,
                "data": data,
                "out": out,
                "entries": entries,
                "recipe": recipe,
                "executor": ExecutorParams(name=executor, gpus=gpus),
            }
        )
    except ValidationError as exc:
        message, where = validation_problem(exc)
        raise ConfigError(f"--{(where or 'options').split('.')[0].replace('_', '-')}: {message}") from None


@dataclass(frozen=True)
class CommandResult:
    """What one ``rwpost evaluate`` did: its plan and each run's typed metrics, or the toolset it chose."""

    plan: list[PlannedRun]
    done: list[tuple[PlannedRun, RunMetrics]]
    toolset: Path | None = None
    submitted: Submitted | None = None
    """The Slurm job written (``--executor slurm``): nothing ran here yet."""


def command_data(
    command: EvaluateCommand, note: Callable[[str], None] = print
) -> tuple[EvaluateCommand, EvalData]:
    """The command's data read as ``rwpost evaluate`` scores it (the samples without an RW-Post label
    counted and left out; the authors' denominators where asked), and the command with the data's media
    folder as its image root when it names none."""
    c = command
    loaded = load_eval_data(c.data, train=c.train, train_fraction=c.train_fraction, seed=c.seed)
    if loaded.info.get("excluded_unlabelled"):
        note(
            f"{loaded.info['excluded_unlabelled']} samples have no RW-Post label "
            "(excluded ratings such as satire) and are not scored"
        )
    if c.image_root is None and loaded.media_root is not None:
        c = c.model_copy(update={"image_root": loaded.media_root})
    if c.denominators == "authors":
        loaded = authors_denominators(loaded, c.image_root)
        left_out = loaded.info["left_out"]
        note(
            f"authors' denominators: {left_out} of {left_out + len(loaded.test)} "
            "claims left out of every cell (no post image, or it does not open: their loader's rule)"
        )
    return c, loaded


def command_plan(command: EvaluateCommand) -> list[PlannedRun]:
    """The runs of ``rwpost evaluate``: its entries planned as the stage plans its own (:func:`plan_for`)."""
    return plan_for(command, command.entries, out=command.out, name=command.name, single_in_out=True)


def _command_options(command: EvaluateCommand) -> dict[str, Any]:
    """How the command's runs are evaluated, here or in a Slurm task."""
    return {
        "encode": lazy_encoder() if command.key_points else None,
        "overwrite": command.overwrite,
        "plots": command.plots,
    }


def _command_store(command: EvaluateCommand) -> ShardStore:
    return ShardStore(command.executor.work_dir(command.out))


def command_runs(command: EvaluateCommand, note: Callable[[str], None] = print) -> ShardedRuns:
    """The command's runs as shards, as its sharded run makes them (what a Slurm task of ``rwpost evaluate
    --executor slurm`` runs one of, and its merge job checks): its data read again and its runs planned
    again (:func:`command_data`, :func:`command_plan`)."""
    c, data = command_data(command, note)
    return ShardedRuns.of(command_plan(c), data, _command_store(c), options=_command_options(c))


def evaluate_command(
    command: EvaluateCommand,
    *,
    done: Callable[[PlannedRun, RunMetrics], None] | None = None,
    note: Callable[[str], None] = print,
    beside_paper: bool = True,
) -> CommandResult:
    """Run ``rwpost evaluate``: its data read (:func:`command_data`), the runs planned as the stage plans
    its own (:func:`command_plan`) and run by its executor (:func:`rwpost.evaluate.plan.run_plan`), then a
    leaderboard over several runs or a recipe's (with the paper's figures beside ours). ``done(run,
    metrics)`` after each run; ``note`` says the rest. With ``select_tools`` the detector's toolset is
    chosen instead (nothing is run); with ``--executor slurm`` the job's scripts are written
    (:mod:`rwpost.evaluate.command_job` is what its tasks call) and nothing runs here."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local model folders only, never a download
    c, loaded = command_data(command, note)
    plan = command_plan(c)
    if c.select_tools:
        from rwpost.evaluate.select import select_for_plan

        path, tools = select_for_plan(plan, loaded, c.out)
        note(f"toolset {', '.join(tools)} in {path}; load it with --set toolset={path}")
        return CommandResult(plan, [], toolset=path)
    ran = run_plan(
        plan,
        loaded,
        executor=c.executor,
        store=_command_store(c),
        progress=c.progress,
        done=done,
        job=("rwpost.evaluate.command_job", command.model_dump(mode="json")),
        **_command_options(c),
    )
    if isinstance(ran, Submitted):
        note(ran.message("evaluate", unit="runs"))
        return CommandResult(plan, [], submitted=ran)
    command_leaderboard(c, plan, note, beside_paper=beside_paper)
    return CommandResult(plan, ran)


def command_leaderboard(
    command: EvaluateCommand, plan: Sequence[PlannedRun], note: Callable[[str], None], *, beside_paper: bool
) -> None:
    """The leaderboard over the command's runs when it planned several or follows a recipe (with the
    paper's figures beside ours when ``beside_paper``)."""
    recipe = _recipe(command)
    if len(plan) > 1 or recipe is not None:
        write_leaderboard(
            [p.out for p in plan], command.out / "leaderboard", plot=command.plots, recipe=recipe
        )
        note(f"{len(plan)} runs; leaderboard in {command.out / 'leaderboard'}")
    if recipe is not None and beside_paper:
        from rwpost.evaluate.recipes import beside_paper as paper_lines

        note("\n".join(paper_lines([p.out for p in plan], recipe)[0]))
