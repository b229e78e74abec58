"""The evaluation commands against hostile and careless input: every case here was a defect found by trying
them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real CLI
on real files."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import make_sample

GOLD = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE, Label.FALSE]
QUIET = ["--no-progress", "--no-key-points", "--bootstrap", "20"]


@pytest.fixture
def samples():
    return [make_sample(i, g) for i, g in enumerate(GOLD)]


@pytest.fixture
def data(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, samples)
    return path


def _evaluate(data, out, *args: str) -> int:
    return main(["evaluate", "--data", str(data), "--out", str(out), *QUIET, *args])


def test_probabilities_given_as_a_list_are_a_bad_row_naming_the_line_not_an_internal_error(
    tmp_path, data, samples, capsys
):
    rows = [{"id": s.id, "label": "False"} for s in samples]
    rows[2]["probabilities"] = [0.2, 0.8]  # a list, not label -> probability
    rows[3]["probabilities"] = "{not json"  # a JSON string that is not JSON
    rows[4]["evidence_urls"] = "[not json"
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, rows)

    assert _evaluate(data, tmp_path / "run", "--predictions", str(preds)) == 0
    report = json.loads((tmp_path / "run" / "input_report.json").read_text())
    reasons = {bad["line"]: bad["reason"] for bad in report["bad_rows"]}
    assert set(reasons) == {3, 4, 5}
    assert reasons[3].startswith(f"{preds}:3: ") and "probabilities" in reasons[3]
    assert reasons[4].startswith(f"{preds}:4: ") and "probabilities" in reasons[4]
    assert reasons[5].startswith(f"{preds}:5: ") and "evidence_urls" in reasons[5]
    # the three samples are scored as unanswered, never dropped
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["coverage"]["answered"] == 3

    capsys.readouterr()
    assert _evaluate(data, tmp_path / "strict", "--predictions", str(preds), "--strict") == 1
    assert "internal error" not in capsys.readouterr().err


@pytest.mark.parametrize("n", [0, 1])
def test_train_fraction_of_too_few_samples_is_one_line(tmp_path, n, capsys):
    data = tmp_path / "few.jsonl"
    write_jsonl(data, [make_sample(i, Label.FALSE) for i in range(n)])
    code = _evaluate(data, tmp_path / "run", "--detector", "majority", "--train-fraction", "0.5")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err
    assert "--train-fraction" in err and str(data) in err
    assert not (tmp_path / "run").exists()


def test_a_predictions_file_inside_out_named_like_the_run_log_is_never_deleted(
    tmp_path, data, samples, capsys
):
    """A system's output called predictions.jsonl, scored with --out its own folder: the run's log has the
    same name; --overwrite used to delete the input and write the log over it."""
    folder = tmp_path / "system"
    folder.mkdir()
    preds = folder / "predictions.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    before = preds.read_bytes()
    for extra in ([], ["--overwrite"]):
        capsys.readouterr()
        assert _evaluate(data, folder, "--predictions", str(preds), *extra) == 2
        err = capsys.readouterr().err
        assert f"{preds}: is also an input" in err
        assert preds.read_bytes() == before
        assert sorted(p.name for p in folder.iterdir()) == ["predictions.jsonl"]


def test_data_inside_out_named_like_a_run_file_is_never_replaced(tmp_path, samples, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    data = folder / "scored.jsonl"
    write_jsonl(data, samples)
    before = data.read_bytes()
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    assert _evaluate(data, folder, "--predictions", str(preds), "--overwrite") == 2
    assert f"{data}: is also an input" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_leaderboard_on_the_console_says_when_runs_were_scored_on_different_samples(
    tmp_path, data, samples, capsys
):
    """leaderboard.md carried the caveat; the table printed without --out ranked the runs silently."""
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    fewer = tmp_path / "fewer.jsonl"
    write_jsonl(fewer, samples[:4])
    assert _evaluate(data, tmp_path / "runs" / "all", "--predictions", str(preds)) == 0
    assert _evaluate(fewer, tmp_path / "runs" / "fewer", "--predictions", str(preds)) == 0
    assert (
        _evaluate(data, tmp_path / "runs" / "exclude", "--predictions", str(preds), "--failures", "exclude")
        == 0
    )
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "runs")]) == 0
    printed = " ".join(capsys.readouterr().err.split())
    assert "scored on different sample sets" in printed
    assert "different failure policies" in printed

    assert main(["leaderboard", str(tmp_path / "runs" / "all")]) == 0
    assert "different" not in capsys.readouterr().err


def test_a_json_price_table_indented_with_tabs_is_read(tmp_path, data, samples):
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}, indent="\t")
    )
    assert _evaluate(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices)) == 0


def test_a_broken_json_price_file_names_the_file_and_line(tmp_path, data, samples, capsys):
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    prices = tmp_path / "prices.json"
    prices.write_text('{"gpt-4o-mini":\n\t{"input_per_mtok": 0.15,}}\n')
    assert _evaluate(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{prices}: not a readable YAML or JSON price table" in err and "at line 2" in err


def test_a_run_inside_the_predictions_folder_it_reads_is_refused(tmp_path, data, samples, capsys):
    """An AgentFact output folder scored with --out below it: the run's own files joined the folder's
    checksum, so the same command run again was refused as 'the predictions file changed'."""
    root = tmp_path / "output"
    record = {
        "final_answer": {"updated_answer": {"validation_result": {"3-class_authenticity_label": "false"}}}
    }
    rows = [{"claim_id": s.id, "post_info": {"news_url": s.news_url}, **record} for s in samples]
    write_jsonl(root / "rwpost" / "test" / "full" / "0" / "gpt-4o" / "output.jsonl", rows)
    for _ in range(2):
        capsys.readouterr()
        assert _evaluate(data, root / "scores", "--predictions", str(root)) == 2
        assert "inside the input folder" in capsys.readouterr().err
    assert not (root / "scores").exists()
    assert _evaluate(data, tmp_path / "scores", "--predictions", str(root)) == 0


def test_two_predictions_files_keep_their_own_names_and_explanations_in_the_leaderboard(
    tmp_path, data, samples
):
    """Every file's run was called predictions/closed-book: the leaderboard could not tell them apart and
    its merged explanations.jsonl (for the human evaluation) silently kept only the first file's."""
    for system, label in (("agentfact", "False"), ("defame", "True")):
        rows = [{"id": s.id, "label": label, "explanation": f"{system} says {label}"} for s in samples]
        write_jsonl(tmp_path / f"{system}.jsonl", rows)
        assert (
            _evaluate(data, tmp_path / "runs" / system, "--predictions", str(tmp_path / f"{system}.jsonl"))
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


def test_runs_with_one_system_name_both_keep_their_explanations(tmp_path, data, samples):
    """Two runs given one --name: the second's explanations are kept under the name and its run folder."""
    runs = []
    for system, label in (("a", "False"), ("b", "True")):
        rows = [{"id": s.id, "label": label, "explanation": f"{system} says {label}"} for s in samples]
        write_jsonl(tmp_path / f"{system}.jsonl", rows)
        runs.append(tmp_path / "runs" / system)
        args = ("--predictions", str(tmp_path / f"{system}.jsonl"), "--name", "mine")
        assert _evaluate(data, runs[-1], *args) == 0
    assert main(["leaderboard", *map(str, runs), "--out", str(tmp_path / "board")]) == 0
    merged = [
        json.loads(line) for line in (tmp_path / "board" / "explanations.jsonl").read_text().splitlines()
    ]
    systems = [o["system"] for o in merged[0]["outputs"]]
    assert systems[0] == "gold" and len(systems) == 3
    assert {o["explanation"] for o in merged[0]["outputs"][1:]} == {"a says False", "b says True"}
    assert f"mine ({runs[1]})" in systems


def test_a_run_at_a_parent_folder_does_not_hide_the_runs_below_it(tmp_path, data, samples, capsys):
    """``rwpost leaderboard runs`` stopped at a folder with its own metrics.json: a run written with --out
    at ``runs`` hid every run below it, and the table showed one system."""
    preds = tmp_path / "system.jsonl"
    write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
    other = tmp_path / "other.jsonl"
    write_jsonl(other, [{"id": s.id, "label": "True"} for s in samples])
    assert _evaluate(data, tmp_path / "runs", "--predictions", str(other)) == 0
    assert _evaluate(data, tmp_path / "runs" / "system", "--predictions", str(preds)) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "runs"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2
