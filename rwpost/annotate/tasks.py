"""Labeling tasks from rwpost records: what each Label Studio project shows and how tasks are keyed.

Every task carries ``record_id`` in its data, which is how a rerun recognises tasks already imported and
how exported annotations find their record again. Images are copied, content-addressed, into the Local
Files document root and referenced as ``/data/local-files/?d=images/<sha256>.<ext>``.
"""

from __future__ import annotations

import html
import random
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.io import sha256_hex
from rwpost.records import Evidence, ExplanationItem, ExplanationOutput, Sample, TaggedArticle


@dataclass(frozen=True)
class ProjectSpec:
    """One Label Studio project: its title (the key for idempotent creation) and labeling config file."""

    key: str
    title: str
    config_file: str
    annotators_per_task: int
    description: str


PROJECTS: dict[str, ProjectSpec] = {
    spec.key: spec
    for spec in (
        ProjectSpec(
            "validation",
            "RW-Post: post and image validation",
            "validation.xml",
            2,  # paper III-D: each sample independently annotated by two reviewers
            "Is the post correctly extracted, and is the image necessary, relevant or irrelevant?",
        ),
        ProjectSpec(
            "adjudication",
            "RW-Post: adjudication of post and image validation",
            "adjudication.xml",
            1,
            "Tasks whose two annotators disagreed; one adjudicator gives the consensus verdict.",
        ),
        ProjectSpec(
            "explanation",
            "RW-Post: explanation evaluation",
            "explanation.xml",
            2,
            "Score three blinded explanations per claim on reasoning, evidence and label (Tables S3-S5).",
        ),
        ProjectSpec(
            "ratings",
            "RW-Post: rating mapping",
            "ratings.xml",
            2,
            "Which RW-Post label does each fact-checker's rating wording mean? (rwpost labels --unknown)",
        ),
        ProjectSpec(
            "ratings-adjudication",
            "RW-Post: adjudication of rating mapping",
            "ratings-adjudication.xml",
            1,
            "Ratings whose two annotators disagreed; one adjudicator gives the label the table records.",
        ),
    )
}
"""The projects rwpost creates, by key."""

CRITERIA: tuple[str, ...] = ("reasoning", "evidence", "label")
"""Explanation criteria in the config's control names (``reasoning_1`` ...), paper Tables S3-S5."""
SLOTS: tuple[int, ...] = (1, 2, 3)
"""Anonymised output ids of the explanation project (paper V-D footnote: ids 1-3)."""


ANNOTATION_DIR = Path("annotation")
"""The build project's folder of labeling configs and guidelines (``configs/``, ``guidelines/``)."""


def packaged(folder: str | Path) -> Path:
    """``folder``, or the shipped copy of it when it is the default ``annotation/configs`` or
    ``annotation/guidelines`` and the working folder has none: the wheel's package data
    (``rwpost/annotate/data/``, built from the repository's ``annotation/``), else the ``annotation/``
    of the clone this package runs from. So ``rwpost annotate push`` works from any folder."""
    path = Path(folder)
    if path.exists() or path.is_absolute() or not path.is_relative_to(ANNOTATION_DIR):
        return path
    rest = path.relative_to(ANNOTATION_DIR)
    for root in (
        Path(__file__).resolve().parent / "data",
        Path(__file__).resolve().parents[2] / ANNOTATION_DIR,
    ):
        if (root / rest).exists():
            return root / rest
    return path


def load_config(configs_dir: Path, spec: ProjectSpec) -> str:
    """The labeling config XML of a project, read from ``configs_dir`` (:func:`packaged`: the shipped
    ``annotation/configs`` when the default is absent here)."""
    path = packaged(configs_dir) / spec.config_file
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"labeling config {path} not found (pass --configs FOLDER)") from exc


# --- images ----------------------------------------------------------------------------------------


