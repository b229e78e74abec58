"""The stage contract: typed params validated once, a report with counts and funnel steps, one entry point.

Every DVC stage is one module of :mod:`rwpost.stages` with a ``Params`` model of its ``params.yaml``
section (the defaults live there and nowhere else; unknown keys are errors) and
``run(params) -> StageReport``. ``pipelines/<stage>.py`` hands the module to :func:`stage_main`; the CLI
builds the same ``Params`` from its options (:meth:`StageParams.of`) and calls the same ``run``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rwpost.errors import ConfigError, Interrupted, RwpostError, signal_name, sigterm_interrupts
from rwpost.executors import Submitted
from rwpost.io import overlap, validation_problem, write_json
from rwpost.records import FunnelStep
from rwpost.secrets import redacting_streams


class StageParams(BaseModel):
    """Base of a stage's params: its ``section`` of params.yaml plus the ``shared`` sections it reads."""

    model_config = ConfigDict(extra="forbid")

    section: ClassVar[str]
    shared: ClassVar[tuple[str, ...]] = ()
    """Other top-level sections this stage reads, each a field of the model (e.g. ``dataset``)."""
    upstream: ClassVar[dict[str, str]] = {}
    """Fields read from an earlier stage's section: field -> ``section.key`` or ``section.key/file`` (e.g.
    ``"tagged": "reformat.out/articles.jsonl"``), so params.yaml states each path once. A value set in the
    stage's own section wins; without the earlier section the field keeps its default."""
    reads: ClassVar[tuple[str, ...]] = ()
    """Fields naming the files and folders the stage reads."""
    writes: ClassVar[tuple[str, ...]] = ()
    """Fields naming the files and folders the stage writes: none may be, hold or lie inside what it reads
    (:meth:`refuse_outputs_over_inputs`)."""
    file_kinds: ClassVar[dict[str, str]] = {}
    """Written fields that name one file, by the kind of file the stage writes there (a key of
    :data:`FILE_KINDS`): an existing file of another kind is not replaced (:meth:`refuse_foreign_outputs`).
    Written fields not listed are folders."""

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], source: str = "params.yaml", *, outputs_anywhere: bool = False
    ) -> Self:
        """The stage's params from the whole params file; an error names the file and the key.
        ``outputs_anywhere``: let an output lie outside the project or replace a file of another kind
        (``--outputs-anywhere``; :meth:`refuse_foreign_outputs`)."""
        data = _section(params, cls.section, source)
        refuse_dvc_blind_keys(data, cls.section, source)
        for name in cls.shared:
            if name in data:
                raise ConfigError(f"{source}: {cls.section}.{name}: belongs in its own '{name}:' section")
            if name not in params and not cls.model_fields[name].is_required():
                continue  # an optional shared section (executor:) keeps its defaults
            data[name] = _section(params, name, source)
            refuse_dvc_blind_keys(data[name], name, source)
        for name, ref in cls.upstream.items():
            where, _, file = ref.partition("/")
            section, _, key = where.partition(".")
            earlier = params.get(section)
            if name not in data and isinstance(earlier, dict) and earlier.get(key) is not None:
                data[name] = f"{earlier[key]}/{file}" if file else earlier[key]
        params = cls._validate(data, source)
        params.refuse_outputs_over_inputs(Path(source), source)
        if not outputs_anywhere:
            params.refuse_foreign_outputs(source)
        return params

    def refuse_foreign_outputs(self, source: str = "params.yaml") -> None:
        """Refuse, before any work, an output that is not the stage's to write (issue 39 M4): a relative path
        that leads out of the project (the working folder, where ``dvc repro`` runs), a file output naming
        an existing file that is not of the kind the stage writes there (``evaluate.summary: dvc.yaml``, a
        data file), or a folder output naming an existing file. ``--outputs-anywhere`` allows them."""
        project = Path.cwd().resolve()
        hint = "; write it elsewhere, or pass --outputs-anywhere"
        for key, out in self.paths_written().items():
            name = key.split(".", 1)[1]
            where = Path(out)
            if not where.is_absolute() and not _resolved(where).is_relative_to(project):
                raise ConfigError(f"{source}: {key}: {out} leads out of the project ({project}){hint}")
            kind = self.file_kinds.get(name)
            if kind is None:
                if where.is_file():
                    raise ConfigError(f"{source}: {key}: {out} is an existing file, expected a folder{hint}")
                continue
            if where.is_file() and not FILE_KINDS[kind][1](where):
                raise ConfigError(
                    f"{source}: {key}: {out} is an existing file that is not {FILE_KINDS[kind][0]}: "
                    f"not replaced{hint}"
                )

    def paths_read(self) -> dict[str, Path]:
        """What the stage reads, by params key (``reads``)."""
        return self._paths(self.reads)

    def paths_written(self) -> dict[str, Path]:
        """What the stage writes, by params key (``writes``)."""
        return self._paths(self.writes)

    def _paths(self, fields: tuple[str, ...]) -> dict[str, Path]:
        return {f"{self.section}.{name}": getattr(self, name) for name in fields if getattr(self, name)}

    def refuse_outputs_over_inputs(
        self, params_file: Path | None = None, source: str = "params.yaml"
    ) -> None:
        """Refuse, before any work, an output that would replace or write into what the stage reads: one of
        its inputs, the params file, or rwpost's own code (a ConfigError naming the key)."""
        inputs = {**self.paths_read(), "the params file": params_file, "rwpost's code": PACKAGE}
        for key, out in self.paths_written().items():
            for name, given in inputs.items():
                if given is not None and (how := overlap(out, given)):
                    raise ConfigError(
                        f"{source}: {key}: {out} {how} an input of this stage ({name}: {given}); "
                        "write the output elsewhere"
                    )

    @classmethod
    def of(cls, **values: Any) -> Self:
        """Params from explicit values (the CLI's options); ``None`` leaves a value at its default."""
        return cls._validate({k: v for k, v in values.items() if v is not None}, "option")

    @classmethod
    def from_options(cls, **values: Any) -> Self:
        """As :meth:`of`, with an error naming the command-line option (``--max-articles: ...``)."""
        try:
            return cls.model_validate({k: v for k, v in values.items() if v is not None})
        except ValidationError as exc:
            message, where = validation_problem(exc)
            option = f"--{where.split('.')[0].replace('_', '-')}: " if where else ""
            raise ConfigError(f"{option}{message}") from exc

    @classmethod
    def default_text(cls, name: str) -> str:
        """A field's default as ``--help`` shows it (the CLI's options are None, so this default holds)."""
        value = cls.model_fields[name].get_default(call_default_factory=True)
        if isinstance(value, list | tuple):
            return ", ".join(map(str, value))
        return "none" if value is None else str(value)

    @classmethod
    def _validate(cls, data: Mapping[str, Any], source: str) -> Self:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            message, where = validation_problem(exc)
            key = where or ""
            if key.split(".")[0] not in cls.shared:
                key = f"{cls.section}.{key}" if key else cls.section
            raise ConfigError(f"{source}: {key}: {message}") from exc


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _head(path: Path, size: int = 1 << 16) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _is_sqlite(path: Path) -> bool:
    head = _head(path, 16)
    return head in (b"",) or head.startswith(b"SQLite format 3\x00")


