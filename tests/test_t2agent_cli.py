"""T2Agent from the command line: ``rwpost evaluate --detector t2agent --select-tools`` (Algorithm 2 on a
labelled split) writes a toolset file that a later run loads with ``--set toolset=PATH``; bad inputs are
one-line errors. The backbone is the loopback LLM server (scripted), the tools the loopback search server."""

from __future__ import annotations

import json
import re

import pytest

from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from rwpost.testing.search import SearchServer
from tests.conftest import one_line, run_cli
from tests.evaluate_helpers import make_sample, news, schema_of
from tests.t2agent_helpers import Backbone

SECRET = "sk-t2agent-cli-secret-never-written"
OPTIONS = ["--bootstrap", "0", "--no-progress", "--no-key-points", "--setting", "T+W"]


class GoogleRefutes(Backbone):
    """With Google among the actions offered, the textual sub-task searches it and refutes (confidence 9);
    without it, it finishes with a weak support. So Google raises the accuracy on false claims."""

    def __init__(self) -> None:
        super().__init__(
            steps={("text", "Google[the claim]"): [("Finish", "TEXT REFUTE")]},
            st={"Google[the claim]": 9},
            sc={"TEXT REFUTE": 9},
        )

    def __call__(self, body) -> Reply:
        user = message_text(body, "user")
        if schema_of(body) == "t2agent_step" and "Google[" in user and "Action 1:" not in user:
            return Reply.answer({"candidates": [{"thought": "look", "tool": "Google", "input": "the claim"}]})
        return super().__call__(body)


def sets(llm, search, tmp_path) -> list[str]:
    options = {
        "model": "test-model",
        "base_url": llm.base_url,
        "cache_path": str(tmp_path / "llm.sqlite"),
        "search": "loopback",
        "search_options": json.dumps({"base_url": search.base_url}),
        "wikipedia": "loopback-wikipedia",
        "wikipedia_options": json.dumps({"base_url": search.base_url}),
        "simulations": 2,
        "timeout_s": 10.0,
    }
    return [x for k, v in options.items() for x in ("--set", f"{k}={v}")]


@pytest.fixture
def dev(tmp_path):
    path = tmp_path / "dev.jsonl"
    write_jsonl(path, [make_sample(n, Label.FALSE) for n in range(2)])
    return path


