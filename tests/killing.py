"""The kill tests' machinery (issue 16): seeded moments, a child SIGKILLed as a process group, the outputs
compared and the survivals reported, and the crawl of the sample site they kill. Used by
the TestKill classes (marker ``kill``) of tests/test_crawl.py, tests/test_stages_extract.py,
tests/test_stages_filter.py and tests/test_evaluate_runner.py, and the hardening tests of tests/test_crawl.py.

CI runs ``RWPOST_KILL_POINTS`` = 3 points per stage; ``RWPOST_KILL_POINTS=20`` runs the issue's full set;
``RWPOST_KILL_SEED`` picks other moments.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from rwpost.crawl import CrawlConfig
from rwpost.llm import LLMCache
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.sample.serve import SampleServer
from rwpost.testing.llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[1]
POINTS = int(os.environ.get("RWPOST_KILL_POINTS", "3"))
SEED = int(os.environ.get("RWPOST_KILL_SEED", "16"))
SITE = ROOT / "data" / "sample" / "site"
HASHED = ("articles.jsonl", "aliases.jsonl", "html", "images")
"""The parts of a crawl store DVC hashes."""


def crawl_options(server: SampleServer, out: Path, **extra) -> CrawlConfig:
    """Options of an unthrottled crawl of the sample site served by ``server`` into ``out``."""
    chosen = {
        "since": "any",
        "throttle": False,
        "allow_loopback": True,
        "progress_interval": 0.5,
        "site_origin": HOSTILE_HOST,
        **extra,
    }
    return CrawlConfig(start_url=f"{server.base_url}/fact-check/", out=out, **chosen)


def moments(duration: float, *, points: int = POINTS, seed: int = SEED, earliest: float = 0.2) -> list[float]:
    """``points`` seeded moments (seconds after the start) within one uninterrupted run's ``duration``."""
    rng = random.Random(seed)
    return sorted(rng.uniform(earliest, max(duration, earliest)) for _ in range(points))


def timed(run: Callable[[], Any]) -> float:
    """Seconds ``run()`` took."""
    started = time.monotonic()
    run()
    return time.monotonic() - started


def run_killed(
    command: Sequence[str], after: float, *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Start ``command`` in its own process group and SIGKILL the whole group after ``after`` seconds.

    True when the kill found it running; False when it had already exited (it must have succeeded).
    """
    child = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        child.wait(timeout=after)
    except subprocess.TimeoutExpired:
        pass
    running = child.poll() is None
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, stderr = child.communicate()
    if not running:
        assert child.returncode == 0, f"{command} failed before the kill: {stderr.decode(errors='replace')}"
    return running


def run_to_end(
    command: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> None:
    """Run ``command`` to its end; it must succeed."""
    done = subprocess.run(
        list(command), cwd=cwd, env=None if env is None else dict(env), capture_output=True, text=True
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}: {done.stderr[-2000:]}"


def stage_command(stage: str, params: Path) -> list[str]:
    """The DVC stage as ``dvc repro`` runs it: ``python -m pipelines.<stage> --params FILE``."""
    return [sys.executable, "-m", f"pipelines.{stage}", "--params", str(params)]


def cli_command(*args: str) -> list[str]:
    """``rwpost ARGS`` as a user runs it."""
    return [sys.executable, "-m", "rwpost", *args]


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with this checkout first on the path, no LLM credentials, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RWPOST_LLM_"))}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **extra}


def tree_digest(root: Path, names: Iterable[str]) -> dict[str, str]:
    """sha256 of every file under ``root`` named by ``names`` (files or folders; missing ones left out)."""
    files: dict[str, str] = {}
    for name in names:
        path = root / name
        for file in sorted([path] if path.is_file() else path.rglob("*") if path.exists() else []):
            if file.is_file():
                files[str(file.relative_to(root))] = hashlib.sha256(file.read_bytes()).hexdigest()
    return files


def jsonl_ids(path: Path) -> list[str]:
    """The ``id`` of every line of a JSONL file (none when it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line]


def assert_ids_once(path: Path, expected: Iterable[str], where: str) -> None:
    """Every expected id exactly once in ``path``: no duplicate and no missing record."""
    ids = jsonl_ids(path)
    assert len(ids) == len(set(ids)), f"{where}: duplicate ids in {path.name}"
    assert sorted(ids) == sorted(expected), f"{where}: {path.name} lost or gained records"


def report(stage: str, kills: list[dict[str, Any]], **figures: Any) -> None:
    """One JSON line per stage: the points survived (``killed``: the kill found the run going)."""
    running = sum(bool(k.get("killed", True)) for k in kills)
    line = {"stage": stage, "points": len(kills), "killed_mid_run": running, **figures, "kills": kills}
    print(json.dumps(line))


def write_params(folder: Path, **sections: Any) -> Path:
    """A params.yaml of ``sections`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(sections), encoding="utf-8")
    return path


def cached_answers(path: Path) -> int:
    """Answers the LLM cache holds: calls a killed run completed."""
    if not path.exists():
        return 0
    with LLMCache(path) as cache:
        return len(cache)


def settle(server: FakeLLMServer) -> int:
    """The requests the server got, once the killed client's last ones are through."""
    deadline = time.monotonic() + 10
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)
    return server.chat_requests


def kill_and_resume(
    server: FakeLLMServer, command: list[str], after: float, env: dict[str, str], cache: Path, cwd: Path
) -> dict[str, Any]:
    """Kill ``command`` after ``after`` s, then rerun it to its end; what the server and the cache saw."""
    before = server.chat_requests
    killed = run_killed(command, after, cwd=cwd, env=env)
    at_kill = settle(server)
    cached = cached_answers(cache)
    run_to_end(command, cwd=cwd, env=env)
    resumed = settle(server) - at_kill
    return {
        "after_s": round(after, 2),
        "killed": killed,
        "asked_before_kill": at_kill - before,
        "cached_at_kill": cached,
        "asked_on_resume": resumed,
    }
