"""The run manifest: enough to tell what was run, on what, with which code (STYLE.md 11)."""

from __future__ import annotations

import functools
import json
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rwpost
from rwpost.io import sha256_hex


@functools.cache
def code_version() -> str:
    """``git describe --always --dirty --tags`` of the rwpost checkout, else the package version: once a
    process (the code it runs was imported at its start; a stage asks for every run)."""
    root = Path(rwpost.__file__).resolve().parents[1]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return f"{rwpost.__version__}+git.{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        return rwpost.__version__


def ids_sha256(ids: list[str]) -> str:
    """SHA-256 of a sorted id list: identifies a set of samples independent of file format."""
    return sha256_hex("\n".join(sorted(ids)))


def fingerprint(obj: Any) -> str:
    """A short stable hash of a JSON-able object (run identity for resume)."""
    return sha256_hex(json.dumps(obj, sort_keys=True, default=str))[:16]


def environment() -> dict[str, Any]:
    """Python, platform and, if torch is already imported, the accelerator."""
    env: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform()}
    torch = sys.modules.get("torch")
    if torch is not None:
        env["torch"] = torch.__version__
        env["cuda_available"] = bool(torch.cuda.is_available())
        if torch.cuda.is_available():
            env["cuda_device"] = torch.cuda.get_device_name(0)
    return env


def now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")
