"""The detector contract: what a misinformation detector declares, receives and returns (paper sections IV-V).

A detector subclasses :class:`Detector` and declares three things as class attributes: its ``name``, its
:class:`Capabilities` (searches the web, reads images, needs training, uses a GPU) and a pydantic
``Config`` (its options, validated once when it is built: a wrong key or type is one error naming it).
The runner then calls ``prepare(ctx)`` before it writes anything (a detector refuses there what would
fail every sample, such as a missing API key), ``fit(samples, task, ctx)`` (only when it needs training)
and ``predict(samples, task, ctx)`` with batches of *blinded* samples (no label, rationale or key points,
no article URL, slug or image link; gold evidence as content only, and only where the cell allows), the
:class:`~rwpost.evaluate.task.EvalTask` (cell, label space, failure policy) and one :class:`RunContext`
(seed, leakage guard, images, secrets, prices). ``predict`` returns one :class:`Prediction` per sample: a
label, optional class probabilities, an explanation, the evidence URLs it used and a ledger of its model
and tool calls. ``config()`` (the options as resolved) goes into the run manifest and, with
``inputs()`` (files read, prompt and schema hashes), into the run identity: a run resumes only when all
are identical. Batching, resume, progress, metrics and reports are the runner's job.

A complete detector, run by ``tests/test_evaluate_contract.py`` through the real runner::

    from collections import Counter

    from pydantic import BaseModel, ConfigDict

    from rwpost.evaluate.contract import Capabilities, Detector, Prediction


    class KeywordVote(Detector):
        \"\"\"Each claim word votes for the labels it was seen with in training; ties go to the prior.\"\"\"

        name = "keyword-vote"
        capabilities = Capabilities(needs_training=True)

        class Config(BaseModel):
            model_config = ConfigDict(extra="forbid")
            min_count: int = 1
            \"\"\"Words seen fewer times than this in training do not vote.\"\"\"

        def fit(self, samples, task, ctx):
            self.prior = Counter(s.label for s in samples)
            self.votes = {}
            for s in samples:
                for word in set(s.claim.lower().split()):
                    self.votes.setdefault(word, Counter())[s.label] += 1

        def predict(self, samples, task, ctx):
            out = []
            for s in samples:
                tally = Counter()
                for word in set(s.claim.lower().split()):
                    seen = self.votes.get(word, Counter())
                    if sum(seen.values()) >= self.options.min_count:
                        tally.update(seen)
                scores = {x: tally[x] + self.prior[x] / 1000 for x in task.labels}
                total = sum(scores.values()) or 1.0
                label = max(scores, key=scores.get)
                probabilities = {x: v / total for x, v in scores.items()}
                out.append(Prediction(id=s.id, label=label, probabilities=probabilities))
            return out

Register it under a name with an entry point (group ``rwpost.detectors``) or run it as
``--detector my_module:KeywordVote``. The value of the entry point is the class, as in
``keyword-vote = "my_module:KeywordVote"``; labels are :class:`rwpost.labels.Label` values (or their names).

A detector that asks a model declares typed model settings (a ``Config`` subclassing
:class:`ModelOptions`) and gets the model from the run (:meth:`RunContext.model`): the connection comes from
the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``--model``) as for every built-in, the key never
written anywhere; what it records in the sample's :meth:`RunContext.transcript` becomes the ledger. Also
run by ``tests/test_evaluate_plugins.py``, against the loopback LLM server::

    from rwpost.evaluate.contract import Detector, ModelOptions, Prediction
    from rwpost.llm import LLMRequest


    class AskModel(Detector):
        \"\"\"Asks the run's model for each claim's label, in the task's label space.\"\"\"

        name = "ask-model"

        class Config(ModelOptions):
            system: str = "You check claims. Give the claim's label."
            \"\"\"The system prompt (an option: it enters the run identity).\"\"\"

        def prepare(self, ctx):
            ctx.model()  # no key and no server: refused before anything is written

        def predict(self, samples, task, ctx):
            model = ctx.model()
            label = {"type": "string", "enum": task.label_names}
            schema = {"type": "object", "properties": {"label": label}, "required": ["label"]}
            requests = [
                LLMRequest(s.id, "ask", self.options.system, s.claim, schema, "verdict", "ask-model.v1")
                for s in samples
            ]
            out = []
            for s, answer in zip(samples, model.run(requests)):
                ctx.transcript(s.id).answered(answer, model.name)  # its ledger row
                label = (answer.data or {}).get("label")
                out.append(Prediction(id=s.id, label=label, error=answer.error))
            return out
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from rwpost.errors import ConfigError
from rwpost.evaluate.inputs import image_input
from rwpost.evaluate.leakage import DROPPED, LeakageGuard, SearchResult, dropped_report
from rwpost.labels import Label
from rwpost.llm.config import LLMSettings
from rwpost.records import Sample

if TYPE_CHECKING:
    from rwpost.evaluate.task import EvalTask


# --- option types every detector (and the run's own options) share ---------------------------------

SEED_MAX = 2**31 - 1
"""The largest seed: numpy and scikit-learn take 32-bit seeds, and repeat i of a run uses seed + i."""

Seed = Annotated[int, Field(ge=0, le=SEED_MAX)]
"""A seed (0 to :data:`SEED_MAX`)."""

EVIDENCE_K_MAX = 1000
"""The largest evidence-k: far above any claim's gold evidence count (a larger k would read as all of it)."""

