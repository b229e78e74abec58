"""A loopback Label Studio server, started from its own virtual environment.

Label Studio pins ``openai<2`` and ``pyarrow<25``, so it cannot share rwpost's environment: it is
installed on first use into ``<state>/venv`` and started as a subprocess. The server binds 127.0.0.1
only (``--internal-host``; ``--host`` would bind every interface), its admin account is created
non-interactively from :class:`Credentials`, and analytics, Sentry and version checks are off.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from rwpost.errors import ConfigError, RwpostError
from rwpost.io import write_text

LABEL_STUDIO_SPEC = "label-studio>=1.20,<2"
"""What is installed into the server's virtual environment (1.23.2 tested)."""
LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_ADMIN_EMAIL = "admin@rwpost.local"


class LabelStudioError(RwpostError):
    """Label Studio could not be installed, started or reached."""


@dataclass(frozen=True)
class StatePaths:
    """Where the server keeps its environment, database, served files and credentials."""

    root: Path
    data_dir: Path | None = None
    """Database folder when not ``<root>/data``."""
    venv_dir: Path | None = None
    """Label Studio's virtual environment when not ``<root>/venv`` (e.g. one shared by test runs)."""

    @property
    def venv(self) -> Path:
        return self.venv_dir if self.venv_dir is not None else self.root / "venv"

    @property
    def data(self) -> Path:
        return self.data_dir if self.data_dir is not None else self.root / "data"

    @property
    def files(self) -> Path:
        """Document root of Local Files storage: task images are copied here."""
        return self.root / "files"

    @property
    def credentials(self) -> Path:
        return self.root / "credentials.json"

    @property
    def annotators(self) -> Path:
        """Passwords of the annotator accounts rwpost signed up (0600)."""
        return self.root / "annotators.json"

    @property
    def log(self) -> Path:
        return self.root / "server.log"


@dataclass(frozen=True)
class Credentials:
    """The admin account; ``generated`` says the password was made here (and may be shown once);
    ``given`` names the secrets given from outside (the environment), which are never saved."""

    email: str
    password: str = field(repr=False)
    token: str = field(repr=False)
    generated: bool = False
    given: frozenset[str] = frozenset()


def executable(venv: Path) -> Path:
    """The ``label-studio`` command of a virtual environment."""
    return venv / "bin" / "label-studio"


def _installer(python: str) -> str | None:
    """uv beside ``python`` (where ``make install`` puts it) or on PATH; None when there is none."""
    beside = Path(python).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def ensure_venv(venv: Path, *, python: str = sys.executable, spec: str = LABEL_STUDIO_SPEC) -> Path:
    """Create ``venv`` with Label Studio installed unless it already is; returns the command's path.

    The install uses uv when there is one (about a minute, where pip takes several), else pip; uv reads no
    pip configuration, so when it fails pip installs as before. Both write the packages' bytecode at install
    (pip does by default, uv is asked to): where PYTHONDONTWRITEBYTECODE is set, Python never writes it
    itself, and each start of the server would compile Django and Label Studio from source again. A marker
    file is written last, so an install cut short is redone on the next call.
    """
    exe = executable(venv)
    marker = venv / ".rwpost-installed"
    if exe.exists() and marker.exists():
        return exe
    venv.parent.mkdir(parents=True, exist_ok=True)
    _install_step([python, "-m", "venv", str(venv)], venv)
    venv_python = str(venv / "bin" / "python")
    uv = _installer(python)
    with_uv = [str(uv), "pip", "install", "--quiet", "--compile-bytecode", "--python", venv_python, spec]
    if uv is None or subprocess.run(with_uv, capture_output=True).returncode != 0:
        pip = [venv_python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec]
        _install_step(pip, venv)
    write_text(marker, spec + "\n")
    return exe


def _install_step(cmd: list[str], venv: Path) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-2000:]
        raise LabelStudioError(f"installing Label Studio into {venv} failed ({' '.join(cmd[:4])}): {tail}")


