"""Comparing runs (rwpost.evaluate.leaderboard): the leaderboard over run folders, the paired test of two
runs."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.io import write_jsonl
from tests.evaluate_helpers import HOSTILE_GOLD, evaluate_quietly, make_sample


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(HOSTILE_GOLD)]

    def test_leaderboard_on_the_console_says_when_runs_were_scored_on_different_samples(
        self, tmp_path, data, samples, capsys
    ):
        """leaderboard.md carried the caveat; the table printed without --out ranked the runs silently."""
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        fewer = tmp_path / "fewer.jsonl"
        write_jsonl(fewer, samples[:4])
        assert evaluate_quietly(data, tmp_path / "runs" / "all", "--predictions", str(preds)) == 0
        assert evaluate_quietly(fewer, tmp_path / "runs" / "fewer", "--predictions", str(preds)) == 0
        assert (
            evaluate_quietly(
                data, tmp_path / "runs" / "exclude", "--predictions", str(preds), "--failures", "exclude"
            )
            == 0
        )
        capsys.readouterr()
        assert main(["leaderboard", str(tmp_path / "runs")]) == 0
        printed = " ".join(capsys.readouterr().err.split())
        assert "scored on different sample sets" in printed
        assert "different failure policies" in printed

        assert main(["leaderboard", str(tmp_path / "runs" / "all")]) == 0
        assert "different" not in capsys.readouterr().err

    def test_two_predictions_files_keep_their_own_names_and_explanations_in_the_leaderboard(
        self, tmp_path, data, samples
    ):
        """Every file's run was called predictions/closed-book: the leaderboard could not tell them apart and
        its merged explanations.jsonl (for the human evaluation) silently kept only the first file's."""
        for system, label in (("agentfact", "False"), ("defame", "True")):
            rows = [{"id": s.id, "label": label, "explanation": f"{system} says {label}"} for s in samples]
            write_jsonl(tmp_path / f"{system}.jsonl", rows)
            assert (
                evaluate_quietly(
                    data, tmp_path / "runs" / system, "--predictions", str(tmp_path / f"{system}.jsonl")
                )
                == 0
            )
        assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(tmp_path / "board")]) == 0
        board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
        assert sorted(r["system"] for r in board) == ["agentfact/T+I", "defame/T+I"]
        merged = [
            json.loads(line) for line in (tmp_path / "board" / "explanations.jsonl").read_text().splitlines()
        ]
        assert len(merged) == len(samples)
        for row in merged:
            explanations = {o["system"]: o["explanation"] for o in row["outputs"] if o["system"] != "gold"}
            assert explanations == {
                "agentfact/T+I": "agentfact says False",
                "defame/T+I": "defame says True",
            }

    def test_runs_with_one_system_name_both_keep_their_explanations(self, tmp_path, data, samples):
        """Two runs given one --name: the second's explanations are kept under the name and its run folder."""
        runs = []
        for system, label in (("a", "False"), ("b", "True")):
            rows = [{"id": s.id, "label": label, "explanation": f"{system} says {label}"} for s in samples]
            write_jsonl(tmp_path / f"{system}.jsonl", rows)
            runs.append(tmp_path / "runs" / system)
            args = ("--predictions", str(tmp_path / f"{system}.jsonl"), "--name", "mine")
            assert evaluate_quietly(data, runs[-1], *args) == 0
        assert main(["leaderboard", *map(str, runs), "--out", str(tmp_path / "board")]) == 0
        merged = [
            json.loads(line) for line in (tmp_path / "board" / "explanations.jsonl").read_text().splitlines()
        ]
        systems = [o["system"] for o in merged[0]["outputs"]]
        assert systems[0] == "gold" and len(systems) == 3
        assert {o["explanation"] for o in merged[0]["outputs"][1:]} == {"a says False", "b says True"}
        assert f"mine ({runs[1]})" in systems

    def test_a_run_at_a_parent_folder_does_not_hide_the_runs_below_it(self, tmp_path, data, samples, capsys):
        """``rwpost leaderboard runs`` stopped at a folder with its own metrics.json: a run written with --out
        at ``runs`` hid every run below it, and the table showed one system."""
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        other = tmp_path / "other.jsonl"
        write_jsonl(other, [{"id": s.id, "label": "True"} for s in samples])
        assert evaluate_quietly(data, tmp_path / "runs", "--predictions", str(other)) == 0
        assert evaluate_quietly(data, tmp_path / "runs" / "system", "--predictions", str(preds)) == 0
        capsys.readouterr()
        assert main(["leaderboard", str(tmp_path / "runs"), "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert len(rows) == 2


def test_runs_of_one_system_name_are_told_apart_and_compare_notes_different_cells(tmp_path, capsys):
    """Two ``category-prior/T`` runs with different options showed as two identical rows; ``compare`` of runs
    from different cells said nothing of it (new-user review, items 22 and 23)."""
    from tests.evaluate_helpers import evidence

    samples = [make_sample(i, g, evidence=evidence(2)) for i, g in enumerate(HOSTILE_GOLD * 2)]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    runs = tmp_path / "runs"
    for name, alpha, cell in (("a", "1", "T"), ("b", "5", "T"), ("c", "1", "T+E")):
        args = ["--detector", "category-prior", "--set", f"alpha={alpha}", "--train-fraction", "0.5"]
        assert evaluate_quietly(data, runs / name, *args, "--setting", cell) == 0
    assert main(["leaderboard", str(runs), "--out", str(tmp_path / "board")]) == 0
    md = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "| category-prior/T (alpha=1.0) |" in md and "| category-prior/T (alpha=5.0) |" in md
    assert "| category-prior/T+E |" in md  # a name no other run has stays as it is
    assert "told apart by the options they differ in" in md
    rows = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert {r.get("distinct") for r in rows} == {"alpha=1.0", "alpha=5.0", None}
    capsys.readouterr()
    assert main(["compare", str(runs / "a"), str(runs / "c"), "--bootstrap", "20"]) == 0
    printed = " ".join(capsys.readouterr().err.split())
    assert "Note: the runs are of different cells (A T, B T+E)" in printed
    assert main(["compare", str(runs / "a"), str(runs / "b"), "--bootstrap", "20"]) == 0
    assert "different cells" not in capsys.readouterr().err
