"""The runner: feed blinded samples to a detector in batches, keep every answer, resume after a kill.

Predictions are appended to ``<out>/predictions.jsonl`` one flushed line per sample, so a killed run
restarted with the same arguments skips every sample already answered (no model call is repeated).
``<out>/run.json`` records what the run is: its identity hashes the content of every input (data, the
samples themselves, predictions file through the detector's config, prompts and answer schemas, detector
config, blocked-domain list, code version). A run resumes only when all are identical; otherwise it is
refused with one line naming what changed, or started afresh when asked (``overwrite``), so predictions
of two inputs are never mixed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.errors import ConfigError, Interrupted, RwpostError, signal_name
from rwpost.evaluate.contract import Detector, Prediction, RunContext
from rwpost.evaluate.data import refuse_duplicate_ids
from rwpost.evaluate.identity import PREDICTIONS_FILE, RUN_OUTPUTS, resume_state, run_identity, start_run
from rwpost.evaluate.inputs import image_loadable
from rwpost.evaluate.leakage import BlockList, LeakageGuard
from rwpost.evaluate.log import DataRecord, RunManifest, TrainRecord
from rwpost.evaluate.manifest import environment, ids_sha256, now
from rwpost.evaluate.metrics import check_policy
from rwpost.evaluate.outages import (
    outage_counts,
    retrieval_record,
    retry_transport_failures,
)
from rwpost.evaluate.registry import make_detector
from rwpost.evaluate.task import EVIDENCE_SEED, Cell, EvalTask, EvidenceSampler, EvidenceSource
from rwpost.evaluate.toolkit.tools import run_context
from rwpost.io import (
    append_jsonl_rows,
    check_output,
    drop_torn_tail,
    iter_jsonl,
    overlap,
)
from rwpost.llm.types import PriceTable
from rwpost.records import Sample
from rwpost.secrets import register_config


@dataclass
class RunSpec:
    """What to run: detector, its options, the input cell, seeds and scoring options."""

    detector: str
    config: dict[str, Any] = field(default_factory=dict)
    setting: Cell = field(default_factory=lambda: Cell.parse("T+I"))
    """The input cell (T, T+I, T+E, T+I+E, T+I+W, evidence-k); a name or an alias is parsed."""
    seed: int = 0
    repeats: int = 1
    repeats_asked: int | None = None
    """The repeats asked of a deterministic detector, which runs once (:func:`run` sets it)."""
    batch_size: int = 16
    n_resamples: int = 1000
    name: str | None = None
    prices: PriceTable | None = None
    blocklist: BlockList = field(default_factory=BlockList)
    secrets: dict[str, Any] = field(default_factory=dict, repr=False)
    """Extra detector arguments never written anywhere (API keys); not part of the run's identity. An
    ``api_key`` in ``config`` is moved here."""
    failures: str = "wrong"
    """How failed answers are scored (``rwpost.evaluate.metrics.FAILURE_POLICIES``); scoring only, so
    not part of the run's identity: a run rescored under another policy resumes."""
    allow_missing_images: bool = False
    """Image cells: run anyway when images cannot be loaded (each such sample fails with a reason)."""
    evidence_seed: int = EVIDENCE_SEED
    """Seed of the evidence-k subsets (:func:`rwpost.evaluate.task.evidence_subset`)."""
    evidence_sampler: EvidenceSampler = "rwpost"
    """``authors``: their runner's draw by position (``task.authors_evidence_subset``)."""
    image_root: Path | None = None
    """Where the samples' relative image paths are found (released JSONL beside its image folder)."""
    batch_api: bool = False
    """Ask an API model's pending requests through the provider's Batch API first (about half price;
    :mod:`rwpost.evaluate.batch`); the answers are the same, so not part of the run's identity."""
    batch_poll_s: float = 30.0
    """Seconds between polls of a batch."""

    def __post_init__(self) -> None:
        self.setting = Cell.parse(self.setting)
        # an API key given as an option (``--set api_key=...``) is a secret like the environment's: kept
        # out of the options (so out of run.json and the manifest), and every credential in them redacted
        if "api_key" in self.config:
            self.config = dict(self.config)
            key = self.config.pop("api_key")
            self.secrets = {**self.secrets, **({"api_key": str(key)} if key else {})}
        register_config(self.config)
        register_config(self.secrets)

    def task(self, samples: Sequence[Sample], data_info: dict[str, Any] | None = None) -> EvalTask:
        """The run's task over the evaluated ``samples`` (their label space), built once per run."""
        info = data_info or {}
        return EvalTask.of(
            self.setting,
            samples,
            failures=self.failures,
            evidence_seed=self.evidence_seed,
            evidence_sampler=self.evidence_sampler,
            subset=info.get("subset"),
            split=info.get("split"),
        )

    def context(self, detector: Detector, repeat: int = 0, *, progress: bool = False) -> RunContext:
        """``detector``'s run context for one repeat: the seed is ``seed + repeat``; its options name the
        model :meth:`RunContext.model` builds."""
        return run_context(
            detector.options,
            cell=self.setting,
            seed=self.seed + repeat,
            guard=LeakageGuard(self.blocklist),
            image_root=self.image_root,
            secrets=self.secrets,
            prices=self.prices,
            progress=progress,
            repeat=repeat,
        )

    @property
    def system(self) -> str:
        """The run's name in reports and the paired explanations file."""
        return self.name or f"{self.detector}/{self.setting}"


