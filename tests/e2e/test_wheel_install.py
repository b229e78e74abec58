"""Installed, not only cloned (issues 16 and 27): `pip wheel` of the clone leaves it as it was; the wheel,
installed in a fresh virtual environment (no network: ``--no-deps --no-index``; the dependencies come
from this environment's site-packages through a ``.pth`` line, never this checkout's rwpost), runs the
README's jobs from a temporary folder outside the repository: sample serve -> crawl -> reformat ->
extract (offline rules) -> filter -> evaluate, and sample build from the shipped released sample."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "data" / "sample" / "site"
ARTICLES = 6
"""Articles crawled: enough for every stage to keep some, few enough for a lean test."""

pytestmark = pytest.mark.slow


def build_wheel(dest: Path) -> Path:
    """The wheel as ``pip wheel`` builds it in the clone (offline: this environment's build backend); it
    must leave no build/ or *.egg-info behind."""
    before = {p.name for p in ROOT.iterdir()}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dest, ROOT],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr  # the backend (hatchling) comes with rwpost[dev]
    assert {p.name for p in ROOT.iterdir()} - before == set()
    return next(dest.glob("rwpost-*.whl"))


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new virtual environment holding the installed wheel; its ``bin`` folder."""
    venv.EnvBuilder(with_pip=False).create(where)  # this environment's pip installs into it (no ensurepip)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel],
        check=True,
        capture_output=True,
        env=clean_env(),  # with our PYTHONPATH, pip would take this checkout's rwpost as installed
    )
    # then the dependencies (scrapy, pydantic, ...) from this environment, after its own packages (added
    # after the install, so pip does not take this environment's editable rwpost for the wheel's; a
    # path line runs none of that folder's .pth files, so the editable install's hook stays off)
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_installed_wheel_runs_the_readme_jobs_from_any_folder(tmp_path):
    wheel = build_wheel(tmp_path / "wheels")
    bin_dir = fresh_venv(tmp_path / "venv", wheel)
    installed = tmp_path / "venv" / "lib"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env()
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1"
    )

    def rwpost(*args: object) -> str:
        done = subprocess.run(
            [bin_dir / "rwpost", *map(str, args)], cwd=elsewhere, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"rwpost {' '.join(map(str, args))}: {done.stderr}"
        return done.stdout

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
    assert str(ROOT) not in where and where.count(str(installed)) == 2, where

    server = subprocess.Popen(
        [bin_dir / "rwpost", "sample", "serve", "--port", "0"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        serving = server.stdout.readline()  # "serving <site> on http://127.0.0.1:PORT/ (Ctrl-C to stop)"
        assert f"serving {installed}" in serving, serving + server.stderr.read()  # the site is package data
        base = re.search(r"http://127\.0\.0\.1:\d+", serving).group(0)
        report = json.loads(
            rwpost(
                "crawl",
                "--start-url",
                f"{base}/fact-check/",
                "--out",
                "crawl",
                "--allow-loopback",
                "--no-throttle",
                "--since",
                "any",
                "--max-articles",
                ARTICLES,
                "--json",
            )  # fmt: skip
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert report["store"]["articles"] == ARTICLES and report["store"]["parsed_ok"] == ARTICLES

    rwpost("reformat", "--in", "crawl", "--out", "tagged")
    assert len((elsewhere / "tagged" / "articles.jsonl").read_text().splitlines()) == ARTICLES
    rwpost("extract", "--in", "tagged/articles.jsonl", "--out", "extract", "--backend", "offline")
    assert len((elsewhere / "extract" / "extractions.jsonl").read_text().splitlines()) == ARTICLES
    funnel = json.loads(
        rwpost(
            "filter",
            "run",
            "--tagged",
            "tagged/articles.jsonl",
            "--extractions",
            "extract/extractions.jsonl",
            "--crawl",
            "crawl/articles.jsonl",
            "--out",
            "filter",
            "--json",
        )  # fmt: skip
    )
    assert funnel["input"] == ARTICLES and 0 < funnel["kept"] <= ARTICLES
    assert [step["filter"] for step in funnel["funnel"]] == ["size", "necessity", "watermark", "neardup"]

    # the README's example data path reads the shipped released sample (this folder has no data/)
    rwpost(
        "evaluate", "--data", "data/sample/released/rwpost_dev_main.head.jsonl", "--detector", "majority",
        "--train-fraction", "0.5", "--seed", "0", "--out", "evaluate",
    )  # fmt: skip
    metrics = json.loads((elsewhere / "evaluate" / "metrics.json").read_text())
    assert metrics and not (elsewhere / "data").exists()

    # the shipped released sample rebuilds the shipped site, byte for byte
    rwpost("sample", "build", "--out", "site")
    assert tree_digest(elsewhere / "site") == tree_digest(SITE)
