"""RW-Post samples on disk: the Parquet layout of the published splits, and loading them.

Parquet files carry an explicit Arrow schema derived from :data:`FEATURES` (Hugging Face ``datasets``
features, stored in the file's metadata), so ``datasets.load_dataset("parquet", ...)`` decodes the
``image`` column as ``datasets.Image`` with no extra arguments. Images are embedded as bytes in the
``{"bytes", "path"}`` layout of ``datasets.Image``; a sample without image bytes has a null ``image``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rwpost.errors import ConfigError, RecordError
from rwpost.io import atomic_path, iter_jsonl, sha256_file
from rwpost.records import Evidence, Image, Provenance, Sample

ROW_GROUP_SIZE = 128
"""Rows per Parquet row group: small enough to stream a few MB of images at a time."""


def _features():  # noqa: ANN202 - datasets is imported lazily (heavy)
    import datasets as hf

    text = hf.Value("string")
    return hf.Features(
        {
            "id": text,
            "claim": text,
            "post_text": text,
            "post_url": text,
            "image": hf.Image(),
            "image_path": text,
            "image_link": text,
            "image_sha256": text,
            "image_width": hf.Value("int32"),
            "image_height": hf.Value("int32"),
            "video_link": text,
            "label": text,
            "label_original": text,
            "category": text,
            "claim_time": hf.Value("date32"),
            "news_url": text,
            "reasoning_logic": text,
            "key_points": hf.List(text),
            "evidence": hf.List(
                {
                    "id": hf.Value("int32"),
                    "type": text,
                    "description": text,
                    "content": text,
                    "source": text,
                    "url": text,
                    "key_point_ids": hf.List(hf.Value("int32")),
                }
            ),
            "ocr": text,
            "image_required": text,
            "watermarked": hf.Value("bool"),
            "watermark_keywords": hf.List(text),
            "cluster_id": text,
            "split": text,
            "subset": text,
            "provenance": {"backend": text, "model": text, "prompt_version": text, "source": text},
            "extra": text,
            "schema_version": text,
        }
    )


def features():  # noqa: ANN201
    """The Hugging Face features of a published split (also the card's ``dataset_info``)."""
    return _features()


def arrow_schema() -> pa.Schema:
    """The explicit Arrow schema of a published split, with the ``datasets`` features in its metadata."""
    return _features().arrow_schema


def sample_to_row(sample: Sample) -> dict[str, Any]:
    """One Sample as a row of :func:`arrow_schema`."""
    image = sample.image or Image()
    return {
        "id": sample.id,
        "claim": sample.claim,
        "post_text": sample.post_text,
        "post_url": sample.post_url,
        "image": {"bytes": image.bytes, "path": None} if image.bytes else None,
        "image_path": image.path,
        "image_link": image.link,
        "image_sha256": image.sha256,
        "image_width": image.width,
        "image_height": image.height,
        "video_link": sample.video_link,
        "label": str(sample.label) if sample.label else None,
        "label_original": sample.label_original,
        "category": sample.category,
        "claim_time": sample.claim_time,
        "news_url": sample.news_url,
        "reasoning_logic": sample.reasoning_logic,
        "key_points": sample.key_points,
        "evidence": [e.model_dump() for e in sample.evidence],
        "ocr": sample.ocr,
        "image_required": sample.image_required,
        "watermarked": sample.watermarked,
        "watermark_keywords": sample.watermark_keywords,
        "cluster_id": sample.cluster_id,
        "split": sample.split,
        "subset": sample.subset,
        "provenance": sample.provenance.model_dump(),
        "extra": json.dumps(sample.extra, ensure_ascii=False, sort_keys=True) if sample.extra else None,
        "schema_version": sample.schema_version,
    }


def row_to_sample(row: dict[str, Any]) -> Sample:
    """A Parquet row (as ``pyarrow`` gives it, image undecoded) back to a Sample."""
    image_cell = row.get("image") or {}
    image = Image(
        bytes=image_cell.get("bytes") if isinstance(image_cell, dict) else None,
        path=row.get("image_path"),
        link=row.get("image_link"),
        sha256=row.get("image_sha256"),
        width=row.get("image_width"),
        height=row.get("image_height"),
    )
    has_image = any(v is not None for v in image.model_dump().values())
    return Sample(
        id=row["id"],
        claim=row["claim"],
        post_text=row.get("post_text"),
        post_url=row.get("post_url"),
        image=image if has_image else None,
        video_link=row.get("video_link"),
        label=row.get("label"),
        label_original=row.get("label_original"),
        category=row.get("category"),
        claim_time=row.get("claim_time"),
        news_url=row["news_url"],
        reasoning_logic=row.get("reasoning_logic"),
        key_points=row.get("key_points"),
        evidence=[Evidence(**e) for e in row.get("evidence") or []],
        ocr=row.get("ocr"),
        image_required=row.get("image_required"),
        watermarked=row.get("watermarked"),
        watermark_keywords=row.get("watermark_keywords") or [],
        cluster_id=row.get("cluster_id"),
        split=row.get("split"),
        subset=row.get("subset"),
        provenance=Provenance(**(row.get("provenance") or {"backend": "unknown"})),
        extra=json.loads(row["extra"]) if row.get("extra") else {},
        schema_version=row.get("schema_version") or "1.0",
    )


def samples_to_table(samples: Iterable[Sample]) -> pa.Table:
    """Samples as an Arrow table with the explicit published schema."""
    return pa.Table.from_pylist([sample_to_row(s) for s in samples], schema=arrow_schema())


def write_parquet(path: str | os.PathLike[str], samples: Iterable[Sample]) -> int:
    """Write samples to one zstd Parquet file atomically; returns the row count."""
    table = samples_to_table(samples)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP_SIZE)
    return table.num_rows


def read_parquet(path: str | os.PathLike[str]) -> list[Sample]:
    """Samples of one Parquet split file."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise RecordError(f"not a readable Parquet file: {exc}", source=str(path)) from exc
    return [row_to_sample(row) for row in table.to_pylist()]


def read_samples(path: str | os.PathLike[str]) -> list[Sample]:
    """Samples from a released RW-Post JSONL file, a JSONL of our Sample records, or a Parquet split."""
    from rwpost.rwpost_format import read_released

    target = Path(path)
    if not target.exists():
        raise RecordError("file not found", source=str(path))
    if target.suffix == ".parquet":
        return read_parquet(target)
    first = next(iter_jsonl(target), None)
    if first is None:
        return []
    if isinstance(first[1], dict) and "provenance" in first[1] and "schema_version" in first[1]:
        out = []
        for line, obj in iter_jsonl(target):
            try:
                out.append(Sample.model_validate(obj))
            except ValueError as exc:
                raise RecordError(f"not a Sample record: {exc}", source=str(path), line=line) from exc
        return out
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
    if target.suffix == ".parquet" and target.exists():
        file = target
    else:
        file = split_file(resolve_version_dir(path_or_version, root), subset, split)
    # Cache by content: a version rebuilt in place must never be served from a stale datasets cache.
    cache_dir = Path(hf.config.HF_DATASETS_CACHE) / "rwpost" / sha256_file(file)[:16]
    return hf.load_dataset("parquet", data_files={split: str(file)}, split=split, cache_dir=str(cache_dir))
