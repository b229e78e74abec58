"""ReMMDBench (``DDAI-D/ReMMDBench``) from its released layout, and its two tasks' own metrics.

The layout is the one the T2-Agent port (``DANG-ai/ReMMD-Agent``, ``t2-agent/``, Apache-2.0) reads
(``src/t2agent/data.py``, README section 7): one folder per sample, named by its id (``001`` .. ``500``)::

    ReMMDBench/<id>/annotation.json  {"verdict": "Mostly False", "distortion_taxonomy": ["T2 Distortion"],
                                      "rationale": "..."}
    ReMMDBench/<id>/sample.json      {"text": "...", "images": ["01_img_1.jpg", ...], "language_code": "de",
                                      "region_code": "germany", "theme_category": "...",
                                      "text_length_tier": "medium", "source_type": "...", "core_claim": "..."}
    ReMMDBench/<id>/images/<file>

Record fields read: ``verdict`` (five-way: True, Mostly True, Mixture, Mostly False, False; the port's
spellings ``mixed`` and ``half true`` are Mixture), ``distortion_taxonomy`` (eight labels, by name or code:
``T1`` .. ``C3``), ``rationale`` (the sample's rationale, never shown), ``text`` (the claim), ``images``
(or ``image_paths``: names under ``images/`` or the sample folder; the first is the sample's image, all of
them ``extra["images"]``) and the metadata fields above (``extra``; ``language_code`` is also the
category). A folder without ``annotation.json`` is not a sample (the port skips it too); one with it but
without ``sample.json``, an unknown verdict or taxonomy label, or an image path outside the sample folder
is one :class:`~rwpost.errors.RecordError` naming the file and field (the port would default the verdict to
Mixture, drop the label, or read the path as it is).

The label space is the five verdicts (:data:`SPACE`); RW-Post's label is the verdict through paper Table II
(the "mostly" ones are Mixture), an extra view. :func:`own_scores` gives both tasks as the port's
``labels.py`` computes them: ``verdict_metrics`` (accuracy over all rows, a failure wrong; macro precision,
recall and F1 over the rows with a valid answer, each class's score rounded to 4 places, averaged over the
five classes) and ``multilabel_metrics`` (a failure predicts no label; micro and macro over the eight).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets.spaces import LabelSpace, head_answer, spelling
from rwpost.io import read_json, sha256_file, sha256_hex
from rwpost.labels import Label, map_rating
from rwpost.records import Image, Provenance, Sample

VERDICTS: tuple[str, ...] = ("True", "Mostly True", "Mixture", "Mostly False", "False")
"""The five verdicts, in the port's order (``REALMMDBENCH_VERDICT_LABELS``)."""

TAXONOMY: tuple[str, ...] = (
    "T1 Fabrication",
    "T2 Distortion",
    "T3 Misleading Context",
    "V1 Synthetic Visual Content",
    "V2 Visual Editing",
    "C1 Semantic Inconsistency",
    "C2 Contextual Inconsistency",
    "C3 Pragmatic Inconsistency",
)
"""The eight distortion labels, in the port's order (``REALMMDBENCH_TAXONOMY_LABELS``)."""

VERDICT_ALIASES = {"mixed": "Mixture", "half true": "Mixture"}
"""The port's other spellings of a verdict (``_VERDICT_ALIASES``), keyed by :func:`spelling`."""

SPACE = LabelSpace(
    name="remmdbench_verdict",
    description="ReMMDBench's five-way verdict (True, Mostly True, Mixture, Mostly False, False), every "
    "sample, gold from annotation.json's verdict",
    classes=VERDICTS,
    gold=lambda s: s.extra.get("verdict"),
    from_label={Label.TRUE: "True", Label.FALSE: "False", Label.MIXTURE: "Mixture"},
    aliases=VERDICT_ALIASES,
)
"""ReMMDBench's label space: an RW-Post answer True, False or Mixture is that verdict; Unproven and
Outdated are none of the five (wrong answers)."""

_CODE = re.compile(r"^([TVC][1-3])\b", re.IGNORECASE)
_TAXONOMY_BY_KEY = {spelling(t): t for t in TAXONOMY} | {spelling(t.split(" ", 1)[1]): t for t in TAXONOMY}
_TAXONOMY_BY_CODE = {t.split(" ", 1)[0].lower(): t for t in TAXONOMY}
_NO_LABEL = {"none", "no label", "no labels", "no distortion"}


def verdict(value: Any) -> str | None:
    """A verdict's canonical spelling, or None when it is not one of the five."""
    return SPACE.canonical(value, VERDICTS) if isinstance(value, str) else None


