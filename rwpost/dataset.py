"""RW-Post samples on disk: the Parquet layout of the published splits, and loading them.

Parquet files carry an explicit Arrow schema derived from the :class:`~rwpost.records.Sample` model
(Hugging Face ``datasets`` features, stored in the file's metadata), so
``datasets.load_dataset("parquet", ...)`` decodes the ``image`` column as ``datasets.Image`` with no
extra arguments. One column per Sample field, in the model's order with ``schema_version`` last, except:
the post image is flattened into ``image`` (its bytes, in the ``{"bytes", "path"}`` layout of
``datasets.Image``; null without bytes) plus one ``image_<field>`` column per other :class:`Image` field,
and ``extra`` is stored as JSON text.
"""

from __future__ import annotations

import json
import os
import re
import types
from collections.abc import Iterable
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from rwpost.errors import ConfigError, RecordError
from rwpost.io import atomic_path, iter_jsonl, read_records, sha256_file, validation_problem
from rwpost.records import Image, Sample
from rwpost.rwpost_format import read_released

ROW_GROUP_SIZE = 128
"""Rows per Parquet row group: small enough to stream a few MB of images at a time."""

IMAGE_FIELD = "image"
"""The Sample field flattened into the ``image`` column (bytes) and ``image_<field>`` columns."""
JSON_FIELDS = ("extra",)
"""Sample fields of free-form mappings, stored as JSON text."""
FALLBACKS: dict[str, Any] = {"provenance": {"backend": "unknown"}}
"""Values for required fields a file leaves null (files written before the field was required)."""


def _columns(model: type[Sample] = Sample) -> list[str]:
    """Sample's fields in column order: the model's order, ``schema_version`` (from the base) last."""
    names = [name for name in model.model_fields if name != "schema_version"]
    return [*names, "schema_version"]


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _feature(annotation: Any, hf: Any) -> Any:
    """The ``datasets`` feature of one field's type (narrow integers: counts and ids fit in int32)."""
    kind = _unwrap(annotation)
    origin = get_origin(kind)
    if origin is list:
        return hf.List(_feature(get_args(kind)[0], hf))
    if origin is dict:
        return hf.Value("string")
    if origin is Literal or (isinstance(kind, type) and issubclass(kind, str | Enum)):
        return hf.Value("string")
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return {name: _feature(f.annotation, hf) for name, f in kind.model_fields.items()}
    for python, dtype in ((bool, "bool"), (int, "int32"), (date, "date32")):
        if kind is python:
            return hf.Value(dtype)
    raise TypeError(f"no Parquet column type for {annotation!r}")


def features(model: type[Sample] = Sample):  # noqa: ANN201 - datasets is imported lazily (heavy)
    """The Hugging Face features of a published split (also the card's feature table); ``model`` is
    :class:`Sample` or a subclass (:class:`~rwpost.records.SiteSample`, the multi-site config)."""
    import datasets as hf

    out: dict[str, Any] = {}
    for name in _columns(model):
        annotation = model.model_fields[name].annotation
        if name == IMAGE_FIELD:
            out[name] = hf.Image()
            for part, field in Image.model_fields.items():
                if part != "bytes":
                    out[f"{name}_{part}"] = _feature(field.annotation, hf)
        else:
            out[name] = _feature(annotation, hf)
    return hf.Features(out)


def arrow_schema(model: type[Sample] = Sample) -> pa.Schema:
    """The explicit Arrow schema of a published split, with the ``datasets`` features in its metadata."""
    return features(model).arrow_schema


def sample_to_row(sample: Sample) -> dict[str, Any]:
    """One Sample as a row of :func:`arrow_schema`."""
    row = sample.model_dump(exclude={IMAGE_FIELD, *JSON_FIELDS})
    image = sample.image or Image()
    row[IMAGE_FIELD] = {"bytes": image.bytes, "path": None} if image.bytes else None
    for part, value in image.model_dump(exclude={"bytes"}).items():
        row[f"{IMAGE_FIELD}_{part}"] = value
    for name in JSON_FIELDS:
        value = getattr(sample, name)
        row[name] = json.dumps(value, ensure_ascii=False, sort_keys=True) if value else None
    return {k: str(v) if isinstance(v, Enum) else v for k, v in row.items()}