def _first_json_line(path: Path) -> Any:
    for line in _head(path).splitlines():
        if line.strip():
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                return None
    return {}


def _is_rejects(path: Path) -> bool:
    row = _first_json_line(path)  # an empty file, or set-aside records (a stage, a reason)
    return row == {} or (isinstance(row, dict) and {"stage", "reason"} <= row.keys())


def _is_summary(path: Path) -> bool:
    try:
        data = json.loads(_head(path, 64 << 20))
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and all(isinstance(v, dict) for v in data.values())


FILE_KINDS: dict[str, tuple[str, Any]] = {
    "sqlite": ("an SQLite cache", _is_sqlite),
    "rejects": ("a JSONL file of set-aside records", _is_rejects),
    "summary": ("an evaluate summary (JSON of runs by subset)", _is_summary),
}
"""The kinds of single file a stage writes: what each is called and how an existing one is recognised."""


PACKAGE = Path(__file__).resolve().parents[1]
"""rwpost's own folder: no stage writes into it (``stats.out: rwpost`` put PNGs among the modules)."""


DVC_BLIND_KEYS = ("size", "nfiles")
"""Keys DVC's run cache leaves out of a stage's key at any depth, taking them for file metadata
(treeverse/dvc#10296): a value under one could change and ``dvc repro`` would check out the outputs of
the old value ("cached - skipping run") and record the new one in dvc.lock."""