def read_predictions(path: Path) -> dict[tuple[int, str], dict[str, Any]]:
    """Predictions already written, by ``(repeat, id)``; a last line cut short by a kill is removed."""
    drop_torn_tail(path)  # the write a kill interrupted: redo that sample
    if not path.exists():
        return {}
    return {(int(row["repeat"]), row["id"]): row for _, row in iter_jsonl(path)}


def predict_all(
    detector: Detector,
    samples: Sequence[Sample],
    task: EvalTask,
    ctx: RunContext,
    path: Path,
    *,
    batch_size: int = 16,
    done: dict[tuple[int, str], dict[str, Any]] | None = None,
) -> list[Prediction]:
    """Predictions for every sample of repeat ``ctx.repeat``, in sample order: read from ``path`` if
    there, else asked (blinded by ``task`` with the run's block list) and appended."""
    from rich.console import Console
    from rich.progress import Progress

    repeat = ctx.repeat
    done = read_predictions(path) if done is None else done
    todo = [s for s in samples if (repeat, s.id) not in done]
    blocklist = ctx.guard.blocklist
    with Progress(console=Console(stderr=True), disable=not ctx.progress) as bar:
        shown = bar.add_task(f"repeat {repeat}", total=len(samples), completed=len(samples) - len(todo))
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            began = time.perf_counter()
            seen = [task.blind(s, blocklist=blocklist) for s in batch]
            try:
                answers = detector.predict(seen, task, ctx)
            except KeyboardInterrupt as exc:  # say what is kept and what was lost
                kept = sum((repeat, s.id) in done for s in samples)
                of = f" of repeat {repeat}" if repeat else ""
                raise Interrupted(
                    signal_name(exc),
                    f"{kept} of {len(samples)} answers{of} kept in {path}; the {len(batch)} being asked "
                    "were not kept (the next run asks them again)",
                ) from None
            wall = (time.perf_counter() - began) / len(batch)
            by_id = {p.id: p for p in answers}
            extra = set(by_id) - {s.id for s in batch}
            if extra:
                raise RwpostError(
                    f"detector {detector.name!r} answered for ids it was not given: {sorted(extra)}"
                )
            rows = []
            for s in batch:
                missing = Prediction(id=s.id, error=f"detector {detector.name!r} gave no answer")
                pred = detector.outside_labels(by_id.get(s.id) or missing)
                trace = ctx.transcripts.pop(s.id, None)  # what the detector recorded in ctx.transcript
                if trace is not None:
                    ctx.sent_images(trace.images_sent)
                    pred = pred if pred.calls else pred.model_copy(update={"calls": trace.calls})
                rows.append({"repeat": repeat, "wall_s": wall, **pred.model_dump(mode="json")})
            append_jsonl_rows(path, rows)
            for row in rows:
                done[(repeat, row["id"])] = row
            bar.advance(shown, len(batch))
    return [Prediction.from_row(done[(repeat, s.id)]) for s in samples]