def stage_image(source: Path, files_root: Path) -> str:
    """Copy an image under the Local Files root by content hash; returns its ``/data/local-files`` URL."""
    data = Path(source).read_bytes()
    name = f"{sha256_hex(data)}{Path(source).suffix.lower() or '.img'}"
    target = Path(files_root) / "images" / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{name}.tmp")
        shutil.copyfile(source, tmp)
        tmp.replace(target)
    return f"/data/local-files/?d=images/{name}"


def stand_in_image(record_id: str, claim: str, out_dir: Path, *, original: str | None = None) -> Path:
    """Draw a labelled stand-in picture for a record whose image is not on disk (the release ships none).

    The picture says it is generated, so nobody mistakes it for the post's real image.
    """
    from PIL import Image, ImageDraw, ImageFont

    path = Path(out_dir) / f"{record_id}.png"
    if path.exists():
        return path
    seed = int(sha256_hex(record_id.encode())[:6], 16)
    picture = Image.new("RGB", (640, 400), (40 + seed % 80, 60 + seed % 50, 90 + seed % 60))
    draw = ImageDraw.Draw(picture)
    big, small = ImageFont.load_default(size=24), ImageFont.load_default(size=14)
    draw.rectangle((0, 0, 639, 48), fill=(250, 220, 60))
    draw.text((12, 12), "GENERATED STAND-IN (not the post image)", fill=(0, 0, 0), font=big)
    draw.multiline_text((16, 70), textwrap.fill(claim, width=46), fill=(255, 255, 255), spacing=8, font=big)
    if original:
        draw.text((16, 372), textwrap.shorten(f"original: {original}", 80), fill=(230, 230, 230), font=small)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    picture.save(tmp, format="PNG")
    tmp.replace(path)
    return path


# --- article panel ---------------------------------------------------------------------------------

_TAG = re.compile(r"\[(IMAGE|VIDEO|LINK|WEBPAGE|URL)\s*(\d+)(?::\s*([^\]\s]+))?\s*\]", re.IGNORECASE)


def _is_web(url: object) -> bool:
    """A link worth making clickable (the release writes missing URLs as the string "None")."""
    return isinstance(url, str) and url.startswith(("http://", "https://"))


def _anchor(url: str, text: str) -> str:
    return f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{text}</a>'


def article_html(article: TaggedArticle) -> str:
    """The tagged article text as HTML with every link tag made a clickable link (by link-table id)."""
    urls = {link.id: link.url for link in article.links}
    out: list[str] = []
    pos = 0
    for match in _TAG.finditer(article.text):
        out.append(html.escape(article.text[pos : match.start()]))
        kind, number, inline_url = match.group(1).upper(), int(match.group(2)), match.group(3)
        url = urls.get(number) or inline_url
        label = html.escape(f"[{kind} {number}: {url}]" if url else f"[{kind} {number}]")
        out.append(_anchor(url, label) if url else label)
        pos = match.end()
    out.append(html.escape(article.text[pos:]))
    body = "".join(out).replace("\n\n", "</p><p>").replace("\n", "<br/>")
    title = html.escape(article.headline or article.claim or article.id)
    return f"<h3>{_anchor(article.news_url, title)}</h3><p>{body}</p>"


def _evidence_html(evidence: list[Evidence]) -> str:
    items = []
    for item in evidence:
        text = html.escape(item.content or item.description or "")
        source = html.escape(item.source or "")
        link = f" ({_anchor(item.url, html.escape(item.url))})" if _is_web(item.url) else ""
        items.append(f"<li><b>{html.escape(item.type)}</b> {source}{link}: {text}</li>")
    return "<ol>" + "".join(items) + "</ol>" if items else "<p>(no evidence)</p>"