RENAMED_KEYS = {"filter.size": "filter.size_limits"}
"""Old params.yaml keys -> their names now (each renamed because DVC's run cache cannot see it)."""


def refuse_dvc_blind_keys(value: Any, where: str, source: str = "params.yaml") -> None:
    """Raise :class:`ConfigError` naming the first key under ``value`` (the section ``where``) that
    DVC's run cache leaves out of a stage's key (:data:`DVC_BLIND_KEYS`); an old name says its new one."""
    seen: set[int] = set()  # YAML aliases share one object: each is walked once (an alias bomb stays cheap)
    todo: list[tuple[str, Any]] = [(where, value)]
    while todo:
        path, node = todo.pop()
        if id(node) in seen or not isinstance(node, dict | list):
            continue
        seen.add(id(node))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            here = f"{path}.{key}"
            if here in RENAMED_KEYS:
                raise ConfigError(f"{source}: {here}: renamed to {RENAMED_KEYS[here]}")
            if key in DVC_BLIND_KEYS:
                raise ConfigError(
                    f"{source}: {here}: DVC's run cache ignores keys named {key!r} (treeverse/dvc#10296), so "
                    "a change under it would be skipped by dvc repro; name it otherwise"
                )
            todo.append((here, child))


def _section(params: Mapping[str, Any], name: str, source: str) -> dict[str, Any]:
    value = params.get(name)
    if not isinstance(value, dict):
        raise ConfigError(f"{source} has no '{name}:' section")
    return dict(value)


