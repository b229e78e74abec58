"""The run log: the typed, versioned files of an evaluation run folder (as inspect_ai's ``EvalLog``).

One pydantic model per file, written and read by the same model::

    run.json        RunRecord      what the run is (fingerprint and identity; a restart must match it)
    manifest.json   RunManifest    the spec (RunSpecRecord), the data, environment, leakage, images, timing
    metrics.json    RunMetrics     headline keys of the primary view, every view (ViewScores) under the
                                   named failure policy with coverage and 95% intervals, breakdowns,
                                   ledger, explanations, leakage audit, repeats
    scored.jsonl    ScoredSample   per sample: gold, predicted, correct, flagged, error, ledger

A file is written with :meth:`LogPart.dump` (only the keys a run sets: a view with no samples has no
scores, a run of one repeat no ``repeats``) and read with :func:`read_log`, which turns a file that does
not parse or fit into one :class:`~rwpost.errors.RecordError` naming it. Every file carries
``log_version``; a file without one (written before the log was typed) reads as this version.
Their JSON Schemas are generated into ``schemas/`` beside the records' (``rwpost schemas``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_validator

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.metrics import HEADLINE, check_policy
from rwpost.io import read_json, validation_problem
from rwpost.labels import Label

LOG_VERSION = "1"
"""Version of the run log's files; bump it when a field changes meaning or type."""

METRIC_TITLES: dict[str, str] = {
    "weighted_f1": "weighted F1",
    "accuracy": "accuracy",
    "weighted_recall": "weighted recall",
    "weighted_precision": "weighted precision",
    "macro_f1": "macro F1",
}
"""Titles of the headline metrics (:data:`~rwpost.evaluate.metrics.HEADLINE`: paper Table III order, then
Table V's macro F1) in every table: report, leaderboard, compare and the command line."""


def _policy(value: str) -> str:
    try:
        return check_policy(value)
    except ConfigError as exc:  # pydantic reports a ValueError as a field problem
        raise ValueError(str(exc).replace("--failures", "failures")) from None


Policy = Annotated[str, AfterValidator(_policy)]
"""A failure policy's name (``rwpost.evaluate.metrics.FAILURE_POLICIES``)."""

Interval = tuple[float, float]


class LogPart(BaseModel):
    """A part of the run log: unknown keys refused; a NaN metric (a real run may hold one) kept as NaN."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True, ser_json_inf_nan="constants")

    def dump(self) -> dict[str, Any]:
        """The JSON object written to disk: the keys this part was given, values as JSON."""
        return self.model_dump(mode="json", exclude_unset=True, fallback=str)


class LogFile(LogPart):
    """A whole file of the run log, with its version (always written)."""

    log_version: Literal["1"] = LOG_VERSION

    def model_post_init(self, context: Any, /) -> None:
        self.model_fields_set.add("log_version")


# --- metrics.json ------------------------------------------------------------------------------------


class Headline(LogPart):
    """The five headline metrics (None where a view has no samples scored)."""

    weighted_f1: float | None = None
    accuracy: float | None = None
    weighted_recall: float | None = None
    weighted_precision: float | None = None
    macro_f1: float | None = None

    def headline(self) -> dict[str, float | None]:
        """The headline metrics by key, in :data:`~rwpost.evaluate.metrics.HEADLINE` order."""
        return {k: getattr(self, k) for k in HEADLINE}


class Coverage(LogPart):
    """How many samples of a view have an answer."""

    answered: int
    total: int
    fraction: float | None = None


class ClassScores(LogPart):
    precision: float
    recall: float
    f1: float
    support: int


class ConfusionMatrix(LogPart):
    """Rows gold, columns predicted (``Other`` and ``No answer`` columns when some answer is such)."""

    labels: list[str]
    rows: str = "gold"
    columns: str = "predicted"
    matrix: list[list[int]]


class ReliabilityBin(LogPart):
    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


class ViewScores(Headline):
    """One view's scores (``rwpost.evaluate.metrics.view_metrics``): scores, coverage and intervals only
    when the view has samples, calibration only when some have valid probabilities."""

    view: str
    title: str
    derived: bool = False
    description: str = ""
    n: int
    failures: Policy
    coverage: Coverage | None = None
    n_scored: int | None = None
    macro_classes: list[str] | None = None
    n_other: int | None = None
    n_failed: int | None = None
    per_class: dict[str, ClassScores] | None = None
    confusion_matrix: ConfusionMatrix | None = None
    ci95: dict[str, Interval] | None = None
    n_invalid_probabilities: int | None = None
    n_with_probabilities: int | None = None
    roc_auc_ovr: float | None = None
    ece: float | None = None
    reliability: list[ReliabilityBin] | None = None


class RunCoverage(Coverage):
    """Answers over the whole run; with repeats, ``answered_per_repeat`` and the mean fraction."""

    predicted: int
    no_label: int
    no_label_reasons: dict[str, int] = {}
    invalid_probabilities: int = 0
    invalid_probability_ids: list[str] = []
    answered_per_repeat: list[int] | None = None


class GroupScores(LogPart):
    """One group of a breakdown (``rwpost.evaluate.breakdowns.group_scores``)."""

    n: int
    accuracy: float
    macro_f1: float
    weighted_f1: float


class LedgerTotals(LogPart):
    """Calls, tokens, latency and cost of some calls (``rwpost.evaluate.ledger``)."""

    calls: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    list_cost_usd: float = 0.0
    unpriced_calls: int = 0
    cache_hits: int = 0


class PerSampleLedger(LogPart):
    """The run's ledger divided by its samples."""

    calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    list_cost_usd: float = 0.0