EvidenceK = Annotated[int, Field(ge=1, le=EVIDENCE_K_MAX)]
"""Gold evidence items per claim in an evidence-k cell (1 to :data:`EVIDENCE_K_MAX`)."""

_PROMPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _prompt_name(name: str) -> str:
    if not _PROMPT_NAME.fullmatch(name) or ".." in name:
        raise ValueError(
            f"expected the name of a prompt in rwpost/prompts/ (e.g. detect_zero_shot.v2), not {name!r}"
        )
    return name


PromptName = Annotated[str, AfterValidator(_prompt_name)]
"""The name of a prompt file of ``rwpost/prompts/`` (without ``.md``); never a path out of that folder."""

Temperature = Annotated[float, Field(ge=0, le=2)]
"""A sampling temperature, 0 to 2 as OpenAI-compatible servers take it."""


def check_option(name: str, value: Any, kind: Any) -> Any:
    """``value`` of the option ``name`` (``--seed``) validated as ``kind`` (:data:`Seed`, :data:`EvidenceK`);
    otherwise one :class:`ConfigError` naming the option, before anything is written."""
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        raise ConfigError(f"{name}: {exc.errors()[0]['msg']}, got {value}") from None


class Call(BaseModel):
    """One model or tool call a detector made for a sample: the ledger's unit."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(default="model", description="'model' (LLM, VLM, encoder) or 'tool' (search, fetch)")
    name: str = Field(description="model name or tool name; the price table is keyed by it")
    agent: str | None = Field(
        default=None,
        description="the agent or step of a multi-agent detector that made the call (e.g. 'agent-sp'); "
        "the ledger also totals calls by it",
    )
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = Field(default=None, description="if None, the price table prices it")
    cached: bool = False
    failed: bool = Field(
        default=False,
        exclude_if=lambda failed: not failed,
        description="a tool call that got no answer (a search the backend could not serve after its "
        "retries): the manifest counts them, and an open-web run whose every search failed is refused",
    )

    @classmethod
    def of_result(cls, result: Any, name: str, **fields: Any) -> Call:
        """The ledger row of one model answer (a :class:`rwpost.llm.ChatResult`): its tokens, latency and
        cache hit; ``fields`` (``agent``, ``cost_usd``, ``latency_s`` ...) set or override the rest."""
        row = {
            "tokens_in": result.prompt_tokens,
            "tokens_out": result.completion_tokens,
            "latency_s": result.latency_s,
            "cached": result.cached,
        }
        return cls(kind="model", name=name, **(row | fields))


RUN_ROW_FIELDS = ("repeat", "wall_s")
"""What a row of ``predictions.jsonl`` adds to a :class:`Prediction`: the repeat and the wall time."""


class Prediction(BaseModel):
    """A detector's output for one sample."""

    model_config = ConfigDict(extra="forbid")

    id: str
    label: Label | None = Field(default=None, description="None when the detector gave no usable answer")
    probabilities: dict[Label, float] | None = None
    explanation: str | None = None
    evidence_urls: list[str] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why there is no label (parse failure, missing row)")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Prediction:
        """The prediction of one ``predictions.jsonl`` row (its repeat and wall time left out)."""
        return cls.model_validate({k: v for k, v in row.items() if k not in RUN_ROW_FIELDS})


