"""The extract stage (rwpost.stages.extract) run as ``dvc repro`` runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from killing import (
    ROOT,
    assert_ids_once,
    child_env,
    jsonl_ids,
    moments,
    report,
    run_to_end,
    stage_command,
    timed,
    tree_digest,
)

from rwpost.extract.offline import PROMPT_VERSION as OFFLINE_PROMPT
from rwpost.extract.scripted import scripted_reply
from rwpost.io import write_jsonl
from rwpost.testing.llm import FakeLLMServer
from tests.extract_helpers import sample_articles
from tests.killing import kill_and_resume, write_params

EXTRACT_OUTPUTS = ("extractions.jsonl", "rejects.jsonl", "summary.json")


@pytest.mark.kill
@pytest.mark.slow
class TestKill:
    """The kill pass (issue 16, tests/killing.py) on the extract stage: SIGKILLed at seeded moments, rerun to
    the uninterrupted run's outputs, asking the LLM server only what the killed run had not got."""

    def test_extract_killed_at_random_moments_resumes_to_the_uninterrupted_outputs(
        self, tmp_path, sample_pipeline
    ):
        tagged = sample_pipeline / "tagged" / "articles.jsonl"

        def params_in(folder: Path) -> Path:
            extract = {
                "input": str(tagged),
                "out": str(folder / "out"),
                "backend": "llm",
                "model": "scripted",
            }
            return write_params(
                folder, extract={**extract, "concurrency": 4, "cache": str(folder / "llm.sqlite")}
            )

        with FakeLLMServer(scripted_reply, latency_s=0.03) as server:
            env = child_env(OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url)
            whole = tmp_path / "whole"
            duration = timed(
                lambda: run_to_end(stage_command("extract", params_in(whole)), cwd=ROOT, env=env)
            )
            calls = server.chat_requests
            expected = tree_digest(whole / "out", EXTRACT_OUTPUTS)
            ids = jsonl_ids(whole / "out" / "extractions.jsonl")
            assert len(ids) == len(jsonl_ids(tagged)) and calls == 3 * len(ids)
            kills = []
            for point, after in enumerate(moments(duration)):
                folder = tmp_path / f"kill{point}"
                command = stage_command("extract", params_in(folder))
                kill = kill_and_resume(server, command, after, env, folder / "llm.sqlite", ROOT)
                where = f"point {point}: {kill}"
                assert_ids_once(folder / "out" / "extractions.jsonl", ids, where)
                assert tree_digest(folder / "out", EXTRACT_OUTPUTS) == expected, where
                # every answer the killed run got is cached: the resume asks exactly the rest
                assert kill["asked_on_resume"] == calls - kill["cached_at_kill"], where
                cost = json.loads((folder / "out" / "cost.json").read_text())
                # a kill after the last record leaves its resume nothing to extract (no "extracted" count)
                resumed = cost["counts"].get("extracted", 0) + cost["counts"]["skipped"]
                assert resumed == len(ids), where
                assert cost["summary"]["extracted"] == len(ids), where  # the outputs' totals, not the run's
                kills.append(kill)
        report("extract", kills, records=len(ids), llm_calls=calls, run_s=round(duration, 2))


def test_the_stage_refuses_to_resume_an_out_of_another_backend_and_writes_nothing(tmp_path):
    # issue 39 M3: extract.out naming an LLM output, run offline: "skipped 105", summary relabelled offline
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, sample_articles(3))
    out = tmp_path / "out"
    section = {"input": str(tagged), "out": str(out), "cache": str(tmp_path / "llm.sqlite")}
    with FakeLLMServer(scripted_reply) as server:
        env = child_env(OPENAI_API_KEY="test", OPENAI_BASE_URL=server.base_url)
        llm = write_params(tmp_path / "llm", extract={**section, "backend": "llm", "model": "scripted"})
        run_to_end(stage_command("extract", llm), cwd=ROOT, env=env)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    offline = write_params(tmp_path / "offline", extract={**section, "backend": "offline"})
    done = subprocess.run(
        stage_command("extract", offline), cwd=ROOT, env=child_env(), capture_output=True, text=True
    )
    assert done.returncode != 0
    assert done.stderr.strip() == (
        f"error: {out} holds the extractions of another run (3 by backend llm, model scripted, prompt "
        f"{json.loads(before['summary.json'])['prompt_version']}); this run is backend offline, model -, "
        f"prompt {OFFLINE_PROMPT}: give another --out (extract.out), or remove {out} to extract again"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
