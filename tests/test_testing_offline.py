"""The offline tour's stand-ins (issue 39 §3): ``rwpost testing serve`` (a model server answering from each
request's JSON schema, the search, image-search and Wikipedia twins) and ``rwpost testing tiny-models``,
used as the README's offline tour uses them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import jsonschema
import pytest

from rwpost.testing.offline import MODEL, OfflineServices
from rwpost.testing.schema import instance
from tests.conftest import DEV, run_cli

SCHEMAS = sorted((Path(__file__).resolve().parents[1] / "schemas" / "llm").glob("*.schema.json"))


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_packaged_schema_gets_valid_instances(path):
    schema = json.loads(path.read_text(encoding="utf-8"))
    for seed in range(10):
        jsonschema.Draft202012Validator(schema).validate(instance(schema, seed))


def _first(n: int, tmp_path: Path) -> Path:
    data = tmp_path / "r.jsonl"
    data.write_text("".join(DEV.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    return data


@pytest.mark.parametrize(("detector", "setting"), [("agentfact", "T+W"), ("agentm3d", "T+W")])
def test_the_papers_detectors_answer_every_sample_offline_with_the_printed_options(
    detector, setting, tmp_path, capsys, monkeypatch
):
    # before: a generic loopback answer failed every AgentFact sample by schema, and nothing said which
    # options point a detector's search plug-ins at a twin
    data = _first(3, tmp_path)
    with OfflineServices() as services:
        for name, value in services.environment().items():
            monkeypatch.setenv(name, value)
        options = shlex.split(" ".join(services.options(detector)))
        assert options[:2] == ["--model", MODEL]
        out = tmp_path / detector
        code, err = run_cli(
            capsys, "evaluate", "--data", data, "--detector", detector, "--setting", setting, *options,
            "--out", out, "--bootstrap", "0", "--no-progress", "--no-key-points",
        )  # fmt: skip
        assert code == 0, err
        assert services.llm.chat_requests > 0
        assert services.search.queries or services.search.wiki_queries  # the twin was asked, not the web
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["views"]["main"]["n_failed"] == 0 and metrics["views"]["main"]["n"] == 3


def test_tiny_models_are_built_by_a_command_and_local_vlm_runs_on_them(tmp_path, capsys):
    pytest.importorskip("transformers")
    # before: only the test helpers built them, and those import pytest
    code, err = run_cli(capsys, "testing", "tiny-models", "--out", tmp_path / "models")
    assert code == 0, err
    assert {p.name for p in (tmp_path / "models").iterdir()} == {"vlm", "vlm-random", "reward"}
    out = tmp_path / "run"
    code, err = run_cli(
        capsys, "evaluate", "--data", _first(2, tmp_path), "--detector", "local-vlm", "--model",
        tmp_path / "models" / "vlm", "--setting", "T", "--out", out, "--bootstrap", "0", "--no-progress",
        "--no-key-points",
    )  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["views"]["main"]["n_failed"] == 0 and metrics["views"]["main"]["n"] == 2
    code, err = run_cli(capsys, "testing", "tiny-models", "--out", tmp_path / "models")
    assert code != 0 and "already exists" in err  # never over existing models unasked