def taxonomy(values: Any) -> list[str] | None:
    """Distortion labels in the port's order (by name, alias or code; ``None`` entries mean no label);
    None when one of them is no label of the eight."""
    if values is None:
        return []
    items = re.split(r"[,;|\n]+", values) if isinstance(values, str) else values
    if not isinstance(items, list):
        return None
    found = set()
    for item in items:
        key = spelling(item)
        if not key or key in _NO_LABEL:
            continue
        code = _CODE.match(str(item).strip())
        label = _TAXONOMY_BY_CODE.get(code[1].lower()) if code else _TAXONOMY_BY_KEY.get(key)
        if label is None:
            return None
        found.add(label)
    return [t for t in TAXONOMY if t in found]


def annotation_files(root: str | Path) -> list[Path]:
    """Every sample folder's ``annotation.json``, in the folders' order (the port's)."""
    folder = Path(root)
    found = sorted(p / "annotation.json" for p in folder.iterdir() if (p / "annotation.json").is_file())
    if not found:
        raise ConfigError(f"{folder}: no <id>/annotation.json below; give the ReMMDBench folder")
    return found


def source(root: str | Path, split: str = "all") -> Path:
    """The benchmark folder itself (its sample files are the run's data: :func:`fingerprint`)."""
    annotation_files(root)
    return Path(root)