class Ledger(LedgerTotals):
    """The run's ledger: totals, per call name, per agent and per sample."""

    samples: int = 0
    by_name: dict[str, LedgerTotals] = {}
    by_agent: dict[str, LedgerTotals] = {}
    per_sample: PerSampleLedger = PerSampleLedger()


class EvidenceUrlScores(LogPart):
    """Cited evidence URLs against the gold ones (``rwpost.evaluate.explanations``)."""

    samples_citing: int
    samples_with_gold_urls: int
    macro_precision: float | None = None
    macro_recall: float | None = None
    micro_precision: float | None = None
    micro_recall: float | None = None


class KeyPointCoverage(LogPart):
    samples: int
    threshold: float
    mean_similarity: float | None = None
    coverage: float | None = None
    not_scored: str | None = None
    """Why there is no figure: no answer explains a sample with gold key points, or the local embedding
    model (the ``[embed]`` extra) is not installed."""


class ExplanationScores(LogPart):
    evidence_urls: EvidenceUrlScores
    key_points: KeyPointCoverage | None = None
    """Only when the run was scored with an encoder."""


class Audit(LogPart):
    """The leakage audit: predictions citing a blocked domain, and the scores without them."""

    flagged: int = 0
    flagged_ids: list[str] = []
    domains: dict[str, int] = {}
    views_excluding_flagged: dict[str, ViewScores] | None = None
    excluding_flagged: Headline | None = None
    """The primary view's headline without the flagged predictions (only when some are flagged)."""


class Spread(LogPart):
    """A metric over repeated runs (``rwpost.evaluate.metrics.spread``)."""

    mean: float
    std: float
    min: float
    max: float
    values: list[float]


class Repeats(LogPart):
    """A repeated run: the headline keys are the mean over the repeats; the views are repeat 0's."""

    n: int
    headline: dict[str, Spread] = {}
    views: dict[str, dict[str, Spread]] = {}
    """Every view's headline metrics over the repeats (views with samples)."""
    headline_is: str = "mean over repeats"
    details_of: str = "repeat 0 (views, per class, breakdowns)"


class RunScores(Headline):
    """Everything measured about one run's predictions (``rwpost.evaluate.scoring.score_run``): the
    headline keys are the primary view's (absent when no view has samples)."""

    primary_view: str | None = None
    roc_auc_ovr: float | None = None
    ece: float | None = None
    failures: Policy
    n_samples: int
    coverage: RunCoverage
    views: dict[str, ViewScores]
    breakdowns: dict[str, dict[str, GroupScores]]
    ledger: Ledger
    explanations: ExplanationScores
    audit: Audit
    repeats: Repeats | None = None


class RunMetrics(LogFile, RunScores):
    """``metrics.json``: the run's name and setting, and its scores."""

    system: str
    detector: str
    setting: str
    input_problems: dict[str, int] | None = None
    """Problem counts of a predictions file's input report (``input_report.json``)."""
    benchmark_scores: dict[str, dict[str, float]] | None = None
    """Another benchmark's own metrics as its evaluation script computes them (of repeat 0), by table."""

    def primary(self) -> ViewScores | None:
        """The view the headline comes from."""
        return self.views.get(self.primary_view) if self.primary_view else None

    def partial(self) -> bool:
        """Whether some sample has no answer."""
        return self.coverage.answered < self.coverage.total


# --- scored.jsonl ------------------------------------------------------------------------------------


