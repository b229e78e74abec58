"""The one real Label Studio of a test session (the ``live`` fixture of conftest.py), started by
``rwpost annotate serve`` on 127.0.0.1, and its annotator accounts. test_annotate_sync.py and
test_annotate_ratings.py share it: each looks its projects up by title, so neither sees the other's tasks.

Label Studio is installed on first use into ``state/label-studio/venv`` (shared by later runs); the live
tests are skipped, with the reason, only when that install fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from rwpost.annotate import sync
from rwpost.annotate.server import Credentials, LabelStudioError, ensure_venv, load_credentials
from rwpost.annotate.sources import read_annotation_samples
from rwpost.records import Sample
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "annotation" / "configs"
GUIDELINES = ROOT / "annotation" / "guidelines"
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
LS_VENV = ROOT / "state" / "label-studio" / "venv"
ANNOTATORS = ("ann-a@rwpost.test", "ann-b@rwpost.test", "judge@rwpost.test")


@dataclass
class Live:
    url: str
    port: int
    state: Path
    creds: Credentials
    serve_output: str
    client: object
    samples: list[Sample]
    annotators: dict[str, str]


@contextmanager
def running_label_studio(state: Path) -> Iterator[Live]:
    """``rwpost annotate serve`` with its state in ``state``, until the block ends (then SIGTERM)."""
    try:
        ensure_venv(LS_VENV)
    except LabelStudioError as exc:
        pytest.skip(f"Label Studio cannot be installed here, so the live annotation tests cannot run: {exc}")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO_")}
    out_path = state / "serve.out"
    cmd = [sys.executable, "-m", "rwpost", "annotate", "serve", "--port", str(port), "--state", str(state)]
    cmd += ["--venv", str(LS_VENV)]
    with open(out_path, "wb") as out:
        serve = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 300
        while "Press Ctrl-C to stop" not in out_path.read_text(errors="replace"):
            if serve.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"rwpost annotate serve did not start:\n{out_path.read_text(errors='replace')}")
            time.sleep(0.5)
        creds = load_credentials(state / "credentials.json")
        url = f"http://127.0.0.1:{port}"
        yield Live(
            url=url,
            port=port,
            state=state,
            creds=creds,
            serve_output=out_path.read_text(errors="replace"),
            client=sync.connect(url, creds.token),
            samples=list(read_annotation_samples(RELEASED))[:10],
            annotators={},
        )
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()


def login_token(url: str, email: str, password: str) -> str:
    """Log in with a password through the login form and return that user's API token (to act as the
    annotator)."""
    with httpx.Client(base_url=url, timeout=60) as session:
        reply = sync._form_post(session, "/user/login/", {"email": email, "password": password})
        if reply.status_code != 302:
            raise LabelStudioError(f"logging in as {email} failed (HTTP {reply.status_code})")
        token = session.get("/api/current-user/token")
        if token.status_code != 200:
            raise LabelStudioError(f"no API token for {email} (HTTP {token.status_code})")
        return str(token.json()["token"])


def annotator_clients(live: Live) -> dict[str, object]:
    """A client for each of :data:`ANNOTATORS`, logged in with its own token (the accounts are created on
    first use and kept in ``live.annotators``)."""
    passwords = sync.ensure_annotators(live.client, live.url, list(ANNOTATORS), live.annotators)
    live.annotators.update(passwords)
    return {
        email: sync.connect(live.url, login_token(live.url, email, passwords[email])) for email in ANNOTATORS
    }
