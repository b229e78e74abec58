"""The long tail of ratings, reviewed in Label Studio: one task per (site, language, rating) that no table
maps (``rwpost labels --unknown``), two annotators each, disagreements to an adjudicator, and the
agreed or adjudicated answers as the next version of the reviewed rating table
(:mod:`rwpost.sites.rating_table`).

A rating's verdict is resolved as the validation project's are (:mod:`rwpost.annotate.merge`): *agreed*
when its first two annotations give the same label, *adjudicated* when the adjudicator answered (that
always wins), *disputed* while waiting for the adjudicator, *pending* with fewer than two answers. Only
agreed and adjudicated ratings enter the table.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwpost.annotate import sync
from rwpost.annotate.tasks import PROJECTS, load_config
from rwpost.annotate.verdicts import RatingVerdict, rating_verdicts
from rwpost.io import sha256_hex
from rwpost.records import Reject
from rwpost.sites.rating_table import ReviewedRating
from rwpost.sites.ratings import UnmappedRating

PROJECT, ADJUDICATION = "ratings", "ratings-adjudication"


def rating_record_id(site: str, language: str, rating: str) -> str:
    """The task key of one (site, language, rating): a rerun imports it once."""
    return "rating-" + sha256_hex(f"{site}\n{language}\n{rating}".encode())[:20]


def rating_task(row: UnmappedRating) -> dict[str, Any]:
    """One rating-mapping task: the site, language, wording, how many pages carry it, an example claim."""
    link = html.escape(row.example_url)
    return {
        "data": {
            "record_id": rating_record_id(row.site, row.language, row.rating),
            "site": row.site,
            "language": row.language,
            "rating": row.rating,
            "articles": row.articles,
            "site_line": f"{row.site} ({row.publisher or 'publisher not named'}), language: {row.language}",
            "count_line": f"{row.articles} article{'s' if row.articles != 1 else ''} carry this rating",
            "example_claim": row.example_claim or "(no claim on the example page)",
            "example_html": f'<a href="{link}" target="_blank" rel="noopener">{link}</a>',
        }
    }


def _instructions(guidelines_dir: Path | None) -> str:
    path = Path(guidelines_dir) / "ratings.md" if guidelines_dir else None
    return path.read_text(encoding="utf-8") if path and path.exists() else ""


def _open(client: Any, key: str, configs_dir: Path, guidelines_dir: Path | None) -> tuple[int, bool]:
    spec = PROJECTS[key]
    return sync.ensure_project(client, spec, load_config(configs_dir, spec), _instructions(guidelines_dir))


@dataclass(frozen=True)
class RatingsPush:
    """What ``push-ratings`` did: new rating tasks, and disputed ratings sent to the adjudicator."""

    tasks: sync.PushResult
    adjudication: sync.PushResult | None


def push_ratings(
    client: Any,
    rows: Iterable[UnmappedRating],
    *,
    configs_dir: Path,
    guidelines_dir: Path | None = None,
    rejects: list[Reject] | None = None,
) -> RatingsPush:
    """Import one task per unmapped rating not yet in the ratings project, then send every rating whose
    two annotators disagreed (so far) to the adjudication project, with both answers shown."""
    project_id, created = _open(client, PROJECT, configs_dir, guidelines_dir)
    result = sync.push_tasks(client, project_id, [rating_task(row) for row in rows])
    tasks = sync.PushResult(project_id, created, result.imported, result.already_there)
    export = sync.export_tasks(client, project_id)
    verdicts = rating_verdicts(export, sync.user_emails(client), project=PROJECT, rejects=rejects)
    disputed = {rid for rid, answers in _by_record(verdicts).items() if _status(answers)[0] == "disputed"}
    if not disputed:
        return RatingsPush(tasks, None)
    judge_id, judge_created = _open(client, ADJUDICATION, configs_dir, guidelines_dir)
    adjudication = []
    for task in export:
        data = task.get("data") or {}
        if data.get("record_id") in disputed:
            answers = [v for v in verdicts if v.id == data["record_id"]]
            told = "; ".join(
                f"{v.annotator}: {v.label}" + (f" ({v.note})" if v.note else "") for v in answers
            )
            adjudication.append({"data": {**data, "disagreement": told}})
    sent = sync.push_tasks(client, judge_id, adjudication)
    return RatingsPush(tasks, sync.PushResult(judge_id, judge_created, sent.imported, sent.already_there))


def pull_ratings(client: Any, rejects: list[Reject] | None = None) -> list[RatingVerdict]:
    """Every answer of the ratings project and, where it exists, of its adjudication project."""
    users = sync.user_emails(client)
    verdicts: list[RatingVerdict] = []
    for key, adjudicated in ((PROJECT, False), (ADJUDICATION, True)):
        project = sync.find_project(client, PROJECTS[key].title)
        if project is not None:
            export = sync.export_tasks(client, project.id)
            verdicts += rating_verdicts(export, users, project=key, adjudicated=adjudicated, rejects=rejects)
    return verdicts


def _by_record(verdicts: Iterable[RatingVerdict]) -> dict[str, list[RatingVerdict]]:
    grouped: dict[str, list[RatingVerdict]] = defaultdict(list)
    for verdict in verdicts:
        grouped[verdict.id].append(verdict)
    return {rid: sorted(group, key=lambda v: v.annotation_id) for rid, group in grouped.items()}


def _status(group: list[RatingVerdict]) -> tuple[str, str | None]:
    """(status, label) of one rating's answers, as :func:`rwpost.annotate.merge.resolve_verdicts` does."""
    judged = [v for v in group if v.adjudicated]
    regular = [v for v in group if not v.adjudicated]
    if judged:
        return "adjudicated", judged[-1].label
    if len(regular) < 2:
        return "pending", None
    if regular[0].label == regular[1].label:
        return "agreed", regular[0].label
    return "disputed", None


@dataclass(frozen=True)
class ResolvedRatings:
    """The reviewed rows (agreed or adjudicated) and the ratings still open, by status."""

    rows: list[ReviewedRating]
    open: dict[str, list[RatingVerdict]]
    """``disputed`` and ``pending`` -> one verdict of each such rating (its site, language, wording)."""


def resolve_ratings(verdicts: Iterable[RatingVerdict]) -> ResolvedRatings:
    """One table row per rating whose answers are agreed or adjudicated; the others are left open."""
    rows: list[ReviewedRating] = []
    still: dict[str, list[RatingVerdict]] = {"disputed": [], "pending": []}
    for _rid, group in sorted(_by_record(verdicts).items()):
        status, label = _status(group)
        first = group[0]
        if label is None:
            still[status].append(first)
            continue
        rows.append(
            ReviewedRating(
                site=first.site,
                language=first.language,
                rating=first.rating,
                label=label,
                status=status,
                annotators=[v.annotator for v in group],
                articles=first.articles,
            )
        )
    return ResolvedRatings(rows, still)
