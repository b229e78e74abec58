"""The detector papers' main tables as recipes (issue 37 §2): T2Agent's and AgentM3D's Table 1 on
MMFakeBench are 4-class, compared from ``benchmark_scores.multiclass`` of runs on the validation split."""

from __future__ import annotations

import json

import pytest

from rwpost.evaluate.datasets import parse_data_spec
from rwpost.evaluate.detectors.agentm3d.detector import AgentM3DDetector
from rwpost.evaluate.detectors.t2agent.detector import T2AgentDetector
from rwpost.evaluate.recipes import beside_paper, load_recipe
from tests.conftest import run_cli
from tests.evaluate_helpers import MMFAKEBENCH, mmfakebench_folder

SCORING = ["--bootstrap", "0", "--no-progress", "--no-key-points"]


def test_the_t2agent_recipe_runs_the_papers_setting():
    recipe = load_recipe("t2agent-mmfakebench")
    [row] = recipe.rows
    config = T2AgentDetector.Config(**row.config)  # the options are the detector's own
    assert (
        config.tools == ["Wikipedia", "Google", "VQA", "Entity", "Counterfactual"] and config.view == "native"
    )
    assert recipe.cells("mmfakebench") == ["T+I+W"]  # the web cell: Wikipedia and Google are offered
    [figure] = recipe.figures
    assert figure.dataset == "mmfakebench/val" and figure.view == "benchmark_scores.multiclass"
    assert figure.values == {"macro_f1": 0.631, "accuracy": 0.629}
    assert any("port's defaults" in note for note in recipe.notes)
    [row] = load_recipe("agentm3d-mmfakebench").rows
    assert set(row.config) <= set(AgentM3DDetector.Config.model_fields) and row.config["view"] == "native"


def agentm3d_run(tmp_path, capsys, split):
    """An AgentM3D run's answers on MMFakeBench, as its explanations head them, scored by the CLI."""
    root = mmfakebench_folder(tmp_path / split, MMFAKEBENCH, split=split)
    samples = parse_data_spec(f"mmfakebench/{split}:{root}").samples()
    answers = tmp_path / split / "answers.jsonl"
    rows = [("True", "AgentM3D answer: original"), ("False", "AgentM3D answer: textual_veracity_distortion")]
    answers.write_text(
        "".join(
            json.dumps({"id": s.id, "label": label, "explanation": f"{head}\nreasons"}) + "\n"
            for s, (label, head) in zip(samples, rows, strict=True)
        )
    )
    out = tmp_path / split / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench/{split}:{root}", "--predictions", answers,
                        "--name", "agentm3d/qwen3-vl-8b", "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    return out


def test_an_agentm3d_run_reports_the_papers_4_class_table_beside_its_figures(tmp_path, capsys):
    out = agentm3d_run(tmp_path, capsys, "val")
    own = json.loads((out / "metrics.json").read_text())["benchmark_scores"]
    # gold original, mismatch; answered original, textual distortion: 1 of 2 right; original P = R = 1;
    # textual (fp 1) and mismatch (fn 1) 0; MMFakeBench divides the sums by its 4 classes
    assert own["multiclass"] == pytest.approx(
        {"accuracy": 0.5, "precision": 0.25, "recall": 0.25, "f1": 0.25}
    )
    _, records = beside_paper([out], load_recipe("agentm3d-mmfakebench"))
    ours = {r["metric"]: (r["paper"], r["ours"]) for r in records}
    assert ours == {
        "accuracy": (62.0, 50.0), "macro_f1": (62.6, 25.0), "macro_recall": (64.2, 25.0),
        "macro_precision": (62.1, 25.0),
    }  # fmt: skip


def test_the_papers_validation_split_figures_sit_beside_no_test_split_run(tmp_path, capsys):
    out = agentm3d_run(tmp_path, capsys, "test")
    lines, records = beside_paper([out], load_recipe("agentm3d-mmfakebench"))
    assert records == [] and any("No run matches" in line for line in lines)