def row_to_sample(row: dict[str, Any], model: type[Sample] = Sample) -> Sample:
    """A Parquet row (as ``pyarrow`` gives it, image undecoded) back to a Sample."""
    cell = row.get(IMAGE_FIELD)
    image = {"bytes": cell.get("bytes") if isinstance(cell, dict) else None}
    image |= {part: row.get(f"{IMAGE_FIELD}_{part}") for part in Image.model_fields if part != "bytes"}
    values: dict[str, Any] = {IMAGE_FIELD: image if any(v is not None for v in image.values()) else None}
    for name in _columns(model):
        value = row.get(name)
        if name == IMAGE_FIELD or value is None or (name in JSON_FIELDS and not value):
            value = FALLBACKS.get(name)
        elif name in JSON_FIELDS:
            value = json.loads(value)
        if value is not None:
            values[name] = value
    return model.model_validate(values)


def samples_to_table(samples: Iterable[Sample], model: type[Sample] = Sample) -> pa.Table:
    """Samples as an Arrow table with the explicit published schema."""
    return pa.Table.from_pylist([sample_to_row(s) for s in samples], schema=arrow_schema(model))


def write_parquet(
    path: str | os.PathLike[str], samples: Iterable[Sample], model: type[Sample] = Sample
) -> int:
    """Write samples to one zstd Parquet file atomically; returns the row count."""
    table = samples_to_table(samples, model)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP_SIZE)
    return table.num_rows


def read_parquet(path: str | os.PathLike[str]) -> list[Sample]:
    """Samples of one Parquet split file; a bad file or row raises :class:`RecordError` naming it."""
    source = str(path)
    if Path(path).is_dir():
        raise RecordError("is a directory, expected a Parquet file", source=source)
    # one file: ParquetFile reads it as pq.read_table does, without pyarrow.dataset (which imports pandas)
    try:
        with pq.ParquetFile(path) as file:
            table = file.read()
        rows = table.to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise _unreadable(exc, source) from exc
    _check_columns(table.column_names, source)
    samples, first_row = [], {}
    for number, row in enumerate(rows, start=1):
        sample = _row_sample(row, source, number)
        if sample.id in first_row:  # a split holds each sample once (diff and evaluate key by id)
            problem = f"row {number}: duplicate id (also row {first_row[sample.id]})"
            raise RecordError(problem, source=source, record_id=sample.id)
        first_row[sample.id] = number
        samples.append(sample)
    return samples


REQUIRED_COLUMNS = ("id", "claim", "news_url")
"""Columns without which a Parquet file is not a split of ours (checked before any row is read)."""


def _unreadable(exc: Exception, source: str) -> RecordError:
    problem = " ".join(str(exc).split())[:200]
    return RecordError(f"not a readable Parquet file ({problem})", source=source)


def _check_columns(names: Iterable[str], source: str) -> None:
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        raise RecordError(f"not an RW-Post split: no {', '.join(missing)} column", source=source)


SUMS_FILE = "SHA256SUMS"
"""A version folder's checksums of its split files (``sha256sum`` format)."""
SUMS_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *](\S.*)")
"""One line of ``sha256sum`` output: the digest, a space, a space or ``*`` (binary mode), the file."""


