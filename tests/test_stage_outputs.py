"""A stage refuses, in one line and before any work, an output that is, holds or lies inside what it reads
(issue 27, hostile H1): params.yaml could aim ``evaluate.summary`` at params.yaml itself, ``reformat.out`` at
the crawl store, ``split.rejects`` at split's input or ``stats.out`` into rwpost's code, and the stage wrote
over it with exit 0. The CLI refused these already; the stages now do too (``StageParams.from_params``).
"""

from __future__ import annotations

import copy
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rwpost.errors import ConfigError
from rwpost.stages.base import load_params

ROOT = Path(__file__).resolve().parents[1]
PARAMS = load_params(ROOT / "params.yaml")


def _with(section: str, key: str, value: str) -> dict:
    changed = copy.deepcopy(PARAMS)
    changed[section][key] = value
    return changed


@pytest.mark.parametrize(
    ("stage", "section", "key", "value", "how"),
    [
        ("evaluate", "evaluate", "summary", "params.yaml", "is also"),
        ("reformat", "reformat", "out", "data/work/crawl", "is also"),
        ("split", "split", "rejects", "data/work/annotated/samples.jsonl", "is also"),
        ("extract", "extract", "out", "data/work/tagged", "holds"),  # tagged/funnel.json is its input
        ("extract", "extract", "cache", "data/work/tagged/articles.jsonl", "is also"),
        ("filter", "filter", "out", "data/work/extract", "holds"),
        ("assemble", "assemble", "out", "data/work/filter", "holds"),
        ("annotate_merge", "annotate", "out", "data/work/assemble", "holds"),
        ("stats", "stats", "out", "rwpost", "is also"),
        ("stats", "stats", "out", "rwpost/filters", "is inside"),
        ("stats", "stats", "out", ".", "holds"),
        ("evaluate", "evaluate", "out", "data/rwpost/v0.1.0/runs", "is inside"),
        ("crawl", "crawl", "out", "data/sample/site", "is also"),
    ],
)
def test_an_output_over_what_the_stage_reads_is_refused_naming_the_key(stage, section, key, value, how):
    module = importlib.import_module(f"rwpost.stages.{stage}")
    cwd = os.getcwd()
    os.chdir(ROOT)  # params.yaml's paths are relative to the project, as dvc runs the stages
    try:
        with pytest.raises(ConfigError) as err:
            module.Params.from_params(_with(section, key, value))
    finally:
        os.chdir(cwd)
    message = str(err.value)
    assert message.startswith(f"params.yaml: {section}.{key}: {value} {how} an input of this stage ("), (
        message
    )
    assert message.endswith("write the output elsewhere") and "\n" not in message


def test_the_default_params_and_an_output_beside_the_inputs_pass():
    from rwpost.stages import STAGES

    for name in STAGES:
        importlib.import_module(f"rwpost.stages.{name}").Params.from_params(PARAMS)
    reformat = importlib.import_module("rwpost.stages.reformat")
    reformat.Params.from_params(_with("reformat", "out", "data/work/crawl-tagged"))  # a prefix, not a folder


def _stage(name: str, params: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", f"pipelines.{name}", "--params", str(params)]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_evaluate_summary_aimed_at_params_yaml_leaves_it_untouched(tmp_path):
    params = tmp_path / "params.yaml"
    changed = _with("evaluate", "summary", str(params))
    changed["evaluate"]["out"] = str(tmp_path / "runs")
    params.write_text(yaml.safe_dump(changed), encoding="utf-8")
    before = params.read_bytes()
    done = _stage("evaluate", params)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {params}: evaluate.summary: {params} is also an input of this stage (the params file: "
        f"{params}); write the output elsewhere"
    ]
    assert params.read_bytes() == before
    assert not (tmp_path / "runs").exists()


def test_reformat_out_aimed_at_the_crawl_store_through_a_symlink_writes_nothing(tmp_path):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "articles.jsonl").write_text('{"id": "rw-1"}\n', encoding="utf-8")
    (tmp_path / "link").symlink_to(crawl)
    params = tmp_path / "params.yaml"
    changed = copy.deepcopy(PARAMS)
    changed["crawl"]["out"] = str(crawl)
    changed["reformat"]["out"] = str(tmp_path / "link")
    params.write_text(yaml.safe_dump(changed), encoding="utf-8")
    done = _stage("reformat", params)
    assert done.returncode == 2, done.stderr
    assert "reformat.out: " in done.stderr
    assert "is also an input of this stage (reformat.crawl: " in done.stderr
    assert sorted(p.name for p in crawl.iterdir()) == ["articles.jsonl"]
    assert (crawl / "articles.jsonl").read_text(encoding="utf-8") == '{"id": "rw-1"}\n'


@pytest.mark.parametrize(
    ("stage", "section", "key", "value", "problem"),
    [
        (
            "evaluate",
            "evaluate",
            "summary",
            "dvc.yaml",
            "is an existing file that is not an evaluate summary",
        ),
        (
            "evaluate",
            "evaluate",
            "summary",
            "README.md",
            "is an existing file that is not an evaluate summary",
        ),
        (
            "split",
            "split",
            "rejects",
            "pyproject.toml",
            "is an existing file that is not a JSONL file of set-",
        ),
        ("extract", "extract", "cache", "dvc.lock", "is an existing file that is not an SQLite cache"),
        ("reformat", "reformat", "out", "../../../../tmp/escape", "leads out of the project"),
        ("evaluate", "evaluate", "summary", "../outside.json", "leads out of the project"),
        ("stats", "stats", "out", "Makefile", "is an existing file, expected a folder"),
    ],
)
def test_an_output_that_is_not_the_stages_to_write_is_refused(stage, section, key, value, problem):
    # issue 39 M4: evaluate.summary: dvc.yaml replaced dvc.yaml; reformat.out: ../../x wrote outside the repo
    module = importlib.import_module(f"rwpost.stages.{stage}")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with pytest.raises(ConfigError) as err:
            module.Params.from_params(_with(section, key, value))
        module.Params.from_params(_with(section, key, value), outputs_anywhere=True)  # the flag allows it
    finally:
        os.chdir(cwd)
    message = str(err.value)
    assert message.startswith(f"params.yaml: {section}.{key}: {value} {problem}"), message
    assert message.endswith("write it elsewhere, or pass --outputs-anywhere") and "\n" not in message


def test_a_summary_over_a_data_file_outside_the_repo_is_refused_and_its_own_summary_is_rewritten(tmp_path):
    data = tmp_path / "R.jsonl"
    data.write_text('{"id": "rw-1", "label": "False"}\n', encoding="utf-8")  # the review's data file
    params = tmp_path / "params.yaml"
    changed = _with("evaluate", "summary", str(data))
    changed["evaluate"]["out"] = str(tmp_path / "runs")
    params.write_text(yaml.safe_dump(changed), encoding="utf-8")
    done = _stage("evaluate", params)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {params}: evaluate.summary: {data} is an existing file that is not an evaluate summary "
        "(JSON of runs by subset): not replaced; write it elsewhere, or pass --outputs-anywhere"
    ]
    assert data.read_text(encoding="utf-8") == '{"id": "rw-1", "label": "False"}\n'  # before: replaced
    evaluate = importlib.import_module("rwpost.stages.evaluate")
    earlier = tmp_path / "summary.json"
    earlier.write_text('{"main": {"majority/T": {"accuracy": 0.5}}}\n', encoding="utf-8")
    evaluate.Params.from_params(_with("evaluate", "summary", str(earlier)))  # a previous summary: rewritten
