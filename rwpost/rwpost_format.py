"""Import and export of the RW-Post authors' released JSONL (flat records and the nested demo format).

Flat records (``rwpost_dev_main.jsonl``) carry ``claim, post_text, image_address, image_link, label,
reasoning_logic, key_points, fact_checking_evidence[{type, content, source, url}], claim_time, OCR,
category, news_url, post_link``. The demo format nests the generation steps under
``steps_in_groundtruth_generated`` (Post, Sub_step_1..8, motivation).

Reading maps each line to a :class:`~rwpost.records.Sample`. Whatever our typed columns cannot express
exactly (the string ``"None"`` for a missing URL, extra generation steps, a non-string ``label_original``)
is kept as a minimal patch in ``Sample.extra["released"]``, so exporting gives back every field value of
the source line (tested on the real files).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from rwpost.errors import RecordError, UnknownRatingError
from rwpost.ids import record_id
from rwpost.io import decode_line, iter_jsonl, iter_lines, parse_json_line
from rwpost.labels import map_rating
from rwpost.records import Evidence, Image, Provenance, Reject, Sample

ReleasedFormat = Literal["flat", "demo"]
_PATCH = "released"
REPAIRED = "repaired_text"
"""``Sample.extra`` key of the text repaired at import: each repaired field's path, its text as released."""
_NONE_STRINGS = {"None", "none", "null", ""}
_PARQUET_MAGIC = b"PAR1"
"""The first bytes of every Parquet file."""


def detect_format(obj: dict[str, Any]) -> ReleasedFormat:
    """Which released layout a JSON object uses."""
    return "demo" if "steps_in_groundtruth_generated" in obj else "flat"


def _clean_url(value: Any) -> str | None:
    """A URL field as a string, or None where the release writes "None", null or nothing."""
    if value is None or (isinstance(value, str) and value.strip() in _NONE_STRINGS):
        return None
    return str(value).strip()


def _parse_date(value: Any) -> date | None:
    """``claim_time`` as a date; the release writes ISO dates (YYYY-MM-DD) or null."""
    if value in (None, ""):
        return None
    match = re.match(r"^(\d{4})-(\d{2})-(\d{2})", str(value))
    if not match:
        raise ValueError(f"expected an ISO date YYYY-MM-DD, found {value!r}")
    return date(int(match[1]), int(match[2]), int(match[3]))


def _map_label(raw: Any) -> Any:
    """Released label word -> RW-Post label (None for excluded ratings such as SATIRE)."""
    return map_rating(str(raw)).label


# --- patches: the minimal difference between a source object and what we regenerate ---------------


def make_patch(original: Any, regenerated: Any) -> Any:
    """A patch that turns ``regenerated`` back into ``original`` (None when they are equal)."""
    if original == regenerated and type(original) is type(regenerated):
        return None
    if isinstance(original, dict) and isinstance(regenerated, dict):
        patch: dict[str, Any] = {}
        for key in original.keys() | regenerated.keys():
            if key not in original:
                patch[key] = {"$del": True}
            elif key not in regenerated:
                patch[key] = {"$set": original[key]}
            else:
                sub = make_patch(original[key], regenerated[key])
                if sub is not None:
                    patch[key] = sub
        return {"$patch": patch} if patch else None
    if isinstance(original, list) and isinstance(regenerated, list) and len(original) == len(regenerated):
        items = {str(i): make_patch(a, b) for i, (a, b) in enumerate(zip(original, regenerated, strict=True))}
        items = {i: p for i, p in items.items() if p is not None}
        return {"$items": items} if items else None
    return {"$set": original}


def apply_patch(value: Any, patch: Any) -> Any:
    """Apply a patch made by :func:`make_patch`."""
    if patch is None:
        return value
    if "$set" in patch:
        return patch["$set"]
    if "$items" in patch:
        return [apply_patch(item, patch["$items"].get(str(i))) for i, item in enumerate(value)]
    out = dict(value) if isinstance(value, dict) else {}
    for key, sub in patch["$patch"].items():
        if isinstance(sub, dict) and sub.get("$del"):
            out.pop(key, None)
        else:
            out[key] = apply_patch(out.get(key), sub)
    return out


# --- flat format -----------------------------------------------------------------------------------


def _evidence_from_flat(items: list[dict[str, Any]]) -> list[Evidence]:
    return [
        Evidence(
            id=i,
            type=str(item.get("type") or ""),
            content=item.get("content"),
            source=item.get("source"),
            url=_clean_url(item.get("url")),
        )
        for i, item in enumerate(items, start=1)
    ]


def _sample_from_flat(obj: dict[str, Any], source: str) -> Sample:
    addresses = obj.get("image_address") or []
    image = Image(path=addresses[0] if addresses else None, link=_clean_url(obj.get("image_link")))
    return Sample(
        id=record_id(obj["news_url"]),
        claim=obj["claim"],
        post_text=obj.get("post_text"),
        post_url=_clean_url(obj.get("post_link")),
        image=image,
        label=_map_label(obj["label"]),
        label_original=obj["label"],
        category=obj.get("category"),
        claim_time=_parse_date(obj.get("claim_time")),
        news_url=obj["news_url"],
        reasoning_logic=obj.get("reasoning_logic"),
        key_points=obj.get("key_points"),
        evidence=_evidence_from_flat(obj.get("fact_checking_evidence") or []),
        ocr=obj.get("OCR"),
        provenance=Provenance(backend="released", source=source),
    )