class Capabilities(BaseModel):
    """What a detector can do; the runner refuses a cell the detector cannot run honestly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retrieves: bool = False
    """Searches the web itself (through :attr:`RunContext.guard`): required for the open-web cells."""
    reads_images: bool = False
    """Its answers depend on the image: an image cell with unloadable images is refused up front."""
    needs_training: bool = False
    """Learns from labelled samples: the runner calls :meth:`Detector.fit` (``--train`` is required)."""
    uses_gpu: bool = False
    """Runs a local model that uses a GPU when there is one (its :attr:`Detector.device` says which)."""
    deterministic: bool = False
    """Its answers do not depend on the run's seed (a majority vote, a fixed solver, a predictions file):
    ``--repeats N`` runs it once, and the report says so (N identical repeats would show ``± 0.000``)."""


class DetectorInputs(BaseModel):
    """What a detector reads besides the samples, for the run identity (a change refuses a resume)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    files: tuple[str, ...] = ()
    """Files read (a run never writes its outputs over one of them)."""
    sha256: str | None = None
    """Checksum of the content of ``files`` (a predictions file or folder)."""
    prompts: dict[str, str] = Field(default_factory=dict)
    """Prompt file hashes by prompt name."""
    schemas: dict[str, str] = Field(default_factory=dict)
    """Answer schema hashes by schema name."""


@dataclass
class Trace:
    """One sample's transcript: ledger rows (:class:`Call`) of every model and tool call, the results the
    leakage guard dropped (each also a zero-cost ledger row naming its reason) and the images sent to a
    model. :meth:`RunContext.transcript` gives one per sample; agentic detectors keep theirs in it."""

    calls: list[Call] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    images_sent: int = 0

    def answered(self, result: Any, model: str, *, agent: str | None = None, images: int = 0) -> None:
        """The ledger row of one model answer (:class:`~rwpost.llm.ChatResult`) with ``images`` sent."""
        self.images_sent += images
        self.calls.append(Call.of_result(result, model, agent=agent))

    def drop(self, url: str, reason: str, **where: str) -> None:
        """A result set aside before any agent saw it: kept with its reason (and ``where``: the tool or
        query), and a zero-cost ledger row the leakage report counts."""
        self.dropped.append({"url": url, "reason": reason, **where})
        self.calls.append(Call(kind="tool", name=f"{DROPPED}{reason}", cost_usd=0.0))

    def screen(
        self, guard: LeakageGuard, results: list[SearchResult], claim_time: date | None, **where: str
    ) -> list[SearchResult]:
        """The results ``guard`` keeps; each dropped one is recorded (:meth:`drop`)."""
        screened = guard.screen(results, claim_time)
        for dropped in screened.dropped:
            self.drop(dropped.result.url, dropped.reason, **where)
        return screened.kept


