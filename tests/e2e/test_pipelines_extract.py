"""The reformat and extract DVC stages run as `dvc repro` runs them: a subprocess with a params file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from rwpost.io import iter_jsonl
from tests.conftest import write_real_crawl_store

ROOT = Path(__file__).resolve().parents[2]


def run_stage(name: str, params: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", f"pipelines.{name}", "--params", str(params)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_reformat_then_extract_stages_offline_without_a_key(tmp_path):
    store = write_real_crawl_store(tmp_path / "crawl")
    params = tmp_path / "params.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "reformat": {"crawl": str(store), "out": str(tmp_path / "tagged"), "min_words": 50},
                "extract": {
                    "input": str(tmp_path / "tagged" / "articles.jsonl"),
                    "out": str(tmp_path / "extract"),
                    "backend": "auto",
                    "cache": str(tmp_path / "llm.sqlite"),
                },
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RWPOST_LLM_"))}
    env["PYTHONPATH"] = str(ROOT)
    done = run_stage("reformat", params, env)
    assert done.returncode == 0, done.stderr
    done = run_stage("extract", params, env)
    assert done.returncode == 0, done.stderr
    rows = [row for _, row in iter_jsonl(tmp_path / "extract" / "extractions.jsonl")]
    assert len(rows) == 2 and all(r["provenance"]["backend"] == "offline" for r in rows)
    cost = json.loads((tmp_path / "extract" / "cost.json").read_text())
    assert cost["backend"] == "offline" and cost["counts"]["extracted"] == 2
    summary = json.loads((tmp_path / "extract" / "summary.json").read_text())
    assert summary["extracted"] == 2 and summary["backend"] == "offline"
    # a rerun asks for nothing: its bill changes, the outputs' summary does not
    done = run_stage("extract", params, env)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "extract" / "cost.json").read_text())["counts"]["skipped"] == 2
    assert json.loads((tmp_path / "extract" / "summary.json").read_text()) == summary


def test_extract_stage_names_a_missing_section(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("reformat: {}\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = run_stage("extract", params, env)
    assert done.returncode == 2 and "extract" in done.stderr