def _write_private_json(path: Path, obj: dict) -> None:
    """Write JSON readable by the owner only (mode 0600 from the start, then an atomic rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)


def load_credentials(path: Path) -> Credentials | None:
    """Credentials saved by :func:`resolve_credentials`, or None when there are none yet. A secret that
    was given from the environment is not in the file: it reads as ``""`` and is named in ``given``."""
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        admin = raw["admin"]
        return Credentials(
            email=admin["email"],
            password=str(admin.get("password") or ""),
            token=str(admin.get("token") or ""),
            generated=bool(admin.get("generated", False)),
            given=frozenset(str(name) for name in admin.get("given", ())),
        )
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a Label Studio credentials file ({exc})") from exc


def save_credentials(path: Path, creds: Credentials) -> None:
    """Store the admin e-mail and the secrets generated here in a 0600 JSON file; secrets given from the
    environment are never written (only their names, so a later start asks for them again)."""
    admin: dict[str, object] = {"email": creds.email, "generated": creds.generated}
    admin.update({name: getattr(creds, name) for name in ("password", "token") if name not in creds.given})
    if creds.given:
        admin["given"] = sorted(creds.given)
    _write_private_json(path, {"admin": admin})


GIVEN_IN = {"password": "LABEL_STUDIO_PASSWORD", "token": "LABEL_STUDIO_USER_TOKEN"}
"""Where a secret given from outside comes from (named when a later start lacks it)."""


def resolve_credentials(
    path: Path, *, email: str | None = None, password: str | None = None, token: str | None = None
) -> Credentials:
    """Admin credentials: given values win, then saved ones, then generated ones.

    Label Studio reads them only when it creates its database, so a generated password and token are
    saved (0600) with it and reused; given ones are never saved, and a later start must be given them
    again (a ConfigError naming the variable otherwise).
    """
    saved = load_credentials(path)
    given = {name for name, value in (("password", password), ("token", token)) if value}

    def reuse(name: str) -> str | None:
        value = getattr(saved, name) if saved is not None else ""
        if not value and saved is not None and name in saved.given:
            raise ConfigError(
                f"the Label Studio admin {name} of {path.parent} was given in {GIVEN_IN[name]} and is never "
                f"stored: set {GIVEN_IN[name]} again"
            )
        return value or None

    generated = False
    if not password:
        password = reuse("password")
        if password is not None:
            generated = bool(saved and saved.generated)
        else:
            password, generated = secrets.token_urlsafe(12), True
    creds = Credentials(
        email=email or (saved.email if saved else DEFAULT_ADMIN_EMAIL),
        password=password,
        token=token or reuse("token") or secrets.token_hex(20),
        generated=generated,
        given=frozenset(given),
    )
    stored = dataclasses.replace(creds, **{name: "" for name in given})
    if saved != stored:
        save_credentials(path, creds)
    return creds


def load_annotators(path: Path) -> dict[str, str]:
    """Annotator e-mail -> password saved by :func:`save_annotators` (empty when none)."""
    if not path.exists():
        return {}
    try:
        return {str(k): str(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except (AttributeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not an annotator password file ({exc})") from exc


def save_annotators(path: Path, passwords: dict[str, str]) -> None:
    """Store annotator passwords in a 0600 JSON file."""
    _write_private_json(path, passwords)


def server_env(
    paths: StatePaths, creds: Credentials, *, base_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of the server process: admin account, Local Files serving, no telemetry."""
    env = dict(os.environ if base_env is None else base_env)
    env.update(
        {
            "LABEL_STUDIO_BASE_DATA_DIR": str(paths.data.resolve()),
            "LABEL_STUDIO_USERNAME": creds.email,
            "LABEL_STUDIO_PASSWORD": creds.password,
            "LABEL_STUDIO_USER_TOKEN": creds.token,
            # Without it the fixed user token above is refused with 401 (Label Studio >= 1.15).
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
            "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(paths.files.resolve()),
            # Annotators join only through the invite link (sync.ensure_annotators uses it).
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
            "LABEL_STUDIO_SENTRY_DSN": "",
            "LABEL_STUDIO_FRONTEND_SENTRY_DSN": "",
        }
    )
    return env


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


class LabelStudioServer:
    """A running server process; ``stop()`` (or leaving the ``with`` block) ends it and its children."""

    def __init__(self, process: subprocess.Popen, port: int, paths: StatePaths, creds: Credentials) -> None:
        self.process = process
        self.port = port
        self.paths = paths
        self.credentials = creds

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def stop(self, timeout: float = 20.0) -> None:
        if self.process.poll() is not None:
            return
        # The server runs in its own session (start_new_session): signal exactly that group.
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout)

    def __enter__(self) -> LabelStudioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _log_tail(path: Path, chars: int = 1500) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def wait_until_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    """Poll ``/health`` until the server answers; fail early with the log tail if it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LabelStudioError(
                f"Label Studio exited with code {process.returncode}; log {log}:\n{_log_tail(log)}"
            )
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise LabelStudioError(f"Label Studio did not answer on {url} within {timeout:.0f} s; log {log}")


def check_token(url: str, token: str) -> None:
    """Fail clearly when the saved token is not the one the database knows."""
    reply = httpx.get(
        f"{url}/api/current-user/whoami", headers={"Authorization": f"Token {token}"}, timeout=10
    )
    if reply.status_code != 200:
        raise LabelStudioError(
            f"Label Studio at {url} refused the admin token (HTTP {reply.status_code}); the data folder was "
            "created with other credentials: use those, or start with a new --data-dir"
        )


def start_server(
    paths: StatePaths,
    creds: Credentials,
    *,
    port: int = DEFAULT_PORT,
    exe: Path | None = None,
    timeout: float = 240.0,
    base_env: Mapping[str, str] | None = None,
) -> LabelStudioServer:
    """Start Label Studio on 127.0.0.1:``port`` and wait until it answers (first start runs migrations)."""
    exe = (exe or executable(paths.venv)).absolute()
    if not exe.exists():
        raise LabelStudioError(f"{exe} not found: install Label Studio first (rwpost annotate serve does)")
    if port_in_use(port):
        raise ConfigError(f"port {port} on {LOOPBACK} is already in use: choose another with --port")
    for folder in (paths.data, paths.files):
        folder.mkdir(parents=True, exist_ok=True)
    cmd = [str(exe), "start", "--no-browser", "--internal-host", LOOPBACK, "--port", str(port)]
    log = open(paths.log, "ab")  # noqa: SIM115 - the child keeps writing after this function returns
    try:
        process = subprocess.Popen(
            cmd,
            cwd=paths.data,
            env=server_env(paths, creds, base_env=base_env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        log.close()
    server = LabelStudioServer(process, port, paths, creds)
    try:
        wait_until_healthy(server.url, process, paths.log, timeout)
        check_token(server.url, creds.token)
    except BaseException:
        server.stop()
        raise
    return server
