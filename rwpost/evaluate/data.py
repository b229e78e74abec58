"""Evaluation inputs from files: the samples to score, the training part, and what identifies them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rwpost.dataset import read_samples
from rwpost.errors import ConfigError
from rwpost.evaluate.datasets import parse_data_spec
from rwpost.io import sha256_file
from rwpost.records import Sample


@dataclass
class EvalData:
    """Samples to score, optional training samples, and their provenance for the manifest."""

    test: list[Sample]
    train: list[Sample] | None
    info: dict[str, Any] = field(default_factory=dict)
    media_root: Path | None = None
    """Where the test samples' relative image and video paths are found, when the data says (a benchmark
    folder); ``--image-root`` overrides it."""


def refuse_duplicate_ids(samples: Sequence[Sample], source: str) -> None:
    """A ConfigError naming the ids that occur more than once (one copy could be trained on, the other
    scored)."""
    repeated = sorted(i for i, n in Counter(s.id for s in samples).items() if n > 1)
    if repeated:
        shown = ", ".join(repeated[:5]) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        raise ConfigError(f"{source}: duplicate sample ids {shown}; each sample must occur once")


def split_train_test(
    samples: Sequence[Sample], fraction: float, seed: int
) -> tuple[list[Sample], list[Sample], str]:
    """A seeded split into train (``fraction``) and test, stratified by label when every label allows it."""
    from sklearn.model_selection import train_test_split

    if not 0 < fraction < 1:
        raise ConfigError(f"--train-fraction must be between 0 and 1, got {fraction}")
    n_train = int(np.floor(fraction * len(samples)))  # how scikit-learn sizes the parts
    if not 0 < n_train < len(samples):
        raise ConfigError(
            f"--train-fraction {fraction} of {len(samples)} labelled samples leaves "
            f"{n_train} to train on and {len(samples) - n_train} to score; both need at least one"
        )
    labels = [str(s.label) for s in samples]
    try:
        train, test = train_test_split(list(samples), train_size=fraction, random_state=seed, stratify=labels)
        how = "stratified by label"
    except ValueError:  # a label with a single sample cannot be stratified
        train, test = train_test_split(list(samples), train_size=fraction, random_state=seed)
        how = "random (a label is too rare to stratify)"
    return train, test, f"{len(train)} of {len(samples)} samples, seed {seed}, {how}"


def _labelled(samples: list[Sample]) -> tuple[list[Sample], int]:
    kept = [s for s in samples if s.label is not None]
    return kept, len(samples) - len(kept)


def _read(data: str | Path) -> tuple[list[Sample], dict[str, Any], Path | None]:
    """Samples of a file, or of a benchmark named ``NAME[/SPLIT]:FOLDER``; what identifies them; their media
    folder when the data names one."""
    spec = parse_data_spec(data)
    if spec is None:
        samples, unlabelled = _labelled(read_samples(data))
        info = {"path": str(data), "sha256": sha256_file(data), "excluded_unlabelled": unlabelled}
        return samples, info, None
    source = spec.source()
    space = spec.adapter.space
    if space is None:
        samples, unlabelled = _labelled(spec.samples())
    else:  # a benchmark scored in its own labels: a sample with no RW-Post label is still scored in them
        read = spec.samples()
        classes = space.classes_of(read)
        samples = [s for s in read if s.label is not None or space.gold_class(s, classes) is not None]
        unlabelled = len(read) - len(samples)
    info = {
        "path": str(source),
        "sha256": spec.sha256(),
        "excluded_unlabelled": unlabelled,
        "benchmark": spec.adapter.name,
        "split": spec.split,
    }
    return samples, info, spec.media_root()


def load_eval_data(
    data: str | Path,
    *,
    train: str | Path | None = None,
    train_fraction: float | None = None,
    seed: int = 0,
    about: dict[str, Any] | None = None,
) -> EvalData:
    """Read ``data`` (released JSONL, Sample JSONL, Parquet split, or a benchmark's folder as
    ``NAME[/SPLIT]:FOLDER``, see :mod:`rwpost.evaluate.datasets`); train from ``train`` or a seeded
    ``train_fraction`` of ``data``. Samples with no RW-Post label (excluded ratings such as satire)
    cannot be scored: they are left out and counted in ``info``. ``about`` adds to ``info`` what the
    caller knows of the data (the version, subset and split of a published release)."""
    if train is not None and train_fraction is not None:
        raise ConfigError("give either --train or --train-fraction, not both")
    samples, info, media_root = _read(data)
    refuse_duplicate_ids(samples, str(data))
    info.update(about or {})
    train_samples = None
    if train is not None:
        train_samples, info["train"], _ = _read(train)
        refuse_duplicate_ids(train_samples, str(train))
        overlap = {s.id for s in samples} & {s.id for s in train_samples}
        if overlap:
            raise ConfigError(
                f"{len(overlap)} samples are in both --data and --train, e.g. {sorted(overlap)[0]}"
            )
    elif train_fraction is not None:
        try:
            train_samples, samples, how = split_train_test(samples, train_fraction, seed)
        except ConfigError as exc:
            raise ConfigError(f"{data}: {exc}") from None
        info["train"] = {"split_of_data": how, "fraction": train_fraction}
    if not samples:
        raise ConfigError(f"{data}: no labelled samples to evaluate")
    return EvalData(samples, train_samples, info, media_root)


Denominators = Literal["ours", "authors"]
"""Which claims every cell is scored on: all labelled ones (``ours``), or only those the authors' loader
keeps (``authors``: :func:`authors_denominators`)."""


def _opens(sample: Sample, media_root: Path | None) -> bool:
    from rwpost.evaluate.inputs import image_path
    from rwpost.images import ImageRefused, open_image

    if sample.image is None:
        return False
    source = sample.image.bytes or image_path(sample, media_root)
    if not source or (isinstance(source, Path) and not source.is_file()):
        return False
    try:
        open_image(source).close()
    except ImageRefused:
        return False
    return True


def authors_denominators(data: EvalData, media_root: Path | None) -> EvalData:
    """The test samples the authors' loader keeps (``extract_data_from_GT_jsonl`` in ``dataload.py`` of
    ``xudanni0927/AgentFact``): a claim whose post image is missing or does not open is left out of every
    cell, text-only ones included, so their tables' denominators are reproduced. The count left out is
    recorded (``denominators``, ``left_out``) beside the data."""
    kept = [s for s in data.test if _opens(s, media_root)]
    if not kept:
        where = f" under {media_root}" if media_root else ""
        raise ConfigError(
            f"--denominators authors: none of the {len(data.test)} samples has an image that opens{where} "
            "(give --image-root)"
        )
    info = {**data.info, "denominators": "authors", "left_out": len(data.test) - len(kept)}
    return replace(data, test=kept, info=info)