def record_article_html(sample: Sample) -> str:
    """The article panel for a record without article text: its URL, rationale and evidence, all linked.

    Used for the authors' released records, which do not include the article body.
    """
    points = "".join(f"<li>{html.escape(p)}</li>" for p in sample.key_points or [])
    return (
        f"<h3>{_anchor(sample.news_url, html.escape(sample.news_url))}</h3>"
        "<p><i>The article text is not part of this record: open the link above. Extracted rationale and "
        "evidence follow.</i></p>"
        f"<h4>Rating</h4><p>{html.escape(sample.label_original or str(sample.label or ''))}</p>"
        f"<h4>Reasoning</h4><p>{html.escape(sample.reasoning_logic or '')}</p>"
        f"<h4>Key points</h4><ol>{points}</ol>"
        f"<h4>Evidence</h4>{_evidence_html(sample.evidence)}"
    )


# --- post and image validation ---------------------------------------------------------------------


def validation_task(
    sample: Sample, *, image_url: str, article: TaggedArticle | None = None
) -> dict[str, Any]:
    """One task of the validation project: the article beside the extracted post and image."""
    post_link = (
        _anchor(sample.post_url, html.escape(sample.post_url))
        if sample.post_url
        else "<i>(no post link was extracted)</i>"
    )
    return {
        "data": {
            "record_id": sample.id,
            "claim": sample.claim,
            "post_text": sample.post_text or "(no post text was extracted)",
            "post_link_html": f"<p>Post link: {post_link}</p>",
            "image": image_url,
            "article_html": article_html(article) if article else record_article_html(sample),
            "news_url": sample.news_url,
            "model_image_required": sample.image_required or "",
        }
    }


def disagreement_text(answers: dict[str, dict[str, str | None]]) -> str:
    """What each annotator answered, one line per annotator, for the adjudication task."""
    lines = []
    for annotator, fields in sorted(answers.items()):
        parts = [f"{name}={value or '-'}" for name, value in fields.items()]
        lines.append(f"{annotator}: " + ", ".join(parts))
    return "\n".join(lines)


def adjudication_task(task: dict[str, Any], answers: dict[str, dict[str, str | None]]) -> dict[str, Any]:
    """A validation task again, with the disagreeing answers shown (paper III-D: resolved by consensus)."""
    data = dict(task["data"])
    data["disagreement"] = disagreement_text(answers)
    return {"data": data}


# --- explanation evaluation ------------------------------------------------------------------------


def blind_order(record_id: str, sources: list[str], seed: int) -> list[str]:
    """The sources in the order shown as outputs 1..n: random per record, reproducible from the seed."""
    order = sorted(sources)
    random.Random(f"{seed}:{record_id}").shuffle(order)
    return order


def output_html(output: ExplanationOutput) -> str:
    """One output card: the label, the explanation (its lines kept) and the cited evidence (links
    clickable); never the system's name, which would unblind it."""
    explanation = "<br>".join(html.escape(line) for line in (output.explanation or "").splitlines())
    evidence = "".join(
        f"<li>{_anchor(url, html.escape(url)) if _is_web(url) else html.escape(url)}</li>"
        for url in output.evidence_urls
    )
    return (
        f"<p><b>Authenticity:</b> {html.escape(output.label or '(no answer)')}</p>"
        f"<p><b>Explanation:</b><br>{explanation or '(none)'}</p>"
        f"<p><b>Evidence:</b></p><ol>{evidence}</ol>"
    )


def explanation_task(
    item: ExplanationItem, *, image_url: str, seed: int
) -> tuple[dict[str, Any], dict[int, str]]:
    """One task of the explanation project and its key (anonymised id -> source), kept out of the task."""
    outputs = item.by_system()
    if len(outputs) != len(SLOTS):
        raise RecordError(
            f"expected {len(SLOTS)} outputs (two detectors and gold), found {sorted(outputs)}",
            record_id=item.id,
            field="outputs",
        )
    order = blind_order(item.id, list(outputs), seed)
    data: dict[str, Any] = {
        "record_id": item.id,
        "claim": item.claim,
        "post_text": item.post_text or "(no post text)",
        "image": image_url,
    }
    key: dict[int, str] = {}
    for slot, source in zip(SLOTS, order, strict=True):
        data[f"output_{slot}"] = output_html(outputs[source])
        key[slot] = source
    return {"data": data}, key