class DatasetParams(BaseModel):
    """The ``dataset:`` section: which version the split stage publishes and later stages read."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    version: str
    root: Path = Path("data/rwpost")
    since: date | None = None
    until: date | None = None
    source_description: str = ""
    generated_notes: list[str] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _one_folder_name(cls, version: str) -> str:
        # the version is one folder under root: "", ".", "a/b" or "../x" would publish into root itself,
        # beside other versions, or outside it; "latest" is what rwpost.load reads as the newest version
        if not _VERSION_NAME.fullmatch(version) or version in ("latest", "..", "."):
            raise ValueError(
                f"{version!r} is not a version name: one folder name of letters, digits and . _ + - "
                "(e.g. v1.2.0), not 'latest'"
            )
        return version

    @model_validator(mode="after")
    def _window_in_order(self) -> Self:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}")
        return self

    @property
    def version_dir(self) -> Path:
        return self.root / self.version


_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


class StageReport(BaseModel):
    """What one stage run did: its counts, its funnel steps (possibly none) and a one-line summary."""

    stage: str
    counts: dict[str, Any] = Field(default_factory=dict)
    funnel: list[FunnelStep] = Field(default_factory=list)
    message: str = ""
    submitted: bool = False
    """Whether the work was handed to a scheduler (Slurm's scripts written) instead of run."""

    @classmethod
    def of_job(cls, stage: str, job: Submitted, unit: str = "shards") -> StageReport:
        """The report of a job handed to a scheduler: its shards, those pending, how to submit it."""
        return cls(
            stage=stage,
            counts={"shards": job.shards, "pending": job.pending},
            message=job.message(stage, unit),
            submitted=True,
        )


def read_funnel(path: Path | None) -> list[FunnelStep]:
    """The funnel an earlier stage wrote (``funnel.json``); empty when it wrote none."""
    if path is None or not path.exists():
        return []
    return [FunnelStep.model_validate(step) for step in json.loads(path.read_text(encoding="utf-8"))]


def funnel_so_far(earlier: Path | None, report: StageReport) -> list[FunnelStep]:
    """The funnel up to and including this stage: the earlier stages' file, then this report's steps.

    The one place the card's funnel is put together: reformat starts it, extract -> filter -> assemble ->
    split each pass it on.
    """
    return read_funnel(earlier) + report.funnel


def write_funnel(path: Path, steps: list[FunnelStep]) -> None:
    write_json(path, [step.row() for step in steps])


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line, self.first = key, line, first


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # ``<<: *base`` may override: that is its point
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(key, line, seen[key])
                seen[key] = line
            except TypeError:  # an unhashable key: the base loader names it
                pass
        return super().construct_mapping(node, deep)


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    """The whole params file as a dict; a key given twice in one mapping is refused (naming its lines)."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader) or {}  # noqa: S506
    except _DuplicateKey as exc:
        raise ConfigError(
            f"{path}:{exc.line}: duplicate key {exc.key!r} (also on line {exc.first}); "
            "YAML would keep the last silently: give it once"
        ) from None
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: params file not found") from exc
    except OSError as exc:  # a folder, unreadable
        raise ConfigError(f"{path}: cannot read the params file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: YAML nested too deeply") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections, found {type(data).__name__}")
    return data


def run_stage(
    stage: ModuleType,
    params: Mapping[str, Any],
    source: str = "params.yaml",
    *,
    outputs_anywhere: bool = False,
) -> dict[str, Any]:
    """Validate ``stage.Params`` from a params dict, run the stage, print its line, return its counts."""
    checked = stage.Params.from_params(params, source, outputs_anywhere=outputs_anywhere)
    report: StageReport = stage.run(checked)
    print(report.message)
    return report.counts


INTERRUPTED = 130
"""Exit status of a stage stopped by SIGINT or SIGTERM (as the CLI's)."""


def stage_main(stage: ModuleType, *, fast_exit: bool = False) -> None:
    """``python -m pipelines.<stage> [--params FILE]``; an rwpost error is one line and an exit code.

    SIGTERM (what ``dvc``, ``timeout`` and schedulers send) stops the stage as Ctrl-C does: the file being
    written is discarded (every write is atomic: the earlier complete file stays) and the stage says so
    in one line; the default SIGTERM would kill it mid-write and leave the temporary file in its outputs.

    ``fast_exit``: once the stage has ended (its outputs written, or its one-line error printed), leave
    without the interpreter's teardown, which frees torch, scikit-learn and every other module one by one
    (0.7 s of a 6 s cold evaluate stage). Exit handlers run and the streams are flushed first, and the
    exit status is the stage's; with another non-daemon thread still running it leaves the ordinary way.
    """
    try:
        _stage_main(stage)
    except SystemExit as exc:
        if not fast_exit or (exc.code is not None and not isinstance(exc.code, int)):
            raise
        _leave(exc.code or 0)
    if fast_exit:
        _leave(0)


def _leave(status: int) -> None:
    """Exit now with ``status``, after the exit handlers and a flush, unless other threads still run."""
    import atexit
    import os
    import threading

    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        sys.exit(status)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _stage_main(stage: ModuleType) -> None:
    parser = argparse.ArgumentParser(description=(stage.__doc__ or "").splitlines()[0])
    parser.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    parser.add_argument(
        "--outputs-anywhere",
        action="store_true",
        help="let an output lead out of the project or replace an existing file of another kind",
    )
    args = parser.parse_args()
    # what the stage prints (its line, an error) never shows a secret
    with redacting_streams(), sigterm_interrupts():
        try:
            run_stage(stage, load_params(args.params), args.params, outputs_anywhere=args.outputs_anywhere)
        except RwpostError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt as exc:
            name = stage.__name__.rsplit(".", 1)[-1]
            detail = f": {exc.detail}" if isinstance(exc, Interrupted) else ""
            print(f"{name}: interrupted ({signal_name(exc)}){detail}; rerun to finish", file=sys.stderr)
            sys.exit(INTERRUPTED)
