"""Installed, not only cloned (issue 16): build the wheel, install it in a fresh virtual environment
(no network: ``--no-deps``; the dependencies come from this environment's site-packages through a
``.pth`` line) and crawl the loopback sample site from a temporary directory, outside the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "data" / "sample" / "site"

pytestmark = pytest.mark.slow


def build_wheel(dest: Path) -> Path:
    """The wheel of a clean copy of the sources (so no build/ is left in the checkout)."""
    src = dest / "src"
    for name in ("rwpost", "crawlers"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    wheels = dest / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", wheels, src],
        check=True,
        capture_output=True,
    )
    return next(wheels.glob("rwpost-*.whl"))


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def fresh_venv(where: Path, wheel: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)  # ensurepip: offline
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel],
        check=True,
        capture_output=True,
        env=clean_env(),  # with our PYTHONPATH, pip would take this checkout's rwpost as installed
    )
    # then the dependencies (scrapy, pydantic, ...) from this environment, after its own packages (added
    # after the install, so pip does not take this environment's editable rwpost for the wheel's)
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def test_the_installed_wheel_crawls_from_any_directory(tmp_path):
    wheel = build_wheel(tmp_path)
    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    where = subprocess.run(
        [
            bin_dir / "python",
            "-c",
            "import rwpost, snopes_crawler; print(rwpost.__file__, snopes_crawler.__file__)",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(ROOT) not in where and str(tmp_path / "venv") in where
    with SampleServer(SITE) as server:
        done = subprocess.run(
            [
                bin_dir / "rwpost",
                "crawl",
                "--start-url",
                f"{server.base_url}/fact-check/",
                "--out",
                "out",
                "--allow-loopback",
                "--no-throttle",
                "--since",
                "any",
                "--max-articles",
                "5",
                "--site-origin",
                HOSTILE_HOST,
                "--json",
            ],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["store"]["articles"] == 5 and report["this_run"]["fetched"] == 5
    assert len((elsewhere / "out" / "articles.jsonl").read_text().splitlines()) == 5
    for command in (["--help"], ["crawl", "--help"], ["sample", "--help"]):
        assert (
            subprocess.run(
                [bin_dir / "rwpost", *command], cwd=elsewhere, env=env, capture_output=True
            ).returncode
            == 0
        )
