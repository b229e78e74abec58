"""The detector contract: what a misinformation detector declares, receives and returns (paper sections IV-V).

A detector subclasses :class:`Detector` and declares three things as class attributes: its ``name``, its
:class:`Capabilities` (searches the web, reads images, needs training, uses a GPU) and a pydantic
``Config`` (its options, validated once when it is built: a wrong key or type is one error naming it);
a detector whose answers are a fixed set of labels declares them too (``labels``: a task whose label space
holds another is refused before anything is written, and an answer outside them fails its sample).
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

import ast
import dataclasses
import inspect
import math
import re
import textwrap
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

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

TEMPERATURE_MAX = 2.0
"""The largest sampling temperature OpenAI-compatible servers take."""

Temperature = Annotated[float, Field(ge=0, le=TEMPERATURE_MAX)]
"""A sampling temperature, 0 to :data:`TEMPERATURE_MAX` as OpenAI-compatible servers take it."""

RESULTS_PER_QUERY_MAX = 100
"""The most results a search call shows (a search API's largest page; more is unbounded prompt cost)."""

ResultsPerQuery = Annotated[int, Field(ge=1, le=RESULTS_PER_QUERY_MAX)]
"""Results a search call shows (1 to :data:`RESULTS_PER_QUERY_MAX`): every searching detector's
``results_per_query``."""


def _model_folder(path: str) -> str:
    from rwpost.llm.local import require_model_folder

    try:
        require_model_folder(path)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return path


ModelFolder = Annotated[str, AfterValidator(_model_folder)]
"""A local Hugging Face model folder (one holding ``config.json``), checked when the options are built."""


def check_option(name: str, value: Any, kind: Any) -> Any:
    """``value`` of the option ``name`` (``--seed``) validated as ``kind`` (:data:`Seed`, :data:`EvidenceK`);
    otherwise one :class:`ConfigError` naming the option, before anything is written."""
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        raise ConfigError(f"{name}: {exc.errors()[0]['msg']}, got {value}") from None


def parse_options(pairs: Sequence[str] | None, option: str = "--set") -> dict[str, Any]:
    """``key=value`` detector options into a dict; a value is read as JSON when it can be (numbers,
    bools, lists), else kept as text. One :class:`ConfigError` naming ``option`` for a pair without ``=``."""
    import json

    config: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"{option} expects key=value, got {pair!r}")
        try:
            config[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            config[key.strip()] = value
        except RecursionError:  # [ x 100000: not a value any option takes
            raise ConfigError(f"{option} {key.strip()}: JSON nested too deeply") from None
    return config


@dataclass(frozen=True)
class OptionDoc:
    """One option a detector's ``Config`` takes: what ``--help-options`` lists and a refusal names."""

    name: str
    type: str
    default: str
    """``required`` when it has none."""
    description: str


def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a class and its bases (a base's first, so a subclass's
    own wins), by field name."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in ("builtins", "pydantic.main"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # no source (built on the fly): no descriptions
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field_node, doc in zip(body, body[1:], strict=False):
            if (
                isinstance(field_node, ast.AnnAssign)
                and isinstance(field_node.target, ast.Name)
                and isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                docs[field_node.target.id] = " ".join(inspect.cleandoc(doc.value.value).split())
    return docs


def _type_name(annotation: Any) -> str:
    """A field's type as a user writes its value: ``int``, ``str | None``, ``'api' | 'local'``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    if annotation is Ellipsis:
        return "..."
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


def option_docs(config: type[BaseModel]) -> list[OptionDoc]:
    """Every option ``config`` (a detector's ``Config``) accepts, as ``--set NAME=VALUE`` takes it: name,
    type, default and description (the field's ``description``, else the docstring under it). The
    connection of a :class:`ModelOptions` is listed by its flat keys (``model``, ``base_url``, ...)."""
    docs = _attribute_docs(config)
    found: list[OptionDoc] = []
    for name, info in config.model_fields.items():
        if isinstance(info.annotation, type) and dataclasses.is_dataclass(info.annotation):
            inner = _attribute_docs(info.annotation)
            for f in dataclasses.fields(info.annotation):
                if f.default is not dataclasses.MISSING:
                    default = repr(f.default)
                elif f.default_factory is not dataclasses.MISSING:
                    default = repr(f.default_factory())
                else:
                    default = "required"
                found.append(OptionDoc(f.name, _type_name(f.type), default, inner.get(f.name, "")))
            continue
        default = "required" if info.is_required() else repr(info.get_default(call_default_factory=True))
        text = info.description or docs.get(name, "")
        found.append(OptionDoc(info.alias or name, _type_name(info.annotation), default, text))
    return found


def options_text(detector: str, config: type[BaseModel]) -> str:
    """``--help-options``: one line per option of ``detector`` (name, type, default, description)."""
    docs = option_docs(config)
    if not docs:
        return f"detector {detector!r} takes no options"
    width = max(len(d.name) for d in docs)
    lines = [f"options of detector {detector!r} (--set NAME=VALUE):"]
    for d in docs:
        about = f"  {d.description}" if d.description else ""
        lines.append(f"  {d.name:<{width}}  {d.type} = {d.default}{about}")
    return "\n".join(lines)


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
    """1 once the sample's image reached a model (however many calls carried it), else 0: the run's
    images sent are counted per sample, against the samples with an image."""
    tool_failures: list[str] = field(default_factory=list)
    """Tool calls that failed for good and that the sample went on without (each also a ledger row
    marked ``failed``), with their reasons."""
    outage: str | None = None
    """Set once a model call of the sample failed for good at the transport level (the client's retries
    spent): the sample's other calls are not asked, and it fails with this reason."""

    def answered(
        self, result: Any, model: str, *, agent: str | None = None, images: int = 0, **fields: Any
    ) -> Call:
        """The ledger row of one model answer (:class:`~rwpost.llm.ChatResult`) with ``images`` sent
        (the sample's image, sent with many calls, counts once: :attr:`images_sent`); ``fields`` set or
        override the row's others (a local model's ``cost_usd=0.0``, a batch's share of ``latency_s``).
        Returns the row."""
        if images:
            self.images_sent = 1
        call = Call.of_result(result, model, agent=agent, **fields)
        self.calls.append(call)
        return call

    def set_aside(self, name: str) -> Call:
        """The zero-cost ledger row of one result set aside before any agent saw it, ``name`` saying by
        what and why (the leakage guard's ``leakage-guard:dropped:<reason>``, a tool's own source filter's
        ``<tool>:excluded:<reason>``). Returns the row."""
        call = Call(kind="tool", name=name, cost_usd=0.0)
        self.calls.append(call)
        return call

    def drop(self, url: str, reason: str, **where: str) -> None:
        """A result set aside before any agent saw it: kept with its reason (and ``where``: the tool or
        query), and a zero-cost ledger row the leakage report counts."""
        self.dropped.append({"url": url, "reason": reason, **where})
        self.set_aside(f"{DROPPED}{reason}")

    def screen(
        self, guard: LeakageGuard, results: list[SearchResult], claim_time: date | None, **where: str
    ) -> list[SearchResult]:
        """The results ``guard`` keeps; each dropped one is recorded (:meth:`drop`)."""
        screened = guard.screen(results, claim_time)
        for dropped in screened.dropped:
            self.drop(dropped.result.url, dropped.reason, **where)
        return screened.kept


T = TypeVar("T", bound=Trace)


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
    """Credentials (``api_key``) and the run's default answer cache (``answer_cache``): never written
    anywhere, not part of the run's identity (a cache changes no answer)."""
    prices: Any = None
    """The run's :class:`~rwpost.evaluate.ledger.PriceTable`, which prices the ledger's calls (a detector
    may budget with it)."""
    progress: bool = False
    """Whether progress is shown (a detector with a long inner loop may show its own bar)."""
    repeat: int = 0
    images_sent: int = 0
    """Samples whose image the detector sent (it counts them with :meth:`sent_images`; in the manifest)."""
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
        images. An API model whose settings name no ``cache_path`` caches its answers in the run's default
        answer cache (``answer_cache`` of :attr:`secrets`, set by the edge:
        :func:`rwpost.llm.config.answer_cache_from_env`), so a rerun after a kill asks only for what it had
        not got. Built once a repeat; call it in ``prepare`` to refuse before anything is written."""
        chosen = getattr(self.options, settings, None) if isinstance(settings, str) else settings
        chosen = self.options if settings is None else chosen
        if not isinstance(chosen, ModelOptions):
            where = f"option {settings!r}" if isinstance(settings, str) else "the detector's options"
            raise ConfigError(f"{where}: not model settings (a Config subclassing ModelOptions)")
        key = (settings if isinstance(settings, str) else id(chosen), vision)
        if key not in self.models:
            cache = getattr(chosen, "cache_path", None)
            if cache is None and not chosen.local:
                cache = self.secrets.get("answer_cache")
            self.models[key] = chosen.chat_model(
                self.secrets, cache_path=cache, seed=self.seed, vision=vision
            )
        return self.models[key]

    def transcript(self, key: str, kind: type[T] = Trace) -> T:  # type: ignore[assignment]
        """The transcript of sample ``key`` (made on first use, a ``kind``: a detector's own subclass of
        :class:`Trace` when it keeps more per sample): what the detector records there (model answers with
        :meth:`Trace.answered`, guard drops with :meth:`Trace.screen`) becomes the ledger rows of its
        prediction when the prediction carries none itself, and its images are counted."""
        trace = self.transcripts.setdefault(key, kind())
        if not isinstance(trace, kind):
            raise TypeError(f"the transcript of {key!r} is a {type(trace).__name__}, not a {kind.__name__}")
        return trace

    def image(self, sample: Sample) -> Any:
        """The sample's image (:class:`rwpost.llm.ImageInput`) from its bytes or file; None if neither."""
        return image_input(sample, self.image_root)

    def sent_images(self, n: int = 1) -> None:
        """Count ``n`` samples whose image was sent (to a model, or to a reverse image search), each once
        however many calls carried it: the report sets them against the samples with an image."""
        self.images_sent += n


class NoOptions(BaseModel):
    """The ``Config`` of a detector without options."""

    model_config = ConfigDict(extra="forbid")


class Detector:
    """Base of every detector: override ``predict`` (and ``fit`` when ``capabilities.needs_training``)."""

    name: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()
    Config: ClassVar[type[BaseModel]] = NoOptions
    labels: ClassVar[tuple[Label, ...] | None] = None
    """The labels the detector answers when they are fixed (an agent whose own verdicts map to RW-Post's):
    the runner refuses a task whose label space holds any other before anything is written, and an answer
    outside them fails its sample. None: it answers in the task's label space (:attr:`EvalTask.labels`)."""
    labels_hint: ClassVar[str] = ""
    """What to evaluate instead, said when a task's label space is refused."""
    device: str = "cpu"
    """Where the detector runs (``cpu``, ``cuda``, ``remote (<url>)``), for the manifest."""

    def __init__(self, config: BaseModel | None = None) -> None:
        self.options: Any = self.Config() if config is None else config

    @classmethod
    def build(cls, options: Mapping[str, Any] | None = None) -> Detector:
        """The detector with ``options`` validated by its ``Config`` (one error naming the bad option)."""
        return cls(cls.checked_config(options))

    @classmethod
    def checked_config(cls, options: Mapping[str, Any] | None = None) -> BaseModel:
        """``options`` validated by the ``Config``, without building the detector: one error naming the bad
        option (a sharded run checks each run's options so before any shard starts)."""
        try:
            return cls.Config.model_validate(dict(options or {}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()[:3]
            )
            given = ", ".join(sorted(options or {})) or "none"  # names only: values may hold a key
            valid = ""
            if any(e["type"] == "extra_forbidden" for e in exc.errors()):  # a misspelt or foreign option
                valid = "; valid options: " + (", ".join(d.name for d in option_docs(cls.Config)) or "none")
            raise ConfigError(
                f"detector {cls.name!r}: bad configuration ({problems}); options given: {given}{valid}"
            ) from None

    def config(self) -> dict[str, Any]:
        """The options that make two runs comparable, as resolved (JSON-able; in the manifest)."""
        return self.options.model_dump(mode="json")

    def inputs(self) -> DetectorInputs:
        """Files and prompt/schema hashes that enter the run identity besides :meth:`config`."""
        return DetectorInputs()

    def check_labels(self, task: EvalTask) -> None:
        """Refuse, in one line, a task whose label space holds a label outside :attr:`labels`."""
        if self.labels is not None:
            task.require_labels(self.name, self.labels, hint=self.labels_hint)

    def outside_labels(self, prediction: Prediction) -> Prediction:
        """``prediction`` failed, naming its label, when the label is outside :attr:`labels`."""
        if self.labels is None or prediction.label is None or prediction.label in self.labels:
            return prediction
        declared = ", ".join(map(str, self.labels))
        error = (
            f"detector {self.name!r} answered {prediction.label}, outside the labels it declares ({declared})"
        )
        return prediction.model_copy(update={"label": None, "probabilities": None, "error": error})

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
    cache_path: str | None = None
    """The sqlite answer cache (:class:`~rwpost.llm.cache.LLMCache`: content-addressed, shared between
    runs and processes); None: the run's default answer cache for an API model (``data/cache/llm.sqlite``,
    see :meth:`RunContext.model`), none for a local one. A detector with tools caches their results here
    too unless it names a ``tool_cache_path``."""

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

    @field_validator("temperature", "summarise_temperature", check_fields=False)
    @classmethod
    def _sampling_temperature(cls, value: Any) -> Any:
        """Any sampling temperature a model's settings declare (a detector's own ``temperature`` field
        too): 0 to :data:`TEMPERATURE_MAX` (None: the server's default), refused naming the option."""
        return value if value is None else TypeAdapter(Temperature).validate_python(value)

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
    "TEMPERATURE_MAX",
    "Call",
    "Capabilities",
    "Detector",
    "DetectorInputs",
    "EvidenceK",
    "ModelFolder",
    "ModelOptions",
    "NoOptions",
    "Prediction",
    "PromptName",
    "RESULTS_PER_QUERY_MAX",
    "ResultsPerQuery",
    "RunContext",
    "Seed",
    "Temperature",
    "Trace",
    "check_option",
]