# --- mis-decoded text ------------------------------------------------------------------------------


def repair_text(sample: Sample) -> dict[str, str]:
    """Repair mojibake in a sample's text fields in place (the release has UTF-8 read as Mac Roman, e.g. the
    category "Risqu√© Business"); returns each repaired field's path and its text as released.

    Only mis-decoded text is changed (ftfy's ``fix_encoding``: no quote, width or Unicode normalisation)."""
    from ftfy import fix_encoding

    repaired: dict[str, str] = {}

    def fix(path: str, value: str | None) -> str | None:
        if not value:
            return value
        fixed = fix_encoding(value)
        if fixed != value:
            repaired[path] = value
        return fixed

    for name in ("claim", "post_text", "category", "label_original", "reasoning_logic", "ocr"):
        setattr(sample, name, fix(name, getattr(sample, name)))
    if sample.key_points:
        sample.key_points = [fix(f"key_points.{i}", k) or k for i, k in enumerate(sample.key_points)]
    for i, item in enumerate(sample.evidence):
        for name in ("description", "content", "source"):
            setattr(item, name, fix(f"evidence.{i}.{name}", getattr(item, name)))
    return repaired


def to_flat(sample: Sample) -> dict[str, Any]:
    """A sample in the authors' flat released layout (the patch kept at import is applied)."""
    image = sample.image or Image()
    obj: dict[str, Any] = {
        "claim": sample.claim,
        "post_text": sample.post_text,
        "image_address": [image.path] if image.path else [],
        "image_link": image.link if image.link is not None else "None",
        "label": sample.label_original if sample.label_original is not None else _released_label(sample),
        "reasoning_logic": sample.reasoning_logic,
        "key_points": sample.key_points,
        "fact_checking_evidence": [
            {"type": e.type, "content": e.content, "source": e.source, "url": e.url} for e in sample.evidence
        ],
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else None,
        "OCR": sample.ocr,
        "category": sample.category,
        "news_url": sample.news_url,
        "post_link": sample.post_url if sample.post_url is not None else "None",
    }
    if sample.key_points is None:
        del obj["key_points"]
    patch = sample.extra.get(_PATCH) if sample.extra.get("released_format") == "flat" else None
    return apply_patch(obj, patch)


def _released_label(sample: Sample) -> str | None:
    return str(sample.label).upper() if sample.label else None


# --- demo (nested) format --------------------------------------------------------------------------


def _evidence_from_demo(items: list[dict[str, Any]]) -> list[Evidence]:
    out = []
    for i, item in enumerate(items, start=1):
        raw_id = item.get("evidence_id", i)
        out.append(
            Evidence(
                id=int(raw_id) if str(raw_id).isdigit() else i,
                type=str(item.get("evidence_type") or ""),
                description=item.get("evidence_description"),
                content=item.get("evidence_content"),
                source=item.get("evidence_source"),
                url=_clean_url(item.get("evidence_url")),
            )
        )
    return out


def _sample_from_demo(obj: dict[str, Any], source: str) -> Sample:
    steps = obj.get("steps_in_groundtruth_generated") or {}
    post = steps.get("Post") or {}
    rationale = steps.get("Sub_step_1") or {}
    addresses = post.get("image_address") or []
    necessity = obj.get("image_required")
    return Sample(
        id=record_id(obj["news_url"]),
        claim=obj["claim"],
        post_text=post.get("text"),
        post_url=_clean_url(post.get("post_link")),
        image=Image(path=addresses[0] if addresses else None, link=_clean_url(post.get("image_link"))),
        video_link=_clean_url(post.get("video_link")),
        label=_map_label(obj["label"]),
        label_original=str(obj.get("label_original")) if obj.get("label_original") is not None else None,
        category=obj.get("category"),
        claim_time=_parse_date(obj.get("claim_time")),
        news_url=obj["news_url"],
        reasoning_logic=rationale.get("reasoning_logic"),
        key_points=rationale.get("key_points"),
        evidence=_evidence_from_demo((steps.get("Sub_step_5") or {}).get("fact_checking_evidence") or []),
        ocr=post.get("OCR"),
        image_required=necessity if necessity in ("yes", "no", "uncertain") else None,
        watermarked=post.get("watermarked_gpt"),
        watermark_keywords=list(post.get("matched_keywords") or []),
        provenance=Provenance(backend="released", source=source),
    )


