"""FakeSV (Qi et al., AAAI 2023) and FakeTT (Bu et al., ACM MM 2024) from their released layouts, the
temporal split FactGuard evaluates on, and the papers' scores.

Both releases (``ICTMCG/FakeSV``; FakeTT through ``ICTMCG/FakingRecipe``; each on application) are one
folder: a JSON-lines annotation file, one record per video, beside a folder of ``<video_id>.mp4`` files and,
optionally, the temporal split lists ``vid_time3_{train,val,test}.txt`` (one video id a line). A FakeSV
record (``data_complete.json``; the fields read here)::

    {"video_id": "7041921581278416158", "title": "...", "keywords": "100多颗恒星离奇消失",
     "annotation": "假", "publish_time_norm": 1639480251000, "ocr": "..."}

``annotation`` is 真 (real), 假 (fake) or 辟谣 (a debunking video: no label, left out as the benchmark's
code does). A FakeTT record (``data.json``)::

    {"video_id": "7332393503843962144", "description": "UFO recorded in Romania #ufo",
     "event": "UFO spotted in Romania", "annotation": "fake", "publish_time": 1707225960000}

:func:`read_fakesv` and :func:`read_fakett` give runner samples: the title (FakeSV; else the description)
or description (FakeTT; else the title) as the claim, real -> True and fake -> False, FakeSV's ``keywords``
or FakeTT's ``event`` as the category, ``ocr`` (when a record has it) as the sample's OCR text, the publish
date (``publish_time_norm`` / ``publish_time``: Unix seconds or milliseconds, or an ISO date) as the claim
time (the leakage guard's cutoff), and the video as ``video_link`` (``<video_id>.mp4``, found in the video
folder, the run's media folder). A bad record is one :class:`~rwpost.errors.RecordError` naming file,
line and field.

Splits (FactGuard, section 4.1, after Qi et al.): ``test`` is the most recent 15 % of the labelled videos,
``train`` the rest, ``all`` everything. When the folder holds the release's ``vid_time3_test.txt`` its ids
are the test split (the published temporal split); otherwise the split is computed from the publish times.

:func:`paper_scores` reads the papers' four scores (accuracy, and the fake class's precision, recall and F1:
the F1 of Table 1 is the harmonic mean of its precision and recall) from a run's ``metrics.json``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import record_object
from rwpost.evaluate.datasets.spaces import LabelSpace, space_of_labels
from rwpost.io import iter_jsonl, iter_lines
from rwpost.labels import Label
from rwpost.records import Provenance, Sample

TEST_SHARE = 0.15
"""The share of most recent videos held out for testing (FactGuard section 4.1)."""

SPLITS: tuple[str, ...] = ("test", "train", "all")

VIDEO_FOLDERS: tuple[str, ...] = ("videos", "video")
"""Where a release keeps its video files, beside the annotations (the folder itself when neither)."""

SPLIT_FOLDERS: tuple[str, ...] = (".", "data-split", "data-split/temporal", "vids")
"""Where a release keeps ``vid_time3_test.txt``, relative to the folder."""


@dataclass(frozen=True)
class Layout:
    """One benchmark's JSON-lines layout: file names, the fields read and the label spelling."""

    name: str
    files: tuple[str, ...]
    """Annotation file names, the first present is read."""
    claim: tuple[str, ...]
    """Text fields tried in order for the claim."""
    event: str
    time: str
    labels: Mapping[str, Label | None]
    """``annotation`` -> the runner's label (None: left out, counted as unlabelled)."""


FAKESV = Layout(
    "fakesv",
    ("data_complete.json", "data_complete.jsonl", "data.json", "data.jsonl"),
    ("title", "description"),
    "keywords",
    "publish_time_norm",
    {"真": Label.TRUE, "假": Label.FALSE, "辟谣": None},
)
FAKETT = Layout(
    "fakett",
    ("data.json", "data.jsonl", "data_complete.json", "data_complete.jsonl"),
    ("description", "title"),
    "event",
    "publish_time",
    {"real": Label.TRUE, "fake": Label.FALSE},
)


def space(layout: Layout) -> LabelSpace:
    """The layout's label space: its annotations that have a label (FakeSV's 辟谣 has none), every sample."""
    labels = {k: v for k, v in layout.labels.items() if v is not None}
    return space_of_labels(
        layout.name, f"{layout.name}'s annotation ({', '.join(labels)}), every sample", labels
    )


FAKE_CLASSES = (str(Label.FALSE), "假", "fake")
"""The fake class's name in a primary view: RW-Post's, FakeSV's, FakeTT's and FakeVV's."""


def annotation_file(layout: Layout, root: str | Path) -> Path:
    """The release's annotation file in ``root`` (ConfigError naming the names looked for)."""
    for name in layout.files:
        if (Path(root) / name).is_file():
            return Path(root) / name
    raise ConfigError(
        f"{root}: no {layout.name} annotations ({' or '.join(layout.files)}); give the release's folder"
    )


def video_folder(root: str | Path) -> Path:
    """The release's video folder (``videos/`` or ``video/``), else ``root``."""
    for name in VIDEO_FOLDERS:
        if (Path(root) / name).is_dir():
            return Path(root) / name
    return Path(root)


