"""NewsCLIPpings (Luo et al., EMNLP 2021) from its released layout: out-of-context image-caption pairs.

The release (``g-luo/news_clippings``, README "Data Format") holds only the pairings; captions and images
come from the user's VisualNews copy. The folder given to ``--data newsclippings:FOLDER`` is laid out as
the README shows::

    FOLDER/news_clippings/data/merged_balanced/{train,val,test}.json
    FOLDER/visual_news/origin/data.json      # VisualNews: [{"id", "caption", "image_path", "topic", ...}]
    FOLDER/visual_news/origin/<source>/images/...

A split file is ``{"annotations": [{"id", "image_id", "similarity_score", "falsified", "source_dataset"},
...]}``: ``id`` is the VisualNews record whose caption is used, ``image_id`` the one whose image is shown
(``image_path`` like ``./bbc/images/0013/600.jpg``, relative to ``visual_news/origin``), ``falsified``
whether the pair is a generated mismatch. Every even annotation is pristine and the next its falsified twin.
Record fields read: those five of an annotation, and VisualNews' ``caption`` (the claim), ``image_path`` and
``topic`` (the category).

The paper scores the task as binary OOC classification (Table III, "OOC"): a pristine pair is the runner's
``True`` and a falsified one ``False``, so the ``binary`` view is Table III's. The original
(``pristine``/``falsified``) is the sample's ``label_original``; the pairing ids, ``similarity_score`` and
``source_dataset`` are in ``extra`` (both blinded). The paper scored 1,000 sampled pairs of the
``merged_balanced`` split (section V-A; the sample itself is not released); this adapter reads the whole
split. A bad annotation, or one naming a VisualNews id that ``data.json`` lacks, is one
:class:`~rwpost.errors.RecordError` naming the file, line, annotation index (the released split files are
one line) and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import json_records
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.labels import Label
from rwpost.records import Image, Provenance, Sample

SUBSPLIT = "merged_balanced"
"""The NewsCLIPpings split the paper and DEFAME score (``data/merged_balanced``)."""

LABELS = {False: ("pristine", Label.TRUE), True: ("falsified", Label.FALSE)}
"""``falsified`` -> (the original class name, the runner's label)."""

SPACE = LabelSpace(
    name="newsclippings",
    description="NewsCLIPpings' label (pristine, falsified), every pair",
    classes=("pristine", "falsified"),
    from_label={Label.TRUE: "pristine", Label.FALSE: "falsified"},
)
"""NewsCLIPpings' label space (``falsified`` false is ``pristine``); RW-Post's True and False stand for
them."""


def media_root(root: str | Path, split: str = "test") -> Path:
    """``<root>/visual_news/origin``: VisualNews' ``image_path`` values are relative to it."""
    return Path(root) / "visual_news" / "origin"


def split_file(root: str | Path, split: str) -> Path:
    """``<root>/news_clippings/data/merged_balanced/<split>.json``."""
    path = Path(root) / "news_clippings" / "data" / SUBSPLIT / f"{split}.json"
    if not path.is_file():
        raise ConfigError(
            f"{path}: not found; give the folder holding news_clippings/data/{SUBSPLIT}/ and "
            "visual_news/origin/"
        )
    return path


def _visual_news(root: Path) -> tuple[Path, dict[int, tuple[int, dict[str, Any]]]]:
    """VisualNews' ``data.json`` by id: ``id -> (line, record)``."""
    path = media_root(root) / "data.json"
    if not path.is_file():
        raise ConfigError(
            f"{path}: not found; NewsCLIPpings needs the VisualNews copy beside news_clippings/"
        )
    found: dict[int, tuple[int, dict[str, Any]]] = {}
    for line, row in json_records(path):
        if not isinstance(row, dict) or not isinstance(row.get("id"), int) or isinstance(row["id"], bool):
            raise RecordError(
                "expected an object with an integer id", source=str(path), line=line, field="id"
            )
        found[row["id"]] = (line, row)
    return path, found


def _sample(ann: Any, path: Path, line: int, index: int, split: str, news: tuple[Path, dict]) -> Sample:
    def bad(problem: str, field: str | None = None) -> RecordError:  # the released files are one line
        return RecordError(
            problem, source=str(path), line=line, record_id=f"annotations[{index}]", field=field
        )

    if not isinstance(ann, dict):
        raise bad(f"expected an object, found {type(ann).__name__}")
    if not isinstance(ann.get("falsified"), bool):
        raise bad(f"expected true or false, found {ann.get('falsified')!r}", "falsified")
    news_path, records = news
    found = {}
    for key, field in (("id", "caption"), ("image_id", "image_path")):
        ref = ann.get(key)
        if not isinstance(ref, int) or isinstance(ref, bool):
            raise bad(f"expected a VisualNews id, found {ref!r}", key)
        if ref not in records:
            raise bad(f"VisualNews id {ref} is not in {news_path}", key)
        news_line, record = records[ref]
        value = record.get(field)
        if not isinstance(value, str) or not value.strip():
            raise RecordError(
                f"expected text, found {value!r}", source=str(news_path), line=news_line, field=field
            )
        found[field] = (value, record)
    caption, caption_record = found["caption"]
    image_path = found["image_path"][0].removeprefix("./")
    original, label = LABELS[ann["falsified"]]
    pair = f"{ann['id']}-{ann['image_id']}"
    return Sample(
        id=f"ncp-{split}-{pair}",
        claim=caption,
        image=Image(path=image_path),
        label=label,
        label_original=original,
        category=caption_record.get("topic") if isinstance(caption_record.get("topic"), str) else None,
        news_url=f"urn:newsclippings:{split}:{pair}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={
            "caption_id": ann["id"],
            "image_id": ann["image_id"],
            "falsified": ann["falsified"],
            **{k: ann[k] for k in ("similarity_score", "source_dataset") if k in ann},
        },
    )


def read_newsclippings(root: str | Path, split: str = "test") -> list[Sample]:
    """The split's pairs as samples (images under :func:`media_root`, the runner's ``image_root``)."""
    path = split_file(root, split)
    rows = json_records(path, key="annotations")
    news = _visual_news(Path(root))
    return [_sample(ann, path, line, i, split, news) for i, (line, ann) in enumerate(rows)]


__all__ = ["LABELS", "media_root", "read_newsclippings", "split_file"]