class NoTools:
    """The tools of a context built without them: any use is refused in one line."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ConfigError(
            "this RunContext has no search tools: build it with rwpost.evaluate.toolkit.tools.run_context "
            "(the run does)"
        )


@dataclass
class RunContext:
    """Run-wide inputs of one repeat, the same for every batch: handed to ``fit`` and ``predict``."""

    seed: int = 0
    """The repeat's seed (the run's seed + the repeat index): every random draw of the detector uses it."""
    guard: LeakageGuard = field(default_factory=LeakageGuard)
    """The run's one leakage guard: every search result passes :meth:`LeakageGuard.screen`."""
    image_root: Path | None = None
    """Where relative image paths of the samples are found (:meth:`image`)."""
    secrets: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Credentials (``api_key``): never written anywhere, not part of the run's identity."""
    prices: Any = None
    """The run's :class:`~rwpost.evaluate.ledger.PriceTable`, which prices the ledger's calls (a detector
    may budget with it)."""
    progress: bool = False
    """Whether progress is shown (a detector with a long inner loop may show its own bar)."""
    repeat: int = 0
    images_sent: int = 0
    """Images the detector sent to a model (it counts them with :meth:`sent_images`; in the manifest)."""
    options: Any = None
    """The detector's options (set by the runner): :meth:`model` builds the model their settings name."""
    cell: Any = None
    """The run's input cell (:class:`~rwpost.evaluate.task.Cell`), so ``prepare`` can refuse what only
    this cell needs (a search key for an open-web cell)."""
    transcripts: dict[str, Trace] = field(default_factory=dict, repr=False)
    """The samples' transcripts of the batch being asked (:meth:`transcript`)."""
    models: dict[tuple[Any, bool], Any] = field(default_factory=dict, repr=False)
    """The models :meth:`model` built, by settings and vision: each is built once a repeat."""
    tools: Any = field(default_factory=lambda: NoTools(), repr=False)
    """The run's search and image tools, already behind :attr:`guard`
    (:class:`~rwpost.evaluate.toolkit.tools.WebTools`): built by the run from the detector's typed search
    settings (``search``, ``wikipedia``, ``image_search``, their ``*_options``, ``results_per_query``);
    ``tools.search()``, ``tools.wikipedia()``, ``tools.reverse_image()`` give a ready tool, and
    ``tools.backend(field)`` a plug-in (its key read from the environment; refused in one line without
    it). A context made by hand gets them from :func:`rwpost.evaluate.toolkit.tools.run_context`."""

    def model(self, settings: ModelOptions | str | None = None, *, vision: bool = False) -> Any:
        """The :class:`~rwpost.llm.chat.ChatModel` the detector's typed model settings name: its options
        (None), their field ``settings`` (a role's name), or the :class:`ModelOptions` given. An API model
        gets the run's key from :attr:`secrets` (refused in one line without a key or a server), a local
        one (:attr:`ModelOptions.local`) is loaded, seeded by :attr:`seed`; either caches its answers at
        the settings' ``cache_path`` when they have one; ``vision`` refuses a local model that reads no
        images. Built once a repeat; call it in ``prepare`` to refuse before anything is written."""
        chosen = getattr(self.options, settings, None) if isinstance(settings, str) else settings
        chosen = self.options if settings is None else chosen
        if not isinstance(chosen, ModelOptions):
            where = f"option {settings!r}" if isinstance(settings, str) else "the detector's options"
            raise ConfigError(f"{where}: not model settings (a Config subclassing ModelOptions)")
        key = (settings if isinstance(settings, str) else id(chosen), vision)
        if key not in self.models:
            cache = getattr(chosen, "cache_path", None)
            self.models[key] = chosen.chat_model(
                self.secrets, cache_path=cache, seed=self.seed, vision=vision
            )
        return self.models[key]

    def transcript(self, key: str) -> Trace:
        """The transcript of sample ``key`` (made on first use): what the detector records there (model
        answers with :meth:`Trace.answered`, guard drops with :meth:`Trace.screen`) becomes the ledger
        rows of its prediction when the prediction carries none itself, and its images are counted."""
        return self.transcripts.setdefault(key, Trace())

    def image(self, sample: Sample) -> Any:
        """The sample's image (:class:`rwpost.llm.ImageInput`) from its bytes or file; None if neither."""
        return image_input(sample, self.image_root)

    def sent_images(self, n: int = 1) -> None:
        """Count ``n`` images sent to a model."""
        self.images_sent += n


class NoOptions(BaseModel):
    """The ``Config`` of a detector without options."""

    model_config = ConfigDict(extra="forbid")


