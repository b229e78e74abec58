"""The run identity: what makes two runs the same, and the claim of a run folder by it.

:func:`run_identity` is the one function that says what a run is (:class:`~rwpost.evaluate.log.RunIdentity`):
the content of every input, never a path alone (data, the samples themselves, the files the detector
reads by its ``inputs()``, prompts and answer schemas, the detector's options as resolved, the detector's
own code, the blocked-domain list, rwpost's code version). A run resumes only when all are identical;
:func:`claim_run` otherwise refuses naming only what changed (:func:`identity_changes`), or starts afresh
when asked.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import marshal
import shutil
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Detector, DetectorInputs
from rwpost.evaluate.log import RunIdentity, RunRecord
from rwpost.evaluate.manifest import code_version, fingerprint, now
from rwpost.io import sha256_hex, write_json
from rwpost.records import Sample

PREDICTIONS_FILE = "predictions.jsonl"
RUN_FILE = "run.json"
RUN_OUTPUTS = (
    RUN_FILE,
    PREDICTIONS_FILE,
    "metrics.json",
    "manifest.json",
    "scored.jsonl",
    "explanations.jsonl",
    "input_report.json",
    "report.md",
    "plots",
)
"""What a run writes in its folder (and all that ``overwrite`` removes: nothing else of the folder)."""

IDENTITY_NAMES = {
    "data_sha256": "the data file",
    "samples_sha256": "the samples' content",
    "train_data_sha256": "the training data file",
    "train_sha256": "the training samples",
    "predictions_sha256": "the predictions file",
    "detector": "the detector",
    "detector_config": "the detector options",
    "detector_code": "the detector's code",
    "prompt_hashes": "the prompts",
    "schema_hashes": "the answer schemas",
    "blocked_domains_sha256": "the blocked-domain list",
    "code_version": "the code version",
    "setting": "the setting",
    "seed": "the seed",
    "repeats": "the number of repeats",
    "evidence_draw": "the evidence draw",
}
"""The run identity's fields, as the refusal to resume names them."""


def samples_sha256(samples: Sequence[Sample]) -> str:
    """SHA-256 of the samples' content (every field, in order): changes when any sample does."""
    return sha256_hex("\n".join(s.model_dump_json() for s in samples))


@functools.cache
def _distribution(top: str) -> tuple[str, str] | None:
    """``(name, version)`` of the installed distribution named like the top-level package ``top``
    (``rwpost_keyword`` is ``rwpost-keyword``), None when there is none: a lookup by name, never a scan
    of every installed distribution's files."""
    try:
        found = metadata.distribution(top)
    except (metadata.PackageNotFoundError, ValueError):
        return None
    return found.metadata["Name"], found.version


def _module_code(module_name: str, classes: Sequence[type]) -> str:
    """SHA-256 of a module's source; of its classes' compiled code when it has no source file (a module
    built in memory)."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module is not None else None
    except (OSError, TypeError):
        source = None
    if source is not None:
        return sha256_hex(source)
    digest = hashlib.sha256()
    for cls in classes:
        for name, value in sorted(vars(cls).items()):
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is not None:
                digest.update(name.encode() + marshal.dumps(code))
    return digest.hexdigest()


def detector_code(cls: type[Detector]) -> dict[str, str]:
    """The detector's own code, for the run identity: the SHA-256 of the source of each module that
    defines its class or a class it extends (up to :class:`Detector`), by module name, and the version of
    the installed distribution (other than rwpost) named like each module's top-level package, as
    ``dist:<name>``. A plug-in
    whose ``predict`` changed is then another run, whatever rwpost's own code version says."""
    classes: dict[str, list[type]] = {}
    for base in cls.__mro__:
        if base is object or base is Detector:
            break
        classes.setdefault(base.__module__, []).append(base)
    code = {module: _module_code(module, found)[:16] for module, found in classes.items()}
    for module in classes:
        top = module.partition(".")[0]
        found = _distribution(top) if top != "rwpost" else None
        if found is not None:
            code[f"dist:{found[0]}"] = found[1]
    return code


def run_identity(
    samples: Sequence[Sample],
    spec: Any,
    detector: Detector | type[Detector],
    train: Sequence[Sample] | None,
    data_info: Mapping[str, Any] | None,
) -> RunIdentity:
    """What makes two runs the same: the content of every input, never a path alone. The detector's
    files, prompts and schemas come from its ``inputs()``, its options from its ``config()`` (as
    resolved, each once), its code from its class (:func:`detector_code`); ``spec`` is the run's
    :class:`~rwpost.evaluate.runner.RunSpec`. Given the detector's class instead (a shard's key, where a
    model is not loaded for it: :func:`shard_key`), its options as its ``Config`` validates them stand for
    ``config()``, and ``inputs()`` is empty."""
    info = data_info or {}
    if isinstance(detector, type):
        cls, inputs = detector, DetectorInputs()
        config = detector.Config.model_validate(dict(spec.config)).model_dump(mode="json")
    else:
        cls, inputs, config = type(detector), detector.inputs(), detector.config()
    facts = dict(
        predictions_sha256=inputs.sha256,
        detector=spec.detector,
        detector_config=config,
        detector_code=detector_code(cls),
        prompt_hashes=dict(inputs.prompts),
        schema_hashes=dict(inputs.schemas),
        setting=str(spec.setting),
        seed=spec.seed,
        repeats=spec.repeats,
        data_sha256=info.get("sha256"),
        samples_sha256=samples_sha256(samples),
        train_data_sha256=(info.get("train") or {}).get("sha256"),
        train_sha256=samples_sha256(train) if train else None,
        blocked_domains_sha256=spec.blocklist.sha256,
        code_version=code_version(),
        # the evidence a k cell shows: which draw and its seed (absent elsewhere, so other runs keep theirs)
        evidence_draw=(spec.evidence_sampler, spec.evidence_seed) if spec.setting.k else None,
    )
    return RunIdentity(**{k: v for k, v in facts.items() if v is not None})  # unknown facts left unset