def check_cell(
    detector: Detector,
    cell: Cell,
    samples: Sequence[Sample],
    *,
    image_root: str | Path | None = None,
    allow_missing_images: bool = False,
) -> dict[str, Any] | None:
    """Refuse a cell the detector cannot run honestly; the image counts of an image cell.

    Open-web needs ``capabilities.retrieves``; an image cell for a detector that ``reads_images``
    refuses samples whose image cannot be loaded (unless ``allow_missing_images``: each then fails with a
    reason in the detector's answer). Returns ``{expected, missing, missing_ids, without_image}`` for
    image cells, None otherwise.
    """
    if cell.evidence is EvidenceSource.WEB and not detector.capabilities.retrieves:
        raise ConfigError(
            f"detector {detector.name!r} does not retrieve evidence, so it cannot run {cell} "
            "(a detector that searches declares Capabilities(retrieves=True))"
        )
    if not cell.image:
        return None
    with_image = [s for s in samples if s.image is not None]
    missing = [s.id for s in with_image if not image_loadable(s, image_root)]
    if missing and detector.capabilities.reads_images and not allow_missing_images:
        raise ConfigError(
            f"{len(missing)} of {len(with_image)} images cannot be loaded for {cell} (e.g. {missing[0]}; "
            "no bytes and no file under the image root): fix them or give --allow-missing-images"
        )
    return {
        "expected": len(with_image),
        "missing": len(missing),
        "missing_ids": missing,
        "without_image": len(samples) - len(with_image),
    }


def refuse_inputs_in(out_dir: Path, inputs: Sequence[str | Path]) -> None:
    """A ConfigError when the run would write over one of its ``inputs`` (a file named like a run file in
    ``out_dir``, which ``overwrite`` would delete) or into an input folder (its files would be read as
    the input's own, and change its checksum)."""
    given = [Path(i) for i in inputs]
    for name in RUN_OUTPUTS:
        check_output(out_dir / name, given, overwrite=True)
    for folder in (g for g in given if g.is_dir()):
        if overlap(out_dir, folder) in ("is also", "is inside"):
            raise ConfigError(f"{out_dir}: is inside the input folder {folder}; write the run elsewhere")


@dataclass
class RunResult:
    """Predictions of every repeat, plus what the report needs to know about the run."""

    predictions: list[list[Prediction]]
    manifest: RunManifest
    input_report: dict[str, Any] | None


def data_record(
    samples: Sequence[Sample], train: Sequence[Sample] | None, identity: Any, data_info: dict[str, Any] | None
) -> DataRecord:
    """The manifest's record of the evaluated data: the file as given and the samples scored."""
    ids = ids_sha256([s.id for s in samples])
    facts = {**(data_info or {}), "samples": len(samples), "ids_sha256": ids}
    return DataRecord.model_validate({**facts, "content_sha256": identity.samples_sha256})


def train_record(train: Sequence[Sample] | None, identity: Any) -> TrainRecord | None:
    """The manifest's record of the training samples (None without)."""
    if not train:
        return None
    ids = ids_sha256([s.id for s in train])
    return TrainRecord(samples=len(train), ids_sha256=ids, content_sha256=identity.train_sha256)


def untrained(spec: RunSpec) -> ConfigError:
    """The refusal of a detector that learns, given no training samples."""
    return ConfigError(
        f"detector {spec.detector!r} learns from labelled samples: give --train or --train-fraction"
    )


