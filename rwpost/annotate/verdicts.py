"""Exported Label Studio annotations -> typed verdict records (one per task and annotator).

Choice values are read from the config's ``alias`` attributes, which are exactly the values of
``PostCheck``, ``ImageRole`` and the 0-2 scores, so a config edit that renames a choice fails loudly here
instead of silently turning into missing answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from pydantic import BaseModel, Field, ValidationError

from rwpost.annotate.tasks import CRITERIA, SLOTS
from rwpost.errors import RecordError
from rwpost.io import validation_problem
from rwpost.records import ExplanationScore, ImageRole, PostCheck, Reject, ValidationVerdict

_CRITERION_FIELD = {
    "reasoning": "reasoning_hallucination",
    "evidence": "evidence_hallucination",
    "label": "label_justification",
}


def result_values(annotation: dict[str, Any]) -> dict[str, str]:
    """Control name -> the single answer (choice alias or text) of one annotation."""
    values: dict[str, str] = {}
    for item in _dicts(annotation.get("result")):
        value = item.get("value") if isinstance(item.get("value"), dict) else {}
        answers = value.get("choices") or value.get("text") or []
        if not isinstance(answers, list):
            answers = [answers]
        if answers and isinstance(item.get("from_name"), str):
            values[item["from_name"]] = "\n".join(str(a) for a in answers)
    return values


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list from the export (anything else there is not an answer)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _annotations(task: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for annotation in _dicts(task.get("annotations")):
        if not annotation.get("was_cancelled"):
            yield annotation


def _record_id(task: dict[str, Any]) -> str | None:
    data = task.get("data")
    rid = data.get("record_id") if isinstance(data, dict) else None
    return rid if isinstance(rid, str) else None


def _set_aside(
    task: dict[str, Any], annotation: dict[str, Any], problem: str, source: str, rejects: list[Reject] | None
) -> None:
    """Keep a bad annotation in ``rejects``; without them, raise :class:`RecordError` naming its task."""
    record_id = _record_id(task)
    if rejects is None:
        raise RecordError(problem, source=f"{source} task {task.get('id')}", record_id=record_id)
    rejects.append(
        Reject(
            id=record_id,
            stage="annotate",
            reason=problem,
            source=source,
            data={
                "task": task.get("id"),
                "annotation": annotation.get("id"),
                "result": annotation.get("result"),
            },
        )
    )


def validation_verdicts(
    export: list[dict[str, Any]],
    users: dict[int, str],
    *,
    project: str,
    adjudicated: bool = False,
    rejects: list[Reject] | None = None,
) -> list[ValidationVerdict]:
    """One :class:`ValidationVerdict` per submitted annotation of the validation (or adjudication) project."""
    checks, roles = set(get_args(PostCheck)), set(get_args(ImageRole))
    verdicts: list[ValidationVerdict] = []
    for task in _dicts(export):
        for annotation in _annotations(task):
            values = result_values(annotation)
            post, role = values.get("post_extraction"), values.get("image_role")
            problem = None
            if post is not None and post not in checks:
                problem = f"post_extraction {post!r} is not one of {sorted(checks)}"
            elif role is not None and role not in roles:
                problem = f"image_role {role!r} is not one of {sorted(roles)}"
            elif post is None and role is None:
                problem = "annotation answers neither post_extraction nor image_role"
            if problem:
                _set_aside(task, annotation, problem, project, rejects)
                continue
            user = annotation.get("completed_by")
            try:
                verdicts.append(
                    ValidationVerdict(
                        id=task["data"]["record_id"],
                        annotator=_annotator(users, user),
                        post_extraction=post,
                        image_role=role,
                        note=values.get("note", ""),
                        adjudicated=adjudicated,
                        project=project,
                        task_id=int(task["id"]),
                        annotation_id=int(annotation["id"]),
                        updated_at=annotation.get("updated_at"),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:  # ValidationError is a ValueError
                _set_aside(task, annotation, f"not a validation verdict: {_problem(exc)}", project, rejects)
    return verdicts


def _annotator(users: dict[int, str], user: Any) -> str:
    if user is None:
        return "unknown"
    try:
        return users.get(int(user), f"user-{user}")
    except (TypeError, ValueError):
        return f"user-{user}"


def _problem(exc: Exception) -> str:
    """One line for what is wrong in an exported annotation (never pydantic's multi-line dump)."""
    if isinstance(exc, ValidationError):
        message, where = validation_problem(exc)
        return f"{where}: {message}" if where else message
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r}"
    return " ".join(str(exc).split())


