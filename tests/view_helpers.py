"""What the view tests look at: the bundled sample's stage outputs (copied from the session's command-line
build, conftest's ``cli_built_sample``, which tests/e2e shows equal to `dvc repro`'s; or built by the
pipeline's own stages from a params.yaml whose paths are relative to a temporary folder), two cheap runs of
`rwpost evaluate` on it, and an AgentFact run against the loopback LLM and search servers (a
transcript with model calls, searches and the leakage guard's drops)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from rwpost.dataset import read_parquet

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("crawl", "reformat", "extract", "filter", "assemble", "annotate_merge", "split")
SECRET = "sk-view-secret-never-shown-0123456789"
"""An API key in the environment of the server and of the agent run: no page may show it."""


def outputs_folder(tmp_path_factory) -> Path:
    """Where the session builds the outputs (``RWPOST_VIEW_OUTPUTS``: a folder kept between sessions, so
    a developer rerunning the view tests builds them once)."""
    import os

    kept = os.environ.get("RWPOST_VIEW_OUTPUTS")
    return Path(kept) if kept else tmp_path_factory.getbasetemp() / "view-bundled"


def bundled_outputs(tmp_path_factory, request) -> Path:
    """:func:`build_bundled` in :func:`outputs_folder`, from the session's command-line build of the sample
    (built only when the outputs are not complete yet)."""

    def staged() -> Path:
        return request.getfixturevalue("cli_built_sample")

    return build_bundled(outputs_folder(tmp_path_factory), staged)


def _env() -> dict[str, str]:
    from tests.killing import child_env

    return child_env()


def build_bundled(folder: Path, staged: Callable[[], Path] | None = None) -> Path:
    """The bundled sample's outputs under ``folder`` (data/rwpost/<version>, data/work, reports/evaluate),
    built once per session (a marker file says it is complete). ``staged()``, when given, is a checkout
    where the pipeline's stages already ran (conftest's ``cli_built_sample``): its data/work and published
    version are copied instead of running the stages again."""
    done = folder / ".built"
    if done.exists():
        return folder
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    version = folder / params["dataset"]["root"] / params["dataset"]["version"]
    if not (folder / ".stages").exists():
        _stages(folder, params, staged)
    if (folder / "reports").exists():
        shutil.rmtree(folder / "reports")
    for detector in ("majority", "category-prior"):
        command = [
            sys.executable,
            "-m",
            "rwpost",
            "evaluate",
            "--data",
            str(version / "main" / "test.parquet"),
            "--detector",
            detector,
            "--train",
            str(version / "main" / "dev.parquet"),
            "--setting",
            "T",
            "--out",
            f"reports/evaluate/main/{detector}-T",
            "--bootstrap",
            "50",
            "--no-progress",
        ]
        ran = subprocess.run(command, cwd=folder, env=_env(), capture_output=True, text=True, check=False)
        assert ran.returncode == 0, f"evaluate {detector}: {ran.stdout[-1000:]} {ran.stderr[-2000:]}"
    agent_run(
        version / "main" / "test.parquet", folder / "reports" / "evaluate" / "main" / "agentfact-TW", folder
    )
    command = [
        sys.executable,
        "-m",
        "rwpost",
        "leaderboard",
        "reports/evaluate/main",
        "--out",
        "reports/evaluate/leaderboard",
    ]
    ran = subprocess.run(command, cwd=folder, env=_env(), capture_output=True, text=True, check=False)
    assert ran.returncode == 0, f"leaderboard: {ran.stderr[-2000:]}"
    done.write_text("ok\n", encoding="utf-8")
    return folder


def _stages(folder: Path, params: dict, staged: Callable[[], Path] | None) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "sample").symlink_to(ROOT / "data" / "sample")
    (folder / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    if staged is not None:
        built = staged()
        for part in ("data/work", params["dataset"]["root"]):
            shutil.copytree(built / part, folder / part, symlinks=True)
        (folder / ".stages").write_text("ok\n", encoding="utf-8")
        return
    for stage in STAGES:
        command = [sys.executable, "-m", f"pipelines.{stage}", "--params", str(folder / "params.yaml")]
        ran = subprocess.run(command, cwd=folder, env=_env(), capture_output=True, text=True, check=False)
        assert ran.returncode == 0, f"{stage}: {ran.stderr[-2000:]}"
    (folder / ".stages").write_text("ok\n", encoding="utf-8")


def agent_run(data: Path, out: Path, tmp: Path) -> Path:
    """AgentFact, open web, over the first four samples of ``data``: scripted agents on the loopback LLM
    server, news and fact-check pages from the loopback search server (the guard drops the latter)."""
    from rwpost.evaluate import evaluate
    from rwpost.testing.llm import FakeLLMServer
    from rwpost.testing.search import SearchServer, result
    from tests.evaluate_helpers import Agents, agentfact_spec, news

    samples = read_parquet(data)[:4]

    def search(query):
        return [
            result("https://www.snopes.com/fact-check/x/", "Fact check", "Rating: False", "Dec 1, 2019"),
            *news(query, 2),
        ]

    with FakeLLMServer(Agents()) as llm, SearchServer(search) as searcher:
        spec = agentfact_spec(llm, searcher, tmp, "open-web", secret=SECRET)
        evaluate(
            samples, spec, out, encode=None, data_info={"path": str(data), "subset": "main", "split": "test"}
        )
    return out
