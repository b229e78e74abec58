"""The Label Studio server's credentials and environment (annotate/server.py)."""

from __future__ import annotations

import base64
import hashlib
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from rwpost.annotate.server import LOOPBACK, StatePaths, ensure_venv, resolve_credentials, server_env


def test_generated_credentials_are_saved_owner_only_and_reused(tmp_path):
    path = tmp_path / "credentials.json"
    first = resolve_credentials(path)
    assert first.generated and len(first.password) >= 12 and len(first.token) == 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = resolve_credentials(path)
    assert (again.password, again.token) == (first.password, first.token)
    assert first.token not in repr(first) and first.password not in repr(first)


def test_given_credentials_win_and_are_not_marked_generated(tmp_path):
    creds = resolve_credentials(
        tmp_path / "c.json", email="me@x.org", password="pw-given-123", token="t" * 40
    )
    assert (creds.email, creds.password, creds.token, creds.generated) == (
        "me@x.org",
        "pw-given-123",
        "t" * 40,
        False,
    )


def test_server_environment_serves_local_files_and_turns_telemetry_off(tmp_path):
    paths = StatePaths(tmp_path)
    env = server_env(paths, resolve_credentials(paths.credentials), base_env={})
    assert env["LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED"] == "true"
    assert env["LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT"] == str(paths.files.resolve())
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert env["LABEL_STUDIO_COLLECT_ANALYTICS"] == "false"
    assert env["LABEL_STUDIO_LATEST_VERSION_CHECK"] == "false"
    assert env["LABEL_STUDIO_SENTRY_DSN"] == "" and env["LABEL_STUDIO_FRONTEND_SENTRY_DSN"] == ""
    assert LOOPBACK == "127.0.0.1"


def _probe_wheel(folder: Path) -> Path:
    """A one-module wheel on disk, so an install needs no index."""
    info = "rwpost_probe-0.1.dist-info"
    files = {
        "rwpost_probe.py": b"",
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: rwpost-probe\nVersion: 0.1\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b'=').decode()},{len(body)}"
        for name, body in files.items()
    ]
    wheel = folder / "rwpost_probe-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
        archive.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return wheel


def _installer_of(venv: Path) -> str:
    [installer] = venv.glob("lib/python*/site-packages/rwpost_probe-0.1.dist-info/INSTALLER")
    return installer.read_text().strip()


def test_label_studio_venv_is_installed_by_uv_beside_python_and_marked_done(tmp_path):
    uv = Path(sys.executable).parent / "uv"
    if not uv.is_file():
        pytest.skip("no uv beside this Python (make install-dev puts it there)")
    venv = tmp_path / "venv"
    spec = str(_probe_wheel(tmp_path))
    ensure_venv(venv, spec=spec)
    assert _installer_of(venv) == "uv"
    assert (venv / ".rwpost-installed").read_text() == spec + "\n"