def test_select_tools_writes_a_toolset_that_a_later_run_loads(tmp_path, dev, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "selection"
    with FakeLLMServer(GoogleRefutes()) as llm, SearchServer({"the claim": news("the claim", 1)}) as search:
        options = sets(llm, search, tmp_path)
        code, err = run_cli(capsys, "evaluate", "--data", dev, "--detector", "t2agent", "--select-tools",
                            "--out", out, *options, *OPTIONS)  # fmt: skip
        assert code == 0, err
        # T+W: the tools of this cell are Wikipedia (the base) and Google; Google raised the accuracy
        chosen = json.loads((out / "toolset.json").read_text())
        assert chosen["tools"] == ["Wikipedia", "Google"]
        assert [(s["tools"], s["accuracy"], s["kept"]) for s in chosen["steps"]] == [
            (["Wikipedia"], 0.0, True),
            (["Wikipedia", "Google"], 1.0, True),
        ]
        assert err.endswith(f"--set toolset={out / 'toolset.json'}\n")
        assert sorted(p.name for p in out.iterdir()) == [
            "tools-Wikipedia",
            "tools-Wikipedia-Google",
            "toolset.json",
        ]
        # a rerun of the selection resumes both runs: not one model call more
        asked = len(llm.requests)
        assert run_cli(capsys, "evaluate", "--data", dev, "--detector", "t2agent", "--select-tools",
                       "--out", out, *options, *OPTIONS)[0] == 0  # fmt: skip
        assert len(llm.requests) == asked

        run = tmp_path / "run"
        code, err = run_cli(capsys, "evaluate", "--data", dev, "--detector", "t2agent", "--out", run,
                            "--set", f"toolset={out / 'toolset.json'}", *options, *OPTIONS)  # fmt: skip
        assert code == 0, err
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["detector_config"]["tools"] == ["Wikipedia", "Google"]
    assert manifest["detector_config"]["toolset"] == str(out / "toolset.json")
    assert json.loads((run / "metrics.json").read_text())["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("toolset", "problem"),
    [
        (
            '{"tools": ["Wikipedia", "TinEye"]}',
            r"toolset\.json: unknown tools \['TinEye'\]; known: Wikipedia",
        ),
        ('{"tools": ["Wikipedia"', r"toolset\.json: not a toolset file written by --select-tools \("),
        ('{"steps": []}', r"toolset\.json: not a toolset file written by --select-tools \(no 'tools' key\)"),
        (None, r"toolset\.json: not a toolset file written by --select-tools \(.*No such file"),
    ],
)
def test_a_bad_toolset_file_is_one_line(tmp_path, dev, capsys, monkeypatch, toolset, problem):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "toolset.json"
    if toolset is not None:
        path.write_text(toolset)
    code, err = run_cli(capsys, "evaluate", "--data", dev, "--detector", "t2agent", "--out", tmp_path / "r",
                        "--set", "model=m", "--set", f"toolset={path}", *OPTIONS)  # fmt: skip
    assert code == 2 and re.search(problem, one_line(err)), err


def test_select_tools_refuses_an_unlabelled_split_an_unknown_tool_and_another_detector(tmp_path, capsys):
    unlabelled = tmp_path / "test.jsonl"
    write_jsonl(unlabelled, [make_sample(n, None) for n in range(2)])
    base = ["evaluate", "--select-tools", "--out", tmp_path / "s", "--set", "model=m", *OPTIONS]
    code, err = run_cli(capsys, *base, "--data", unlabelled, "--detector", "t2agent")
    assert code == 2 and "test.jsonl: no labelled samples to evaluate" in one_line(err)
    labelled = tmp_path / "dev.jsonl"
    write_jsonl(labelled, [make_sample(n, Label.TRUE) for n in range(2)])
    code, err = run_cli(
        capsys, *base, "--data", labelled, "--detector", "t2agent", "--set", 'tools=["TinEye"]'
    )
    assert code == 2 and "unknown tools ['TinEye']" in one_line(err)
    code, err = run_cli(capsys, *base, "--data", labelled, "--detector", "majority")
    assert code == 2 and "--select-tools: detector 'majority' has no tool set" in one_line(err)


def test_one_t2agent_configuration_on_rw_post_and_mmfakebench_in_one_leaderboard(
    tmp_path, capsys, monkeypatch
):
    """The same T2Agent options scored on the RW-Post sample (its 3-class view, adapted) and on MMFakeBench's
    test files (``--data mmfakebench:FOLDER``, the native real/fake view), then one ``rwpost leaderboard``."""
    from tests.evaluate_helpers import MMFAKEBENCH as MMFB
    from tests.evaluate_helpers import mmfakebench_folder, released_head

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    data, images = released_head(tmp_path, 3)
    mmfb = mmfakebench_folder(tmp_path, MMFB)
    script = Backbone(
        weights=(0.2, 0.1, 0.7), steps={("match", ""): [("Finish", "MISMATCH")]}, sc={"MISMATCH": 9}
    )
    runs, prices = tmp_path / "runs", tmp_path / "prices.yaml"
    prices.write_text("prices:\n  test-model: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n")
    with FakeLLMServer(script) as llm:
        options = ["--detector", "t2agent", "--setting", "T+I", "--set", "model=test-model",
                   "--prices", prices, "--set", f"base_url={llm.base_url}",
                   "--set", f"cache_path={tmp_path / 'llm.sqlite'}",
                   "--bootstrap", "0", "--no-progress", "--no-key-points"]  # fmt: skip
        code, err = run_cli(capsys, "evaluate", "--data", data, "--image-root", images, *options,
                            "--name", "t2agent/rw-post (adapted)", "--out", runs / "rw-post")  # fmt: skip
        assert code == 0, err
        code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{mmfb}", *options,
                            "--set", "view=native", "--name", "t2agent/mmfakebench",
                            "--out", runs / "mmfakebench")  # fmt: skip
        assert code == 0, err
    code, err = run_cli(capsys, "leaderboard", runs, "--out", tmp_path / "board")
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads((tmp_path / "board" / "leaderboard.json").read_text())}
    assert set(rows) == {"t2agent/rw-post (adapted)", "t2agent/mmfakebench"}
    assert rows["t2agent/mmfakebench"]["n"] == 2 and rows["t2agent/rw-post (adapted)"]["n"] == 3
    assert all(r["cost_per_sample_usd"] > 0 and r["tokens_in"] > 0 for r in rows.values())
    board = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "scored on different sample sets" in board
    assert rows["t2agent/mmfakebench"]["data"] == "mmfakebench/test"  # the table says which row is which
    assert (
        rows["t2agent/rw-post (adapted)"]["data"] == "sample.jsonl"
        or rows["t2agent/rw-post (adapted)"]["data"]
    )
    assert "| system | data | setting |" in board and "| mmfakebench/test |" in board
    own = json.loads((runs / "mmfakebench" / "metrics.json").read_text())["benchmark_scores"]
    assert set(own) == {
        "binary",
        "multiclass",
    }  # MMFakeBench's own main_eval_only.py scores, T2Agent's 4 classes
    rw_post = json.loads((runs / "rw-post" / "manifest.json").read_text())
    mmfakebench = json.loads((runs / "mmfakebench" / "manifest.json").read_text())
    assert mmfakebench["data"]["benchmark"] == "mmfakebench" and rw_post["data"].get("benchmark") is None
    assert rw_post["detector_config"]["labels"].startswith("RW-Post 3-class (adapted")
    assert mmfakebench["detector_config"]["labels"].startswith("T2Agent native")
    assert "this view is adapted" in (runs / "rw-post" / "report.md").read_text()
    assert "adapted" not in (runs / "mmfakebench" / "report.md").read_text()