def _published_digest(version_dir: Path, rel: str) -> str | None:
    """The checksum SHA256SUMS gives ``rel`` (None: no SHA256SUMS, or it does not list the file)."""
    try:
        lines = (version_dir / SUMS_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None  # no checksums to hold the file to (`rwpost verify` reports an unreadable one)
    for line in lines:
        match = SUMS_LINE.fullmatch(line.rstrip())
        if match and match.group(2) == rel:
            return match.group(1).lower()
    return None


def _check_split_file(file: Path, digest: str, version_dir: Path | None) -> None:
    """Refuse, in one line naming the file, a split that differs from what its version folder published
    (SHA256SUMS) or that is no RW-Post split, before ``datasets`` reads it."""
    source = str(file)
    if version_dir is not None:
        published = _published_digest(version_dir, file.relative_to(version_dir).as_posix())
        if published is not None and published != digest:
            raise RecordError(
                f"checksum differs from {SUMS_FILE}: the file changed after publishing "
                f"(`rwpost verify {version_dir}` lists every difference)",
                source=source,
            )
    try:
        names = pq.read_schema(file).names
    except (OSError, pa.ArrowException) as exc:
        raise _unreadable(exc, source) from exc
    _check_columns(names, source)


def _row_sample(row: dict[str, Any], source: str, number: int) -> Sample:
    rid = row.get("id") if isinstance(row.get("id"), str) else None
    try:
        return row_to_sample(row)
    except ValidationError as exc:
        message, where = validation_problem(exc)
        raise RecordError(f"row {number}: {message}", source=source, record_id=rid, field=where) from exc
    except (ValueError, TypeError) as exc:  # a JSON column that is not JSON
        raise RecordError(f"row {number}: cannot read ({exc})", source=source, record_id=rid) from exc


def read_samples(path: str | os.PathLike[str]) -> list[Sample]:
    """Samples from a released RW-Post JSONL file, a JSONL of our Sample records, or a Parquet split."""
    target = Path(path)
    if not target.exists():
        problem = "a broken symbolic link (or a loop of them)" if target.is_symlink() else "file not found"
        raise RecordError(problem, source=str(path))
    if target.is_dir():
        raise RecordError("is a directory, expected a file", source=str(path))
    if target.suffix == ".parquet":
        return read_parquet(target)
    first = next(iter_jsonl(target), None)
    if first is None:
        return []
    if isinstance(first[1], dict) and "provenance" in first[1] and "schema_version" in first[1]:
        return list(read_records(target, Sample))
    return read_released(target)


def resolve_version_dir(path_or_version: str, root: str | os.PathLike[str] = "data/rwpost") -> Path:
    """The folder of a dataset version: an existing path, or ``<root>/<version>`` (``latest`` allowed)."""
    candidate = Path(path_or_version)
    if candidate.is_dir():
        return candidate
    base = Path(root)
    if path_or_version == "latest":
        versions = sorted(p for p in base.glob("*") if (p / "README.md").exists()) if base.is_dir() else []
        if versions:
            return versions[-1]
    elif (base / path_or_version).is_dir():
        return base / path_or_version
    raise ConfigError(
        f"no RW-Post dataset at {path_or_version!r} (looked for a folder, and for {base / path_or_version})"
    )


def split_file(version_dir: Path, subset: str, split: str) -> Path:
    """Path of one split's Parquet file in a version folder."""
    path = version_dir / subset / f"{split}.parquet"
    if not path.exists():
        have = sorted(str(p.relative_to(version_dir)) for p in version_dir.glob("*/*.parquet"))
        raise ConfigError(f"no split {subset}/{split} in {version_dir} (have: {', '.join(have) or 'none'})")
    return path


def load(
    path_or_version: str,
    subset: str = "main",
    split: str = "test",
    root: str | os.PathLike[str] = "data/rwpost",
):  # noqa: ANN201
    """Load one split as a ``datasets.Dataset`` with decoded images.

    ``path_or_version`` is a version folder (``data/rwpost/v1``), a version name under ``root``, ``latest``,
    or a single Parquet file (then ``subset``/``split`` are ignored).
    """
    import datasets as hf

    target = Path(path_or_version)
    version_dir = None
    if target.suffix == ".parquet" and target.exists():
        file = target
    else:
        version_dir = resolve_version_dir(path_or_version, root)
        file = split_file(version_dir, subset, split)
    digest = sha256_file(file)
    _check_split_file(file, digest, version_dir)
    # Cache by content: a version rebuilt in place must never be served from a stale datasets cache.
    cache_dir = Path(hf.config.HF_DATASETS_CACHE) / "rwpost" / digest[:16]
    return hf.load_dataset("parquet", data_files={split: str(file)}, split=split, cache_dir=str(cache_dir))