class ScoredSample(LogPart):
    """One line of ``scored.jsonl``; with repeats, ``predicted_repeats`` holds every repeat's label."""

    id: str
    gold: Label | None = None
    predicted: Label | None = None
    correct: bool = False
    flagged: bool = False
    error: str | None = None
    ledger: LedgerTotals = LedgerTotals()
    predicted_repeats: list[Label | None] | None = None
    gold_class: str | None = None
    """On a benchmark: the gold in its own labels (``correct`` is then judged in them)."""
    predicted_class: str | None = None
    """On a benchmark: the answer in its own labels (None: a failure)."""


# --- manifest.json and run.json ----------------------------------------------------------------------


class TrainFile(LogPart):
    """Where the training samples came from: a file, or a seeded part of the data."""

    path: str | None = None
    sha256: str | None = None
    excluded_unlabelled: int | None = None
    split_of_data: str | None = None
    fraction: float | None = None
    benchmark: str | None = None
    """A benchmark's training split (``--train NAME/SPLIT:FOLDER``): its adapter and split."""
    split: str | None = None


class DataRecord(LogPart):
    """The evaluated data: the file as given (path, checksum, dataset version and subset of a pipeline
    run) and the samples scored."""

    path: str | None = None
    sha256: str | None = None
    excluded_unlabelled: int | None = None
    train: TrainFile | None = None
    version: str | None = None
    subset: str | None = None
    split: str | None = None
    benchmark: str | None = None
    denominators: Literal["ours", "authors"] | None = None
    """``authors``: only the claims the authors' loader keeps were scored; ``left_out`` the others."""
    left_out: int | None = None
    """A benchmark folder's name (``--data NAME[/SPLIT]:FOLDER``); ``path`` is then its annotation file."""
    samples: int
    ids_sha256: str
    content_sha256: str


class TrainRecord(LogPart):
    samples: int
    ids_sha256: str
    content_sha256: str | None = None


class BlockListRecord(LogPart):
    """The leakage guard's block list (``BlockList.describe``)."""

    count: int
    sha256: str
    source: str | None = None


class LeakageRecord(LogPart):
    """What a retrieving detector's leakage guard dropped before the detector saw it."""

    block_list: BlockListRecord | None = None
    predictions: int = 0
    predictions_with_drops: int = 0
    dropped: int = 0
    by_reason: dict[str, int] = {}


class ImagesRecord(LogPart):
    """Image cells: images expected, missing and sent (``check_cell``)."""

    expected: int
    missing: int
    missing_ids: list[str] = []
    without_image: int = 0
    sent: int | None = None
    """Samples whose image the detector sent (to a model, or to a reverse image search), each counted
    once however many calls carried it; None: the detector does not read images."""


class RetrievalRecord(LogPart):
    """Open-web cells: the detector's tool calls (searches) over every answer of the run, how many got no
    answer, and the answers made without one working search (``never_worked``: all of them)."""

    tool_calls: int = 0
    failed: int = 0
    predictions: int = 0
    predictions_without_retrieval: int = 0
    never_worked: bool = False


class Environment(LogPart):
    """Python, platform and, when torch is loaded, the accelerator (``manifest.environment``)."""

    python: str
    platform: str
    torch: str | None = None
    cuda_available: bool | None = None
    cuda_device: str | None = None


class RunIdentity(LogPart):
    """What makes two runs the same (:func:`rwpost.evaluate.identity.run_identity`): the content of every
    input, each once."""

    predictions_sha256: str | None = None
    detector: str
    detector_config: dict[str, Any] = {}
    """The detector's options as resolved (``Detector.config()``)."""
    detector_code: dict[str, str] = {}
    """The detector's own code: the source hash of each module defining its class, by module name, and
    the version of a plug-in's distribution (``dist:<name>``): ``identity.detector_code``."""
    prompt_hashes: dict[str, str] = {}
    schema_hashes: dict[str, str] = {}
    setting: str
    seed: int
    repeats: int
    data_sha256: str | None = None
    samples_sha256: str
    train_data_sha256: str | None = None
    train_sha256: str | None = None
    blocked_domains_sha256: str | None = None
    code_version: str
    evidence_draw: tuple[Literal["rwpost", "authors"], int] | None = None
    """An evidence-k cell's draw: the sampler and its seed (absent in other cells)."""

    @model_validator(mode="before")
    @classmethod
    def _options_as_given(cls, data: Any) -> Any:
        """A log written before the options were recorded once: their copy as given is dropped."""
        return {k: v for k, v in data.items() if k != "config"} if isinstance(data, dict) else data

    def fingerprint(self) -> str:
        """The short hash of this identity (``run.json``'s ``fingerprint``; the manifest's
        ``run_fingerprint``)."""
        from rwpost.evaluate.manifest import fingerprint

        return fingerprint(self.dump())


