"""Push tasks to and pull annotations from Label Studio through ``label-studio-sdk`` (2.x).

Everything here is idempotent: projects are found by title, the Local Files storage by path, and tasks
by the ``record_id`` in their data, so a rerun creates nothing twice. Annotators join the organisation
through its invite link (the users API of the Community edition makes accounts without a password).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from rwpost.annotate.server import LabelStudioError
from rwpost.annotate.tasks import ProjectSpec
from rwpost.errors import ConfigError, RecordError, RwpostError


@contextmanager
def reaching(url: str) -> Iterator[None]:
    """Turn a Label Studio that is not running (or refuses the token) into one line naming ``url``."""
    from label_studio_sdk.core.api_error import ApiError

    try:
        yield
    except httpx.TransportError as exc:
        problem = " ".join(str(exc).split()) or type(exc).__name__
        raise RwpostError(
            f"Label Studio is not reachable at {url} ({problem}); start it with: rwpost annotate serve"
        ) from exc
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise ConfigError(
                f"Label Studio at {url} refused the token (HTTP {exc.status_code}); "
                "check LABEL_STUDIO_API_KEY or the saved credentials"
            ) from exc
        raise


def connect(url: str, token: str) -> Any:
    """An SDK client for the server at ``url`` (the token is sent as ``Authorization: Token ...``)."""
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=url, api_key=token, timeout=120)


def find_project(client: Any, title: str) -> Any | None:
    """The project with exactly this title, or None."""
    for project in client.projects.list(title=title):
        if project.title == title:
            return project
    return None


def guidelines_html(markdown: str) -> str:
    """Guidelines Markdown as the HTML of Label Studio's instructions panel (raw HTML in it is escaped)."""
    from markdown_it import MarkdownIt  # installed with rich

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)


def ensure_project(
    client: Any, spec: ProjectSpec, label_config: str, instructions: str = ""
) -> tuple[int, bool]:
    """Create the project unless one with its title exists (then refresh its config); (id, created)."""
    settings = {
        "description": spec.description,
        "label_config": label_config,
        "maximum_annotations": spec.annotators_per_task,
        # Every task gets annotators_per_task annotations (paper III-D: two reviewers per sample).
        "overlap_cohort_percentage": 100,
        "show_instruction": bool(instructions),
        "expert_instruction": guidelines_html(instructions) if instructions else "",
        "show_skip_button": False,
    }
    project = find_project(client, spec.title)
    if project is None:
        created = client.projects.create(title=spec.title, **settings)
        return int(created.id), True
    current = client.projects.get(project.id)
    changed = {k: v for k, v in settings.items() if getattr(current, k, None) != v}
    if changed:
        client.projects.update(project.id, **changed)
    return int(project.id), False


def ensure_local_storage(client: Any, project_id: int, path: Path) -> int:
    """The project's Local Files storage for ``path``; ``/data/local-files/`` URLs need one to exist."""
    wanted = str(Path(path).resolve())
    Path(wanted).mkdir(parents=True, exist_ok=True)
    for storage in client.import_storage.local.list(project=project_id):
        if storage.path and str(Path(storage.path).resolve()) == wanted:
            return int(storage.id)
    storage = client.import_storage.local.create(
        project=project_id, path=wanted, title="rwpost images", use_blob_urls=False, recursive_scan=True
    )
    return int(storage.id)


def task_ids_by_record(client: Any, project_id: int) -> dict[str, int]:
    """Record id -> task id of the tasks already in a project."""
    found: dict[str, int] = {}
    for task in client.tasks.list(project=project_id, fields="task_only", page_size=500):
        rid = (task.data or {}).get("record_id")
        if rid:
            found.setdefault(str(rid), int(task.id))
    return found


@dataclass(frozen=True)
class PushResult:
    """What one push did to one project."""

    project_id: int
    project_created: bool
    imported: int
    already_there: int


def push_tasks(
    client: Any, project_id: int, tasks: list[dict[str, Any]], *, created: bool = False
) -> PushResult:
    """Import the tasks whose ``record_id`` is not in the project yet."""
    existing = task_ids_by_record(client, project_id)
    new: list[dict[str, Any]] = []
    seen: set[str] = set()
    for task in tasks:
        rid = task["data"].get("record_id")
        if not rid:
            raise RecordError("task has no record_id", field="data.record_id")
        if rid in existing or rid in seen:
            continue
        seen.add(rid)
        new.append(task)
    if new:
        client.projects.import_tasks(project_id, request=new, return_task_ids=True)
    return PushResult(project_id, created, len(new), len(tasks) - len(new))


def export_tasks(client: Any, project_id: int) -> list[dict[str, Any]]:
    """Every task of a project with its annotations, in Label Studio's JSON export format."""
    chunks = client.projects.exports.download_sync(project_id, export_type="JSON", download_all_tasks=True)
    return json.loads(b"".join(chunks))


def user_emails(client: Any) -> dict[int, str]:
    """Label Studio user id -> e-mail, to name annotators in verdict records."""
    return {int(user.id): user.email for user in client.users.list()}


# --- annotators ------------------------------------------------------------------------------------


def invite_token(client: Any) -> str:
    """The organisation's invite token (``/user/signup/?token=...``)."""
    reply = client._client_wrapper.httpx_client.request("api/invite", method="GET")
    if reply.status_code != 200:
        raise LabelStudioError(f"cannot read the invite link: HTTP {reply.status_code}")
    return str(reply.json()["token"])


def _form_post(session: httpx.Client, path: str, data: dict[str, str]) -> httpx.Response:
    page = session.get(path)
    page.raise_for_status()
    form = {**data, "csrfmiddlewaretoken": session.cookies.get("csrftoken", "")}
    return session.post(path, data=form, headers={"Referer": str(page.url)})


def signup_annotator(url: str, invite: str, email: str, password: str) -> None:
    """Create an annotator account through the invite link, as a person joining would."""
    with httpx.Client(base_url=url, timeout=60) as session:
        reply = _form_post(session, f"/user/signup/?token={invite}", {"email": email, "password": password})
        if reply.status_code != 302:
            raise LabelStudioError(
                f"signing up {email} failed (HTTP {reply.status_code}); is the invite link valid?"
            )


def ensure_annotators(client: Any, url: str, emails: list[str], known: dict[str, str]) -> dict[str, str]:
    """Make sure each annotator account exists; returns e-mail -> password of all of them.

    Accounts in ``known`` (saved passwords) are kept; missing ones are signed up with a new password.
    """
    existing = {email.lower() for email in user_emails(client).values()}
    passwords = dict(known)
    invite: str | None = None
    for email in emails:
        if email.lower() in existing:
            if email not in passwords:
                raise LabelStudioError(
                    f"annotator {email} exists but its password is not saved; use another e-mail"
                )
            continue
        invite = invite or invite_token(client)
        passwords[email] = secrets.token_urlsafe(12)
        signup_annotator(url, invite, email, passwords[email])
    return passwords