def run(
    samples: Sequence[Sample],
    spec: RunSpec,
    out_dir: str | Path,
    *,
    train: Sequence[Sample] | None = None,
    data_info: dict[str, Any] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    on_change: str = "refuse",
    make: Callable[[str, dict[str, Any]], Detector] = make_detector,
) -> RunResult:
    """Run ``spec``'s detector on ``samples`` (training it on ``train`` first if it learns), resumably.

    The folder's run resumes only if every input is identical (:func:`run_identity`); otherwise it is
    refused naming what changed, or started afresh with ``overwrite`` (always) or ``on_change="restart"``
    (pipeline stages, which own their output folders).
    """
    out = Path(out_dir)
    if not samples:
        raise ConfigError("no samples to evaluate")
    if on_change not in ("refuse", "restart"):
        raise ConfigError(f"on_change must be 'refuse' or 'restart', got {on_change!r}")
    check_policy(spec.failures)
    refuse_duplicate_ids(samples, "the evaluated samples")
    if train:
        refuse_duplicate_ids(train, "the training samples")
    first = make(spec.detector, spec.config)
    if spec.repeats > 1 and first.capabilities.deterministic:  # the same answers every time: run once
        spec = replace(spec, repeats=1, repeats_asked=spec.repeats)
    identity = run_identity(samples, spec, first, train, data_info)
    info = data_info or {}
    inputs = [info.get("path"), (info.get("train") or {}).get("path"), *first.inputs().files]
    refuse_inputs_in(out, [i for i in inputs if isinstance(i, str | Path)])
    # every check a run can fail comes before anything is written, so a corrected command is not blocked
    data_record(samples, train, identity, data_info)  # the manifest's data facts read as its model
    first_ctx = ctx = spec.context(first, 0, progress=progress)
    first.prepare(first_ctx)  # a missing API or search key is refused before anything is written
    if spec.batch_api:
        from rwpost.evaluate.batch import check_batchable

        check_batchable(first)  # a multi-step detector is refused before anything is paid
    task = spec.task(samples, data_info)
    first.check_labels(task)  # a label space with a label the detector never answers
    # so are a cell the detector cannot run, unloadable images and samples it cannot read (no video)
    allow = spec.allow_missing_images
    images = check_cell(first, task.cell, samples, image_root=spec.image_root, allow_missing_images=allow)
    input_report = first.check(samples)
    path = out / PREDICTIONS_FILE
    state = resume_state(out, identity, overwrite=overwrite, on_change=on_change)
    if first.capabilities.needs_training and not train:
        answered = read_predictions(path) if state == "resumed" else {}
        if not all((r, s.id) in answered for r in range(spec.repeats) for s in samples):
            raise untrained(spec)
    resumed = start_run(out, identity, state)
    retried = retry_transport_failures(path)
    done = read_predictions(path)
    all_predictions, configs = [], []
    detector = first
    started = now()
    for repeat in range(spec.repeats):
        if repeat:
            detector = make(spec.detector, spec.config)
            ctx = spec.context(detector, repeat, progress=progress)
        configs.append(detector.config())
        if detector.capabilities.needs_training and not all((repeat, s.id) in done for s in samples):
            if train:  # (without training data, refused above unless every answer is on disk)
                seen = [task.blind(s, keep_label=True, blocklist=spec.blocklist) for s in train]
                detector.fit(seen, task, ctx)
        if spec.batch_api:
            from rwpost.evaluate.batch import batch_prefill

            pending = [s for s in samples if (repeat, s.id) not in done]
            blind = [task.blind(s, blocklist=ctx.guard.blocklist) for s in pending]
            batch_prefill(detector, blind, task, ctx, poll_s=spec.batch_poll_s)
        all_predictions.append(
            predict_all(detector, samples, task, ctx, path, batch_size=spec.batch_size, done=done)
        )
    wall = [float(r["wall_s"]) for r in done.values() if "wall_s" in r]
    manifest = RunManifest.of(
        identity,
        system=spec.system,
        detector_config=configs[0] if len(configs) == 1 else configs,
        setting_alias=spec.setting.alias,
        failures=spec.failures,
        batch_size=spec.batch_size,
        bootstrap_resamples=spec.n_resamples,
        batch_api=spec.batch_api,
        repeats_asked=spec.repeats_asked,
        device=detector.device,
        data=data_record(samples, train, identity, data_info),
        train=train_record(train, identity),
        blocked_domains=len(spec.blocklist.domains),
        blocked_domain_list=spec.blocklist.describe(),
        leakage=first.leakage_report([p for preds in all_predictions for p in preds], first_ctx),
        notes=first.notes([p for preds in all_predictions for p in preds], task, first_ctx),
        images=None
        if images is None
        else {**images, "sent": ctx.images_sent if detector.capabilities.reads_images else None},
        retrieval=retrieval_record(all_predictions) if task.cell.evidence is EvidenceSource.WEB else None,
        environment=environment(),
        started=started,
        finished=now(),
        resume=resumed,
        **outage_counts(retried, all_predictions),
        mean_detector_wall_s_per_sample=float(np.mean(wall)) if wall else None,
    )
    return RunResult(all_predictions, manifest, input_report)