def _files_sha256(paths: Sequence[Path], root: Path) -> str:
    """The checksum of files below ``root``: each one's path relative to it and its contents' sha256."""
    return sha256_hex("".join(f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}\n" for p in paths))


def fingerprint(root: str | Path, split: str = "all") -> str:
    """The checksum of every sample's ``annotation.json`` and ``sample.json`` (names and contents)."""
    files = [
        path
        for annotation in annotation_files(root)
        for path in (annotation, annotation.parent / "sample.json")
        if path.is_file()
    ]
    return _files_sha256(files, Path(root))


def _image_paths(folder: Path, raw: Any, where: Path) -> list[str]:
    """The sample's image paths relative to the benchmark folder (each inside its sample folder)."""
    names = raw if isinstance(raw, list) else [raw] if raw else []
    out = []
    inside = folder.resolve()
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise RecordError(
                f"expected an image file name, found {name!r}", source=str(where), field="images"
            )
        candidates = [folder / "images" / name, folder / name]
        found = next((c for c in candidates if c.is_file()), candidates[0])
        if Path(name).is_absolute() or not found.resolve().is_relative_to(inside):
            raise RecordError(
                f"image path {name!r} is outside the sample folder {folder}",
                source=str(where),
                field="images",
            )
        out.append(found.relative_to(folder.parent).as_posix())
    if not out and (folder / "images").is_dir():
        out = sorted(
            p.relative_to(folder.parent).as_posix()
            for p in (folder / "images").iterdir()
            if p.is_file() and p.suffix.lower() in {".png", ".jpg", ".jpeg", ".webp"}
        )
    return out


METADATA = ("language_code", "region_code", "theme_category", "text_length_tier", "source_type", "core_claim")
"""``sample.json``'s metadata fields, kept in ``extra`` (the port's ``metadata``)."""


def _gold(
    record: dict[str, Any], verdict_field: str, taxonomy_field: str, source: Path
) -> tuple[str, list[str]]:
    """A record's gold verdict and distortion taxonomy (annotation.json's, or a port run's copy of them);
    a value outside ReMMDBench's is a :class:`RecordError` naming ``source`` and the field."""
    found: list[Any] = []
    for field, read, expected in (
        (verdict_field, verdict, f"one of {', '.join(VERDICTS)}"),
        (taxonomy_field, taxonomy, f"labels of {', '.join(TAXONOMY)}"),
    ):
        value = read(record.get(field))
        if value is None:
            raise RecordError(
                f"expected {expected}, found {record.get(field)!r}", source=str(source), field=field
            )
        found.append(value)
    return found[0], found[1]


def _sample(annotation_path: Path) -> Sample:
    folder = annotation_path.parent
    annotation = read_json(annotation_path)
    if not isinstance(annotation, dict):
        raise RecordError("expected a JSON object", source=str(annotation_path), line=1)
    sample_path = folder / "sample.json"
    if not sample_path.is_file():
        raise RecordError(f"{sample_path.name} not found beside it", source=str(annotation_path))
    record = read_json(sample_path)
    if not isinstance(record, dict):
        raise RecordError("expected a JSON object", source=str(sample_path), line=1)
    said, labels = _gold(annotation, "verdict", "distortion_taxonomy", annotation_path)
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise RecordError(f"expected text, found {text!r}", source=str(sample_path), field="text")
    images = _image_paths(folder, record.get("images") or record.get("image_paths"), sample_path)
    meta = {k: record[k] for k in METADATA if record.get(k) is not None}
    return Sample(
        id=folder.name,
        claim=text.strip(),
        image=Image(path=images[0]) if images else None,
        label=map_rating(said).label,
        label_original=said,
        category=meta.get("language_code"),
        news_url=f"urn:remmdbench:{folder.name}",
        reasoning_logic=annotation.get("rationale") or None,
        provenance=Provenance(backend="released", source=f"{folder.name}/annotation.json"),
        extra={"verdict": said, "distortion_taxonomy": labels, "images": images, **meta},
    )


def read_remmdbench(root: str | Path, split: str = "all") -> list[Sample]:
    """Every sample folder's sample (images relative to ``root``, the runner's image root)."""
    return [_sample(path) for path in annotation_files(root)]


# --- the port's metrics (``src/t2agent/labels.py``) -------------------------------------------------


def predicted_taxonomy(prediction: Any) -> list[str] | None:
    """The taxonomy an explanation's first line names (``...; taxonomy: ['T1 Fabrication']``, ``none``: no
    label); None when it names none (a failure predicts no label, as the port counts an ``ERROR``)."""
    first = (prediction.explanation or "").split("\n", 1)[0]
    at = first.find("taxonomy: ")
    if at < 0 or prediction.label is None and head_answer(first) is None:
        return None
    text = first[at + len("taxonomy: ") :].strip()
    if text.lower() == "none":
        return []
    try:
        value = ast.literal_eval(text)  # the reader writes the port's list as Python writes it
    except (ValueError, SyntaxError):
        return None
    return taxonomy(value)


def verdict_scores(gold: Sequence[str], predicted: Sequence[str | None]) -> dict[str, float]:
    """The port's ``verdict_metrics``: accuracy over all rows (None: an ERROR, wrong), macro precision,
    recall and F1 over the valid rows, each class's score rounded to 4 places and averaged over the five."""
    valid = [(g, p) for g, p in zip(gold, predicted, strict=True) if p is not None]
    per = []
    for label in VERDICTS:
        tp = sum(g == label and p == label for g, p in valid)
        fp = sum(g != label and p == label for g, p in valid)
        fn = sum(g == label and p != label for g, p in valid)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per.append((round(precision, 4), round(recall, 4), round(f1, 4)))
    correct = sum(g == p for g, p in valid)
    return {
        "accuracy": round(correct / len(gold), 4) if gold else 0.0,
        "valid_accuracy": round(correct / len(valid), 4) if valid else 0.0,
        "macro_precision": round(sum(x[0] for x in per) / len(per), 4),
        "macro_recall": round(sum(x[1] for x in per) / len(per), 4),
        "macro_f1": round(sum(x[2] for x in per) / len(per), 4),
        "errors": float(len(gold) - len(valid)),
    }


def taxonomy_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str] | None]
) -> dict[str, float]:
    """The port's ``multilabel_metrics``: exact match, micro and macro precision, recall and F1 over the
    eight labels (a failure, None, predicts none), per-label scores rounded to 4 places."""
    rows = [(set(g), set(p or ())) for g, p in zip(gold, predicted, strict=True)]
    per, tp_all, fp_all, fn_all = [], 0, 0, 0
    for label in TAXONOMY:
        tp = sum(label in g and label in p for g, p in rows)
        fp = sum(label not in g and label in p for g, p in rows)
        fn = sum(label in g and label not in p for g, p in rows)
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per.append((round(precision, 4), round(recall, 4), round(f1, 4)))
    micro_p = tp_all / (tp_all + fp_all) if tp_all + fp_all else 0.0
    micro_r = tp_all / (tp_all + fn_all) if tp_all + fn_all else 0.0
    micro_f1 = 2 * micro_p * micro_r / (micro_p + micro_r) if micro_p + micro_r else 0.0
    exact = sum(p is not None and set(p) == set(g) for g, p in zip(gold, predicted, strict=True))
    return {
        "exact_match_accuracy": round(exact / len(rows), 4) if rows else 0.0,
        "micro_precision": round(micro_p, 4),
        "micro_recall": round(micro_r, 4),
        "micro_f1": round(micro_f1, 4),
        "macro_precision": round(sum(x[0] for x in per) / len(per), 4),
        "macro_recall": round(sum(x[1] for x in per) / len(per), 4),
        "macro_f1": round(sum(x[2] for x in per) / len(per), 4),
        "errors": float(sum(p is None for p in predicted)),
    }