class RunRecord(LogFile):
    """``run.json``: what the run is; it resumes only under the same fingerprint."""

    fingerprint: str
    identity: RunIdentity
    started: str


class RunSpecRecord(LogPart):
    """The spec of a run as the manifest records it (``runner.RunSpec`` less its secrets and tables)."""

    system: str
    detector: str
    detector_config: dict[str, Any] | list[dict[str, Any]] = {}
    """The detector's ``config()``; with repeats, one per repeat."""
    setting: str
    """The canonical cell name (T, T+I, T+E, T+I+E, T+W ...)."""
    setting_alias: str | None = None
    """The alias the run was asked for (``closed-book`` ...), once, when it was asked by one."""
    seed: int = 0
    repeats: int = 1
    failures: Policy = "wrong"
    batch_size: int = 16
    bootstrap_resamples: int = 1000
    batch_api: bool = False
    """Asked through the provider's Batch API first (``--batch-api``): the calls it answered are priced at
    its rate."""
    repeats_asked: int | None = None
    """``--repeats`` asked of a deterministic detector (``Capabilities.deterministic``), which ran once."""


class RunManifest(LogFile, RunSpecRecord):
    """``manifest.json``: the spec, the code, the data, the environment and how the run went."""

    code_version: str
    prompt_hashes: dict[str, str] = {}
    schema_hashes: dict[str, str] = {}
    device: str = "cpu"
    data: DataRecord
    train: TrainRecord | None = None
    blocked_domains: int = 0
    blocked_domain_list: BlockListRecord | None = None
    leakage: LeakageRecord | None = None
    notes: list[str] = []
    """What the detector says the report must show (``Detector.notes``)."""
    images: ImagesRecord | None = None
    retrieval: RetrievalRecord | None = None
    environment: Environment
    started: str
    finished: str
    resume: Literal["new", "resumed", "restarted"]
    retried_transport_failures: int | None = None
    """Samples a resumed run asked again because an earlier run's answer had failed for a transport
    reason (server error, rate limit, timeout, no connection): an outage is not an answer."""
    transport_failures: int | None = None
    """Answers of this run that failed for a transport reason: the same command asks them again."""
    mean_detector_wall_s_per_sample: float | None = None
    predictions_sha256: str | None = None
    """The content of the files the detector read (its ``inputs()``: a predictions file or folder)."""
    detector_code: dict[str, str] = {}
    """The detector's own code (:attr:`RunIdentity.detector_code`)."""
    evidence_draw: tuple[Literal["rwpost", "authors"], int] | None = None
    """An evidence-k cell's draw: the sampler and its seed."""
    run_fingerprint: str
    """The fingerprint of the run's identity (``run.json`` holds the identity itself; every fact of it is
    stated once in this manifest, above)."""

    @classmethod
    def of(cls, identity: RunIdentity, **facts: Any) -> RunManifest:
        """The manifest of a run of ``identity``: each fact the identity holds (:data:`IDENTITY_FACTS`)
        and its fingerprint taken from it, once; ``facts`` are the spec's and how the run went."""
        stated = {k: getattr(identity, k) for k in IDENTITY_FACTS}
        return cls(**stated, run_fingerprint=identity.fingerprint(), **facts)

    @model_validator(mode="before")
    @classmethod
    def _identity_stated_once(cls, data: Any) -> Any:
        """A manifest written when it repeated the whole identity: the copy is dropped."""
        return {k: v for k, v in data.items() if k != "identity"} if isinstance(data, dict) else data


IDENTITY_FACTS: tuple[str, ...] = (
    "code_version",
    "detector",
    "prompt_hashes",
    "schema_hashes",
    "setting",
    "seed",
    "repeats",
    "predictions_sha256",
    "detector_code",
    "evidence_draw",
)
"""The facts of :class:`RunIdentity` the manifest states (:meth:`RunManifest.of`); the content hashes of
the data and the training split are stated in its ``data`` and ``train`` records."""


# --- reading -----------------------------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def read_log(path: str | Path, model: type[M]) -> M:
    """A run's JSON file as ``model``; a file that does not read or fit is one RecordError naming it."""
    data = read_json(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message, where = validation_problem(exc)
        raise RecordError(message, source=str(path), field=where) from exc


LOG_MODELS: dict[str, type[BaseModel]] = {
    "run_record": RunRecord,
    "run_manifest": RunManifest,
    "run_metrics": RunMetrics,
    "scored_sample": ScoredSample,
}
"""Every file of the run log by schema file name (``schemas/<name>.schema.json``)."""
