"""The explanations an evaluation writes, read for human evaluation (annotate/workflow.py)."""

from __future__ import annotations

import json

from tests.conftest import DEV as RELEASED


def test_the_explanations_an_evaluation_writes_are_what_push_explanations_reads(
    tmp_path, capsys, monkeypatch
):
    """``rwpost evaluate`` + ``rwpost leaderboard`` write explanations.jsonl; ``rwpost annotate
    push-explanations`` reads that very file (before: four validation errors on every line)."""
    from rwpost.annotate import workflow
    from rwpost.cli import main

    common = ["--data", str(RELEASED), "--train-fraction", "0.5", "--bootstrap", "0", "--no-progress"]
    for detector in ("majority", "stratified"):
        out = tmp_path / "runs" / detector
        assert main(["evaluate", *common, "--no-key-points", "--detector", detector, "--out", str(out)]) == 0
    assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(tmp_path / "board")]) == 0
    explanations = tmp_path / "board" / "explanations.jsonl"

    # the command reads and validates every line before it needs the server: here it stops at the token
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    capsys.readouterr()
    args = ["annotate", "push-explanations", str(explanations), "--state", str(tmp_path / "state")]
    assert main(args) == 2
    assert "no Label Studio token" in capsys.readouterr().err

    items = workflow.read_explanation_items(explanations)
    assert len(items) == 23
    systems = [o.system for o in items[0].outputs]
    assert systems[0] == "gold" and len(systems) == 3
    tasks, keys = workflow.explanation_tasks(items, files_root=tmp_path / "files", seed=13)
    assert len(tasks) == 23 and all(sorted(key.values()) == sorted(systems) for key in keys.values())
    shown = json.dumps(tasks)
    assert not any(name in shown for name in systems[1:]), "the task names a system: not blind"
    majority = next(o for o in items[0].outputs if o.system.startswith("majority"))
    assert majority.label == "False"
    assert f"<b>Authenticity:</b> {majority.label}</p>" in shown