def shard_key(
    samples: Sequence[Sample], spec: Any, train: Sequence[Sample] | None, data_info: Mapping[str, Any] | None
) -> str:
    """What a finished run's completion marker stands for: its :func:`run_identity` and what its scores
    and reports read besides (name, resamples, failure policy, images, prices). The detector is built for
    it (its ``inputs()``: a predictions file changed in place makes the run pending again) unless it
    declares a GPU (``Capabilities.uses_gpu``) or its typed model settings name a local model: a model is
    never loaded for a key, its class stands for it. A detector that cannot be built gets a key of its
    name and options (the run then refuses it in one line)."""
    from rwpost.evaluate.contract import ModelOptions
    from rwpost.evaluate.registry import resolve_detector

    try:
        cls = resolve_detector(spec.detector)
        options = cls.Config.model_validate(dict(spec.config))
        local = cls.capabilities.uses_gpu or (isinstance(options, ModelOptions) and options.local)
        detector = cls if local else cls(options)
        identity: Any = run_identity(samples, spec, detector, train, data_info).dump()
    except (ConfigError, ValidationError):
        identity = {"detector": spec.detector, "options": spec.config}
    return fingerprint(
        {
            "identity": identity,
            "system": spec.system,
            "scoring": [spec.n_resamples, spec.failures],
            "images": [spec.allow_missing_images, str(spec.image_root)],
            "prices": {k: v.model_dump() for k, v in (spec.prices or {}).items()},
        }
    )


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text[:12] + "..." if len(text) > 15 else text


def identity_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two run identities (as dumped), in words, naming only the fields and keys
    that changed: ``the data file (1a2b3c... -> 4d5e6f...)``, ``the detector options (words a -> b)``."""
    changes = []
    order = list(IDENTITY_NAMES)
    for key in sorted(set(old) | set(new), key=lambda k: (order.index(k) if k in order else len(order), k)):
        a, b = old.get(key), new.get(key)
        if a == b or (a in (None, {}, []) and b in (None, {}, [])):
            continue
        if key not in IDENTITY_NAMES and key not in new:  # a fact an older rwpost recorded (its copy)
            continue
        name = IDENTITY_NAMES.get(key, key)
        if isinstance(a, dict) and isinstance(b, dict):
            keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            parts = [f"{k} {_short(a.get(k))} -> {_short(b.get(k))}" for k in keys]
            changes.append(f"{name} ({'; '.join(parts)})")
        else:
            changes.append(f"{name} ({_short(a)} -> {_short(b)})")
    return changes


def clear_run(out_dir: Path) -> None:
    """Remove what a run wrote in ``out_dir`` (:data:`RUN_OUTPUTS`), nothing else."""
    for name in RUN_OUTPUTS:
        path = out_dir / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def resume_state(
    out_dir: Path, identity: RunIdentity, *, overwrite: bool = False, on_change: str = "refuse"
) -> str:
    """What a run with ``identity`` does with ``out_dir``, writing nothing: ``resumed`` (the folder's run
    is this one), ``new`` or ``restarted`` (always with ``overwrite``; when something changed with
    ``on_change="restart"``, for pipeline stages, which own their folders); else a ConfigError naming
    only what changed."""
    path = out_dir / RUN_FILE
    if not (path.exists() or (out_dir / PREDICTIONS_FILE).exists()):
        return "new"
    dumped = identity.dump()
    existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if existing.get("fingerprint") == identity.fingerprint() and not overwrite:
        return "resumed"
    if not (overwrite or on_change == "restart"):
        named = identity_changes(existing.get("identity") or {}, dumped)
        changes = "; ".join(named) or "the run identity's format (written by another rwpost version)"
        raise ConfigError(
            f"{out_dir} holds a different run: changed since it started: {changes}; "
            "use --overwrite to start afresh, or another --out folder"
        )
    return "restarted"


def start_run(out_dir: Path, identity: RunIdentity, state: str) -> str:
    """Claim ``out_dir`` for the run (after every check of :func:`resume_state` and the run's own): a
    restarted run's files removed, ``run.json`` written; returns ``state``."""
    if state == "resumed":
        return state
    if state == "restarted":
        clear_run(out_dir)
    write_json(
        out_dir / RUN_FILE,
        RunRecord(fingerprint=identity.fingerprint(), identity=identity, started=now()).dump(),
    )
    return state


__all__ = [
    "IDENTITY_NAMES",
    "PREDICTIONS_FILE",
    "RUN_FILE",
    "RUN_OUTPUTS",
    "clear_run",
    "detector_code",
    "identity_changes",
    "resume_state",
    "run_identity",
    "samples_sha256",
    "shard_key",
    "start_run",
]
