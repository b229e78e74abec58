"""End-to-end runs of the bundled sample: a clean copy of the repository, built from the CLI or by
`dvc repro`."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SAMPLE_COUNTS = {
    "crawl/articles.jsonl": 111,
    "tagged/articles.jsonl": 105,
    "extract/extractions.jsonl": 105,
    "assemble/samples.jsonl": 58,
}
"""Lines of the bundled sample's stage outputs under data/work/: the crawl store, tagged articles,
extractions, and the samples the filters kept."""
PUBLISHED = {"main": {"dev": 6, "test": 26}, "challenging": {"dev": 5, "test": 20}}
"""Rows per subset and split of the published version (57: one sample's rating is not about facts)."""


def _run_command(cmd: list[str], cwd: Path) -> str:
    """Run ``cmd`` in ``cwd`` as a user would (this Python's tools first, offline, no LLM key); its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RWPOST_LLM_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(cwd)
    env["HF_DATASETS_OFFLINE"] = "1"
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def clean_checkout(dest: Path) -> Path:
    """The repository's committed and new (not ignored) files copied to ``dest``, with no build outputs."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in files:
        if (ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).symlink_to(os.readlink(ROOT / rel))
        elif (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    (dest / "dvc.lock").unlink(missing_ok=True)
    _run_command(["git", "init", "-q"], dest)
    return dest


@pytest.fixture(scope="session")
def checkout(tmp_path_factory) -> Path:
    """A clean checkout that `dvc repro` builds (shared by the tests of this folder)."""
    return clean_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="session")
def make_checkout():
    """``make_checkout(dest) -> dest``: a clean copy of the repository (:func:`clean_checkout`)."""
    return clean_checkout


@pytest.fixture(scope="session")
def run_command():
    """``run_command(cmd, cwd) -> output``: a command run as a user would, offline; it must succeed."""
    return _run_command


@pytest.fixture(scope="session")
def sample_counts() -> dict[str, int]:
    return SAMPLE_COUNTS


@pytest.fixture(scope="session")
def published() -> dict[str, dict[str, int]]:
    return PUBLISHED