class Detector:
    """Base of every detector: override ``predict`` (and ``fit`` when ``capabilities.needs_training``)."""

    name: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()
    Config: ClassVar[type[BaseModel]] = NoOptions
    device: str = "cpu"
    """Where the detector runs (``cpu``, ``cuda``, ``remote (<url>)``), for the manifest."""

    def __init__(self, config: BaseModel | None = None) -> None:
        self.options: Any = self.Config() if config is None else config

    @classmethod
    def build(cls, options: Mapping[str, Any] | None = None) -> Detector:
        """The detector with ``options`` validated by its ``Config`` (one error naming the bad option)."""
        try:
            config = cls.Config.model_validate(dict(options or {}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()[:3]
            )
            given = ", ".join(sorted(options or {})) or "none"  # names only: values may hold a key
            raise ConfigError(
                f"detector {cls.name!r}: bad configuration ({problems}); options given: {given}"
            ) from None
        return cls(config)

    def config(self) -> dict[str, Any]:
        """The options that make two runs comparable, as resolved (JSON-able; in the manifest)."""
        return self.options.model_dump(mode="json")

    def inputs(self) -> DetectorInputs:
        """Files and prompt/schema hashes that enter the run identity besides :meth:`config`."""
        return DetectorInputs()

    def fit(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> None:
        """Learn from labelled training samples (blinded as the evaluated ones, the label kept)."""

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        """One prediction per sample, in any order, ids matching the samples."""
        raise NotImplementedError(f"detector {self.name!r} does not implement predict()")

    def prepare(self, ctx: RunContext) -> None:
        """Refuse (:class:`~rwpost.errors.ConfigError`) what would fail every sample, such as a missing API
        key: the runner calls this before it writes anything, so a refused run leaves its folder as it was."""

    def check(self, samples: Sequence[Sample]) -> dict[str, Any] | None:
        """A JSON-able report of problems with the detector's own inputs against the evaluated samples
        (unknown, missing or duplicate ids of a predictions file); None when there is nothing to check."""
        return None

    def leakage_report(self, predictions: Sequence[Prediction], ctx: RunContext) -> dict[str, Any] | None:
        """What the leakage guard dropped over ``predictions`` (a retrieving detector), for the manifest:
        counted from their drop rows (:func:`~rwpost.evaluate.leakage.dropped_report`); None for a detector
        that does not retrieve."""
        return dropped_report(predictions, ctx.guard) if self.capabilities.retrieves else None

    def notes(self, predictions: Sequence[Prediction], task: EvalTask, ctx: RunContext) -> list[str]:
        """Lines the run's report must show about how the detector ran (a profile, an ablation, an agent
        switched off for want of a backend); in the manifest (``notes``) and at the top of ``report.md``."""
        return []


class ModelOptions(BaseModel):
    """Options of a detector that calls an OpenAI-compatible model: the connection is one ``llm`` field
    (:class:`rwpost.llm.LLMSettings`). Its keys may also be given flat (``model=...``, as ``--set`` and
    ``--model`` do); they are gathered into ``llm``. The API key comes from :attr:`RunContext.secrets`.
    ``rwpost.evaluate.detectors.chat.ChatOptions`` adds the backend (API or a local model folder)."""

    model_config = ConfigDict(extra="forbid")

    llm: LLMSettings

    @model_validator(mode="before")
    @classmethod
    def _gather_connection(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        names = {f.name for f in dataclasses.fields(LLMSettings)}
        flat = {k: v for k, v in data.items() if k in names}
        if not flat:
            return data
        nested = data.get("llm")
        given = dataclasses.asdict(nested) if isinstance(nested, LLMSettings) else dict(nested or {})
        return {**{k: v for k, v in data.items() if k not in names}, "llm": {**given, **flat}}

    @field_validator("llm")
    @classmethod
    def _sensible_connection(cls, llm: LLMSettings) -> LLMSettings:
        """Connection settings that can work: a time limit above 0, at least one request in flight and
        no negative retry count (each refused naming its option)."""
        if not (llm.timeout_s > 0 and math.isfinite(llm.timeout_s)):
            raise ValueError(f"timeout_s must be a number of seconds above 0, got {llm.timeout_s}")
        if llm.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {llm.concurrency}")
        if llm.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {llm.max_retries}")
        return llm

    def connection(self, secrets: Mapping[str, Any]) -> LLMSettings:
        """The connection settings with the run's API key (from the secrets, never from the options)."""
        return dataclasses.replace(self.llm, api_key=secrets.get("api_key") or self.llm.api_key)

    @property
    def local(self) -> bool:
        """Whether the model runs in this process (a GPU when there is one) rather than behind an API."""
        return False

    def answer_limit(self, max_tokens: int | None) -> int | None:
        """A request's token limit: ``max_tokens`` for an API model; None for a local one (its own
        ``max_new_tokens`` bounds every answer)."""
        return None if self.local else max_tokens

    def chat_model(
        self,
        secrets: Mapping[str, Any],
        *,
        cache_path: str | None = None,
        seed: int = 0,
        vision: bool = False,
    ) -> Any:  # noqa: ARG002 (seed and vision are a local model's)
        """The :class:`~rwpost.llm.chat.ChatModel` of the API of ``llm``, with the run's key, its answers
        cached at ``cache_path`` (refused without a key or a base URL)."""
        from rwpost.llm import ApiChatModel, client_from

        return ApiChatModel(client_from(self.connection(secrets), cache_path=cache_path))


__all__ = [
    "EVIDENCE_K_MAX",
    "SEED_MAX",
    "Call",
    "Capabilities",
    "Detector",
    "DetectorInputs",
    "EvidenceK",
    "ModelOptions",
    "NoOptions",
    "Prediction",
    "PromptName",
    "RunContext",
    "Seed",
    "Temperature",
    "Trace",
    "check_option",
]