def own_scores(
    samples: Sequence[Sample], predictions: Sequence[Any], metrics: Any = None
) -> dict[str, dict[str, float]]:
    """The registry's ``own_scores``: the verdict task always, the taxonomy task when some prediction names
    a taxonomy (the T2-Agent port's do); an answer that is no verdict counts as the port's ERROR."""
    gold = [s.extra["verdict"] for s in samples]
    answers = [SPACE.answer(p, VERDICTS) for p in predictions]
    out = {"verdict": verdict_scores(gold, [a if a in VERDICTS else None for a in answers])}
    named = [predicted_taxonomy(p) for p in predictions]
    if any(n is not None for n in named):
        out["taxonomy"] = taxonomy_scores([s.extra["distortion_taxonomy"] for s in samples], named)
    return out


__all__ = [
    "SPACE",
    "TAXONOMY",
    "VERDICTS",
    "fingerprint",
    "own_scores",
    "predicted_taxonomy",
    "read_remmdbench",
    "source",
    "taxonomy",
    "taxonomy_scores",
    "verdict",
    "verdict_scores",
]


# --- the gold a T2-Agent port run carries (``--data t2agent-port:RUN``, or no --data) ------------------


DETAIL = re.compile(r"^(\d+)_(.+)\.json$")
"""A port detail file's name: the sample's index and its (sanitized) id (``_detail_path``)."""


def detail_files(folder: Path) -> list[Path]:
    """The detail files of a ``details`` folder, in name order."""
    return sorted(p for p in folder.iterdir() if DETAIL.match(p.name))


def detail_folders(path: Path) -> list[Path]:
    """The ``details`` folders at or below ``path`` that hold detail files."""
    folders = [path] if path.name == "details" else sorted(p for p in path.rglob("details") if p.is_dir())
    return [f for f in folders if detail_files(f)]


def port_details(root: str | Path, split: str = "all") -> Path:
    """The run's one ``details`` folder (the port's ``<run>/details/<index>_<id>.json``)."""
    folders = detail_folders(Path(root))
    if len(folders) != 1:
        found = f"{len(folders)} details folders" if folders else "no details/<index>_<id>.json files"
        raise ConfigError(f"{root}: {found} of the T2-Agent port; give one run's folder")
    return folders[0]


def port_fingerprint(root: str | Path, split: str = "all") -> str:
    """The checksum of the run's detail files (the gold is read from them)."""
    folder = port_details(root, split)
    return _files_sha256(detail_files(folder), folder)


def read_port_gold(root: str | Path, split: str = "all") -> list[Sample]:
    """One sample per detail file, its gold the port's ``ground_truth_verdict`` and
    ``ground_truth_taxonomy`` (the port wrote them from annotation.json); the text is not in the file, so
    the claim is the port's ``core_claim`` metadata or a placeholder (these samples only score a run). A
    file that is not JSON, or has no ``sample_id``, is left to the predictions reader, which sets it aside
    with its reason. Ids are ReMMDBench's folder names, as the port writes them."""
    out = []
    for path in detail_files(port_details(root, split)):
        try:
            record = read_json(path)
        except RecordError:  # not UTF-8, not JSON, nested too deeply: the predictions reader sets it aside
            continue
        if not isinstance(record, dict) or not str(record.get("sample_id") or "").strip():
            continue
        said, labels = _gold(record, "ground_truth_verdict", "ground_truth_taxonomy", path)
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        rid = str(record["sample_id"]).strip()
        out.append(
            Sample(
                id=rid,
                claim=str(meta.get("core_claim") or f"ReMMDBench sample {rid} (text not in the run's files)"),
                label=map_rating(said).label,
                label_original=said,
                category=meta.get("language_code"),
                news_url=f"urn:remmdbench:{rid}",
                provenance=Provenance(backend="released", source=f"{path.name}"),
                extra={"verdict": said, "distortion_taxonomy": labels, "gold_from": "predictions file"},
            )
        )
    return out


PORT_GOLD_SPACE = LabelSpace(
    name=SPACE.name,
    description="ReMMDBench's five-way verdict, every row, gold from the predictions file's "
    "ground_truth_verdict (no --data given)",
    classes=VERDICTS,
    gold=SPACE.gold,
    from_label=SPACE.from_label,
    aliases=VERDICT_ALIASES,
)
"""The space of a port run scored against its own gold: the report says where the gold came from."""