def published(value: Any) -> datetime | None:
    """A publish time (Unix seconds or milliseconds, or an ISO date) as a UTC time; None if absent or
    unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.isdigit():
            return published(int(text))
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def _record(layout: Layout, row: Any, path: Path, line: int) -> tuple[Sample, datetime | None]:
    """The sample of one record and its publish time."""
    row, bad = record_object(row, path, line)
    video_id = row.get("video_id")
    if isinstance(video_id, int) and not isinstance(video_id, bool):
        video_id = str(video_id)
    if not isinstance(video_id, str) or not video_id.strip() or "/" in video_id or "\\" in video_id:
        raise bad(f"expected a video id, found {row.get('video_id')!r}", "video_id")
    video_id = video_id.strip()
    annotation = row.get("annotation")
    if annotation not in layout.labels:
        raise bad(f"expected one of {', '.join(layout.labels)}, found {annotation!r}", "annotation")
    claim = next((row[k].strip() for k in layout.claim if isinstance(row.get(k), str) and row[k].strip()), "")
    if not claim:
        raise bad(f"no text: {' and '.join(layout.claim)} are empty", layout.claim[0])
    event, ocr, moment = row.get(layout.event), row.get("ocr"), published(row.get(layout.time))
    sample = Sample(
        id=f"{layout.name}-{video_id}",
        claim=claim,
        ocr=ocr.strip() or None if isinstance(ocr, str) else None,
        video_link=f"{video_id}.mp4",
        label=layout.labels[annotation],
        label_original=str(annotation),
        category=event.strip() or None if isinstance(event, str) else None,
        claim_time=moment.date() if moment else None,
        news_url=f"urn:{layout.name}:{video_id}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={"video_id": video_id},
    )
    return sample, moment


def _test_ids(root: Path) -> tuple[Path, set[str]] | None:
    """The release's temporal test split (``vid_time3_test.txt``) and its ids, when the folder has it."""
    for folder in SPLIT_FOLDERS:
        path = root / folder / "vid_time3_test.txt"
        if path.is_file():
            ids = {raw.decode("utf-8", "replace").strip() for _, raw in iter_lines(path)}
            return path, ids - {""}
    return None


TIME_FORMATS = "Unix seconds or milliseconds, or an ISO date such as 2021-12-14 or 2021-12-14T10:30:00Z"
"""The publish times :func:`published` reads, as errors name them."""


def temporal_test(
    samples: list[Sample], times: Mapping[str, datetime | None], source: Path, field: str | None = None
) -> set[str]:
    """The ids of the most recent :data:`TEST_SHARE` of ``samples`` by publish time (ties by id); a sample
    without a readable time is an error naming its line, the time's ``field`` and the formats read (the
    split needs every time)."""
    for s in samples:
        if times[s.id] is None:
            raise RecordError(
                f"no readable publish time (expected {TIME_FORMATS}; the temporal split needs one, or the "
                "release's vid_time3_test.txt)",
                source=str(source),
                line=int(s.provenance.source.rsplit(":", 1)[1]),
                field=field,
            )
    ordered = sorted(samples, key=lambda s: (times[s.id], s.id))
    n_test = math.ceil(len(ordered) * TEST_SHARE)
    return {s.id for s in ordered[len(ordered) - n_test :]}


def read_layout(layout: Layout, root: str | Path, split: str = "test") -> list[Sample]:
    """The split's samples of a FakeSV-like release in ``root`` (see the module docstring)."""
    if split not in SPLITS:
        raise ConfigError(f"{layout.name} has no split {split!r} (have: {', '.join(SPLITS)})")
    root = Path(root)
    path = annotation_file(layout, root)
    samples, times, seen = [], {}, {}
    for line, row in iter_jsonl(path):
        sample, moment = _record(layout, row, path, line)
        if sample.id in seen:
            raise RecordError(
                f"video id repeats line {seen[sample.id]}", source=str(path), line=line, field="video_id"
            )
        seen[sample.id] = line
        samples.append(sample)
        times[sample.id] = moment
    if split == "all":
        return samples
    labelled = [s for s in samples if s.label is not None]
    released = _test_ids(root)
    if released is not None:
        test = {f"{layout.name}-{vid}" for vid in released[1]}
    else:
        test = temporal_test(labelled, times, path, layout.time)
    return [s for s in labelled if (s.id in test) == (split == "test")]


def read_fakesv(root: str | Path, split: str = "test") -> list[Sample]:
    """FakeSV's split from the release folder ``root``."""
    return read_layout(FAKESV, root, split)


def read_fakett(root: str | Path, split: str = "test") -> list[Sample]:
    """FakeTT's split from the release folder ``root``."""
    return read_layout(FAKETT, root, split)


def paper_scores(metrics: Mapping[str, Any]) -> dict[str, float]:
    """FactGuard's Table 1 scores from a run's ``metrics.json`` (its primary view): accuracy, and the
    precision, recall and F1 of the fake class (``False``)."""
    view = metrics["views"][metrics["primary_view"]]
    fake = next(view["per_class"][c] for c in FAKE_CLASSES if c in view["per_class"])
    return {
        "accuracy": float(view["accuracy"]),
        "precision": float(fake["precision"]),
        "recall": float(fake["recall"]),
        "f1": float(fake["f1"]),
    }


def own_scores(samples: Any, predictions: Any, metrics: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """The registry's ``own_scores``: :func:`paper_scores` (FactGuard's Table 1 columns)."""
    return {"FactGuard Table 1 (fake class)": paper_scores(metrics)} if metrics.get("primary_view") else {}


def adapter_parts(layout: Layout) -> dict[str, Callable[..., Any]]:
    """The registry callables of a FakeSV-like layout: the annotation file, the reader, the video folder."""
    return {
        "source": lambda folder, split: annotation_file(layout, folder),
        "read": lambda folder, split: read_layout(layout, folder, split),
        "media_root": lambda folder, split: video_folder(folder),
    }


__all__ = [
    "FAKESV",
    "FAKETT",
    "SPLITS",
    "TEST_SHARE",
    "Layout",
    "adapter_parts",
    "annotation_file",
    "own_scores",
    "paper_scores",
    "published",
    "read_fakesv",
    "read_fakett",
    "read_layout",
    "temporal_test",
    "video_folder",
]