def explanation_scores(
    export: list[dict[str, Any]],
    users: dict[int, str],
    keys: dict[str, dict[int, str]],
    *,
    rejects: list[Reject] | None = None,
) -> list[ExplanationScore]:
    """Three :class:`ExplanationScore` per annotation, unblinded by ``keys`` (record -> slot -> source)."""
    scores: list[ExplanationScore] = []
    for task in _dicts(export):
        rid = _record_id(task)
        for annotation in _annotations(task):
            values = result_values(annotation)
            annotator = _annotator(users, annotation.get("completed_by"))
            for slot in SLOTS:
                try:
                    fields = {_CRITERION_FIELD[c]: int(values[f"{c}_{slot}"]) for c in CRITERIA}
                    scores.append(
                        ExplanationScore(
                            id=rid,
                            annotator=annotator,
                            slot=slot,
                            source=keys[rid][slot],
                            task_id=int(task["id"]),
                            annotation_id=int(annotation["id"]),
                            **fields,
                        )
                    )
                except (KeyError, TypeError, ValueError) as exc:  # ValidationError is a ValueError
                    problem = f"output {slot}: missing or invalid score or key ({_problem(exc)})"
                    _set_aside(task, annotation, problem, "explanation", rejects)
    return scores


# --- rating mapping ------------------------------------------------------------------------------


class RatingVerdict(BaseModel):
    """One annotator's answer to a rating-mapping task: the RW-Post label (or ``excluded``) of a
    publisher's rating wording in one language."""

    id: str = Field(description="the task's record_id (rwpost.annotate.ratings.rating_record_id)")
    site: str
    language: str
    rating: str
    articles: int = 0
    label: str = Field(description="an RW-Post label or excluded (rwpost.sites.rating_table.TARGETS)")
    annotator: str
    note: str = ""
    adjudicated: bool = False
    task_id: int
    annotation_id: int


def rating_verdicts(
    export: list[dict[str, Any]],
    users: dict[int, str],
    *,
    project: str,
    adjudicated: bool = False,
    rejects: list[Reject] | None = None,
) -> list[RatingVerdict]:
    """One :class:`RatingVerdict` per submitted annotation of the ratings (or its adjudication) project;
    an answer that is no label is set aside with its reason."""
    from rwpost.sites.rating_table import TARGETS

    verdicts: list[RatingVerdict] = []
    for task in _dicts(export):
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        for annotation in _annotations(task):
            values = result_values(annotation)
            label = values.get("label")
            if label not in TARGETS:
                problem = f"label {label!r} is not one of {list(TARGETS)}"
                _set_aside(task, annotation, problem, project, rejects)
                continue
            try:
                verdicts.append(
                    RatingVerdict(
                        id=data["record_id"],
                        site=data["site"],
                        language=data["language"],
                        rating=data["rating"],
                        articles=int(data.get("articles") or 0),
                        label=label,
                        annotator=_annotator(users, annotation.get("completed_by")),
                        note=values.get("note", ""),
                        adjudicated=adjudicated,
                        task_id=int(task["id"]),
                        annotation_id=int(annotation["id"]),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                _set_aside(task, annotation, f"not a rating verdict: {_problem(exc)}", project, rejects)
    return verdicts