def to_demo(sample: Sample) -> dict[str, Any]:
    """A sample in the authors' nested demo layout (the patch kept at import is applied)."""
    image = sample.image or Image()
    post = {
        "text": sample.post_text,
        "image_link": image.link,
        "video_link": sample.video_link,
        "post_link": sample.post_url,
        "image_address": [image.path] if image.path else [],
        "watermarked_gpt": sample.watermarked,
        "matched_keywords": list(sample.watermark_keywords),
        "OCR": sample.ocr,
    }
    evidence = [
        {
            "evidence_id": e.id,
            "evidence_type": e.type,
            "evidence_description": e.description,
            "evidence_content": e.content,
            "evidence_source": e.source,
            "evidence_url": e.url,
        }
        for e in sample.evidence
    ]
    obj = {
        "news_url": sample.news_url,
        "claim": sample.claim,
        "post_url": sample.post_url,
        "category": sample.category,
        "label": _released_label(sample),
        "steps_in_groundtruth_generated": {
            "Post": post,
            "Sub_step_1": {"reasoning_logic": sample.reasoning_logic, "key_points": sample.key_points or []},
            "Sub_step_5": {"fact_checking_evidence": evidence},
        },
        "label_original": sample.label_original,
        "image_required": sample.image_required,
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else None,
    }
    patch = sample.extra.get(_PATCH) if sample.extra.get("released_format") == "demo" else None
    return apply_patch(obj, patch)


# --- reading and writing ---------------------------------------------------------------------------


def sample_from_released(obj: Any, source: str = "", line: int | None = None) -> Sample:
    """Convert one released JSON object to a Sample (mis-decoded text repaired, the repair kept in
    ``extra["repaired_text"]``); a malformed object raises :class:`RecordError`."""
    if not isinstance(obj, dict):
        raise RecordError(f"expected a JSON object, found {type(obj).__name__}", source=source, line=line)
    for key in ("news_url", "claim", "label"):
        if not obj.get(key) or not isinstance(obj[key], str):
            raise RecordError(
                f"missing or non-text required field (found {obj.get(key)!r})",
                source=source,
                line=line,
                field=key,
            )
    fmt = detect_format(obj)
    try:
        sample = _sample_from_demo(obj, source) if fmt == "demo" else _sample_from_flat(obj, source)
    except UnknownRatingError as exc:
        raise RecordError(str(exc), source=source, line=line, field="label") from exc
    except (ValidationError, ValueError, TypeError, AttributeError, KeyError) as exc:
        raise RecordError(
            f"cannot read record: {_short(exc)}",
            source=source,
            line=line,
            record_id=record_id(obj["news_url"]),
        ) from exc
    sample.extra["released_format"] = fmt
    repaired = repair_text(sample)
    if repaired:  # the patch below keeps the released text too, so an export gives the release back
        sample.extra[REPAIRED] = repaired
    regenerated = to_demo(sample) if fmt == "demo" else to_flat(sample)
    patch = make_patch(obj, regenerated)
    if patch is not None:
        sample.extra[_PATCH] = patch
    return sample


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
    return str(exc)


def iter_released(path: str | Path, rejects: list[Reject] | None = None) -> Iterator[Sample]:
    """Yield the Samples of a released JSONL file.

    A malformed line, or a second record of an article already read (the same ``news_url``, hence the
    same sample id), raises :class:`RecordError` (file and line in the message), unless ``rejects`` is
    given: then it is appended there with its reason and raw text, and reading goes on (``--skip-bad``).
    """
    source = str(path)
    first_line: dict[str, int] = {}
    for number, raw in iter_lines(path):
        if number == 1 and raw.startswith(_PARQUET_MAGIC):
            raise RecordError(
                "a Parquet file, not the released JSONL (rwpost export-released turns a split into JSONL)",
                source=source,
            )
        text = raw.decode("utf-8", errors="replace")
        try:
            text = decode_line(raw, source, number)
            if not text.strip():
                continue
            obj = parse_json_line(text, source, number)
            sample = sample_from_released(obj, source=Path(path).name, line=number)
            if sample.id in first_line:
                raise RecordError(
                    f"duplicate record: same news_url as line {first_line[sample.id]}",
                    source=source,
                    line=number,
                    record_id=sample.id,
                )
            first_line[sample.id] = number
            yield sample
        except RecordError as exc:
            if rejects is None:
                if exc.source != source:
                    exc = RecordError(
                        exc.problem, source=source, line=number, record_id=exc.record_id, field=exc.field
                    )
                raise exc from None
            rejects.append(
                Reject(
                    stage="import",
                    reason=exc.problem,
                    source=source,
                    line=number,
                    id=exc.record_id,
                    data=text.rstrip("\r\n"),
                )
            )


def read_released(path: str | Path, rejects: list[Reject] | None = None) -> list[Sample]:
    """All Samples of a released JSONL file (see :func:`iter_released`)."""
    return list(iter_released(path, rejects))


def export_released(samples: list[Sample], fmt: ReleasedFormat | None = None) -> list[dict[str, Any]]:
    """Samples as released JSON objects, each in ``fmt`` or, by default, the layout it was imported from."""
    out = []
    for sample in samples:
        chosen = fmt or sample.extra.get("released_format", "flat")
        out.append(to_demo(sample) if chosen == "demo" else to_flat(sample))
    return out


__all__ = [
    "detect_format",
    "export_released",
    "iter_jsonl",
    "iter_released",
    "read_released",
    "sample_from_released",
    "to_demo",
    "to_flat",
]
