"""The Label Studio server's credentials and environment (annotate/server.py)."""

from __future__ import annotations

import stat

from rwpost.annotate.server import LOOPBACK, StatePaths, resolve_credentials, server_env


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
