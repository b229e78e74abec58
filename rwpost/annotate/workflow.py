"""The annotation round trips the CLI runs: push records, pull verdicts, send disputes to adjudication."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rwpost.annotate import sync
from rwpost.annotate.merge import disputed_answers, resolve_verdicts
from rwpost.annotate.tasks import (
    PROJECTS,
    adjudication_task,
    explanation_task,
    load_config,
    packaged,
    stage_image,
    stand_in_image,
    validation_task,
)
from rwpost.annotate.verdicts import explanation_scores, validation_verdicts
from rwpost.io import read_records
from rwpost.records import (
    ExplanationItem,
    ExplanationScore,
    Reject,
    Sample,
    TaggedArticle,
    ValidationVerdict,
)


def _instructions(guidelines_dir: Path | None, key: str) -> str:
    if guidelines_dir is None:
        return ""
    path = packaged(guidelines_dir) / f"{key}.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def open_project(
    client: Any, key: str, configs_dir: Path, files_root: Path, guidelines_dir: Path | None
) -> tuple[int, bool]:
    """Create or refresh one project and its Local Files storage; (project id, created)."""
    spec = PROJECTS[key]
    project_id, created = sync.ensure_project(
        client, spec, load_config(configs_dir, spec), _instructions(guidelines_dir, key)
    )
    sync.ensure_local_storage(client, project_id, Path(files_root) / "images")
    return project_id, created


def sample_image_url(sample: Sample, files_root: Path) -> str:
    """The post image as a Local Files URL: the sample's own file, else a labelled generated stand-in."""
    if sample.image and sample.image.path and Path(sample.image.path).exists():
        return stage_image(Path(sample.image.path), files_root)
    original = sample.image.link if sample.image else None
    picture = stand_in_image(sample.id, sample.claim, Path(files_root) / "stand-ins", original=original)
    return stage_image(picture, files_root)


def push_validation(
    client: Any,
    samples: Iterable[Sample],
    *,
    configs_dir: Path,
    files_root: Path,
    guidelines_dir: Path | None = None,
    articles: dict[str, TaggedArticle] | None = None,
) -> sync.PushResult:
    """Put every sample into the validation project (two annotators per task)."""
    project_id, created = open_project(client, "validation", configs_dir, files_root, guidelines_dir)
    articles = articles or {}
    tasks = [
        validation_task(s, image_url=sample_image_url(s, files_root), article=articles.get(s.id))
        for s in samples
    ]
    result = sync.push_tasks(client, project_id, tasks)
    return sync.PushResult(project_id, created, result.imported, result.already_there)


def push_explanations(
    client: Any,
    items: Iterable[ExplanationItem],
    *,
    configs_dir: Path,
    files_root: Path,
    seed: int,
    guidelines_dir: Path | None = None,
) -> tuple[sync.PushResult, dict[str, dict[int, str]]]:
    """Put blinded explanation triples into the explanation project; returns the unblinding keys."""
    project_id, created = open_project(client, "explanation", configs_dir, files_root, guidelines_dir)
    tasks, keys = explanation_tasks(items, files_root=files_root, seed=seed)
    result = sync.push_tasks(client, project_id, tasks)
    return sync.PushResult(project_id, created, result.imported, result.already_there), keys


def read_explanation_items(path: Path) -> list[ExplanationItem]:
    """The items of an ``explanations.jsonl`` (as ``rwpost evaluate`` and ``rwpost leaderboard`` write
    it); a line that is no :class:`ExplanationItem` is one error naming the file, line and field."""
    return list(read_records(path, ExplanationItem))


def explanation_tasks(
    items: Iterable[ExplanationItem], *, files_root: Path, seed: int
) -> tuple[list[dict[str, Any]], dict[str, dict[int, str]]]:
    """The explanation project's tasks (post image staged, or a stand-in) and their unblinding keys."""
    tasks, keys = [], {}
    for item in items:
        if item.image_path and Path(item.image_path).exists():
            image_url = stage_image(Path(item.image_path), files_root)
        else:
            picture = stand_in_image(item.id, item.claim, Path(files_root) / "stand-ins")
            image_url = stage_image(picture, files_root)
        task, key = explanation_task(item, image_url=image_url, seed=seed)
        tasks.append(task)
        keys[item.id] = key
    return tasks, keys


def pull_validation(client: Any, rejects: list[Reject] | None = None) -> list[ValidationVerdict]:
    """Verdicts of the validation project and, where it exists, the adjudication project."""
    users = sync.user_emails(client)
    verdicts: list[ValidationVerdict] = []
    for key, adjudicated in (("validation", False), ("adjudication", True)):
        project = sync.find_project(client, PROJECTS[key].title)
        if project is None:
            continue
        export = sync.export_tasks(client, project.id)
        verdicts += validation_verdicts(export, users, project=key, adjudicated=adjudicated, rejects=rejects)
    return verdicts


def pull_explanations(
    client: Any, keys: dict[str, dict[int, str]], rejects: list[Reject] | None = None
) -> list[ExplanationScore]:
    """Scores of the explanation project, unblinded with the keys written at push time."""
    project = sync.find_project(client, PROJECTS["explanation"].title)
    if project is None:
        return []
    export = sync.export_tasks(client, project.id)
    return explanation_scores(export, sync.user_emails(client), keys, rejects=rejects)


def push_adjudication(
    client: Any,
    verdicts: list[ValidationVerdict],
    *,
    configs_dir: Path,
    files_root: Path,
    guidelines_dir: Path | None = None,
) -> sync.PushResult:
    """Send every disputed record, with both answers shown, to the adjudication project."""
    disputed = {v.id for v in resolve_verdicts(verdicts) if v.status == "disputed"}
    project_id, created = open_project(client, "adjudication", configs_dir, files_root, guidelines_dir)
    tasks = []
    if disputed:
        source = sync.find_project(client, PROJECTS["validation"].title)
        for task in sync.export_tasks(client, source.id) if source else []:
            rid = (task.get("data") or {}).get("record_id")
            if rid in disputed:
                tasks.append(adjudication_task({"data": task["data"]}, disputed_answers(verdicts, rid)))
    result = sync.push_tasks(client, project_id, tasks)
    return sync.PushResult(project_id, created, result.imported, result.already_there)
