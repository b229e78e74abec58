"""Exported Label Studio annotations -> typed verdict records (one per task and annotator).

Choice values are read from the config's ``alias`` attributes, which are exactly the values of
``PostCheck``, ``ImageRole`` and the 0-2 scores, so a config edit that renames a choice fails loudly here
instead of silently turning into missing answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from pydantic import ValidationError

from rwpost.annotate.tasks import CRITERIA, SLOTS
from rwpost.errors import RecordError
from rwpost.records import ExplanationScore, ImageRole, PostCheck, Reject, ValidationVerdict

_CRITERION_FIELD = {
    "reasoning": "reasoning_hallucination",
    "evidence": "evidence_hallucination",
    "label": "label_justification",
}


def result_values(annotation: dict[str, Any]) -> dict[str, str]:
    """Control name -> the single answer (choice alias or text) of one annotation."""
    values: dict[str, str] = {}
    for item in annotation.get("result") or []:
        value = item.get("value") or {}
        answers = value.get("choices") or value.get("text") or []
        if isinstance(answers, str):
            answers = [answers]
        if answers:
            values[item["from_name"]] = "\n".join(str(a) for a in answers)
    return values


def _annotations(task: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for annotation in task.get("annotations") or []:
        if not annotation.get("was_cancelled"):
            yield annotation


def _set_aside(
    task: dict[str, Any], annotation: dict[str, Any], problem: str, source: str, rejects: list[Reject] | None
) -> None:
    """Keep a bad annotation in ``rejects``; without them, raise :class:`RecordError` naming its task."""
    record_id = (task.get("data") or {}).get("record_id")
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
    for task in export:
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
            verdicts.append(
                ValidationVerdict(
                    id=task["data"]["record_id"],
                    annotator=users.get(int(user), f"user-{user}") if user is not None else "unknown",
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
    return verdicts


def explanation_scores(
    export: list[dict[str, Any]],
    users: dict[int, str],
    keys: dict[str, dict[int, str]],
    *,
    rejects: list[Reject] | None = None,
) -> list[ExplanationScore]:
    """Three :class:`ExplanationScore` per annotation, unblinded by ``keys`` (record -> slot -> source)."""
    scores: list[ExplanationScore] = []
    for task in export:
        rid = task["data"]["record_id"]
        for annotation in _annotations(task):
            values = result_values(annotation)
            user = annotation.get("completed_by")
            annotator = users.get(int(user), f"user-{user}") if user is not None else "unknown"
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
                except (KeyError, ValueError, ValidationError) as exc:
                    problem = f"output {slot}: missing or invalid score or key ({exc})"
                    _set_aside(task, annotation, problem, "explanation", rejects)
    return scores
