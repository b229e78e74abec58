"""Recipes (rwpost.evaluate.recipes): the paper's Tables III and V as runs, with the paper's figures beside
ours; run against the loopback LLM and search servers on the bundled sample and each adapter's files."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.evaluate.recipes import load_recipe, recipe_names
from rwpost.testing.llm import FakeLLMServer
from rwpost.testing.search import SearchServer
from tests.benchmark_folders import (
    CLAIMREVIEW,
    MOCHEG,
    NEWSCLIPPINGS,
    claimreview_folder,
    mocheg_folder,
    newsclippings_folder,
)
from tests.evaluate_helpers import Agents, news, released_head


def loopback_args(llm, search, tmp_path) -> list[str]:
    """Options substituting the recipe's model, search and reverse-image search by loopback servers."""
    base = json.dumps({"base_url": search.base_url})
    return [
        "--model", "test-model", "--set", "search=loopback", "--set", f"search_options={base}",
        "--set", "image_search=loopback-image", "--set", f"image_search_options={base}",
        "--set", f"cache_path={tmp_path / 'llm.sqlite'}",
        "--bootstrap", "20", "--no-progress", "--no-key-points",
    ]  # fmt: skip


def run_recipe(name, data, tmp_path, monkeypatch, *extra) -> tuple[int, list, str]:
    out = tmp_path / "out"
    with FakeLLMServer(Agents()) as llm, SearchServer(news) as search:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-recipe")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["evaluate", "--recipe", name, "--data", str(data), "--out", str(out)]
        code = main([*args, *extra, *loopback_args(llm, search, tmp_path)])
    board = out / "leaderboard"
    records = json.loads((board / "paper.json").read_text()) if (board / "paper.json").exists() else []
    markdown = (board / "leaderboard.md").read_text() if (board / "leaderboard.md").exists() else ""
    return code, records, markdown


def test_the_shipped_recipes_hold_the_papers_tables_as_printed():
    assert recipe_names() == ["agentm3d-mmfakebench", "rwpost-table3", "rwpost-table5", "t2agent-mmfakebench"]
    table3, table5 = load_recipe("rwpost-table3"), load_recipe("rwpost-table5")
    assert table3.failures == table5.failures == "class"
    assert "P 87.3, Acc 14.5" in table3.failures_reason
    assert table3.metrics == ["weighted_f1", "accuracy", "weighted_recall", "weighted_precision"]
    assert table5.metrics == ["weighted_f1", "macro_f1", "accuracy", "weighted_precision", "weighted_recall"]
    figures = {(f.dataset, f.system): f for f in table3.figures}
    assert len(figures) == 14
    assert figures["claimreview", "LEMMA"].values == {
        "weighted_f1": 16.5, "accuracy": 14.5, "weighted_recall": 14.5, "weighted_precision": 87.3
    }  # fmt: skip
    assert figures["rwpost", "AgentFact"].values["weighted_f1"] == 65.5
    assert (
        figures["newsclippings", "AgentFact"].view == "binary" and figures["mocheg", "DEFAME"].view == "main"
    )
    assert table3.cells("mocheg") == ["T+W"] and table3.cells("rwpost") == ["T+I+W"]
    full = {f.system: f.values for f in table5.figures}["Full System"]
    assert (full["weighted_f1"], full["macro_f1"], full["accuracy"]) == (0.629, 0.489, 0.570)
    # every row's options are the detector's own (Table V's ablations among them)
    from rwpost.evaluate.detectors.agentfact.detector import AgentFactDetector

    ablations = [AgentFactDetector.Config(**r.config).ablate for r in table5.rows]
    assert ablations == [(), ("sp",), ("ir",), ("tr",), ("rt",)]
    assert {r.paper for r in table5.rows} == {f.system for f in table5.figures}


def test_table3_on_the_bundled_sample_prints_the_papers_figures_beside_ours(tmp_path, monkeypatch, capsys):
    data, images = released_head(tmp_path, n=3)
    code, records, markdown = run_recipe(
        "rwpost-table3", data, tmp_path, monkeypatch, "--image-root", str(images)
    )
    assert code == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["failures"] == "class"
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["setting"] == "T+I+W" and metrics["system"] == "AgentFact/T+I+W"
    ours = {r["metric"]: r for r in records if r["system"] == "AgentFact"}
    assert list(ours) == ["weighted_f1", "accuracy", "weighted_recall", "weighted_precision"]
    f1 = ours["weighted_f1"]
    assert f1["paper"] == 65.5 and f1["where"] == "Table III, RW-Post / AgentFact"
    assert f1["ours"] == pytest.approx(100 * metrics["views"]["main"]["weighted_f1"])
    assert f1["difference"] == pytest.approx(f1["ours"] - 65.5)
    assert f1["ci95"][0] <= f1["ours"] <= f1["ci95"][1]
    # the rows the toolkit cannot run keep the paper's figures, marked as not run; other datasets' not shown
    lemma = [r for r in records if r["system"] == "LEMMA"]
    assert [r["paper"] for r in lemma] == [45.6, 42.1, 42.1, 78.4] and lemma[0]["ours"] is None
    assert {r["dataset"] for r in records} == {"rwpost"}
    assert "## Beside the paper: Table III" in markdown
    assert f"| AgentFact | rwpost | T+I+W | weighted F1 | 65.5 | {f1['ours']:.1f} [" in markdown
    assert "| LEMMA | rwpost | - | weighted precision | 78.4 | not run here |" in markdown
    assert "failed answers kept as a predicted class" in markdown
    # every substituted component is named beside the paper's figure, from the run's manifest
    *options, server = f1["substitutions"]
    assert options == [
        "model: test-model (recipe: gpt-4o-mini)",
        "search: loopback (recipe: serper)",
        "image_search: loopback-image (recipe: google-vision)",
    ]
    assert server.startswith("base_url: 127.0.0.1:") and server.endswith(" (recipe: the provider's API)")
    assert f1["reproduction"] is False and lemma[0]["substitutions"] is None
    assert "; ".join(f1["substitutions"]) + " | Table III, RW-Post / AgentFact |" in markdown
    assert "a smoke test of the toolkit, not a reproduction" in markdown
    assert "## Beside the paper: Table III" in capsys.readouterr().err  # printed after the run too
    # and by the leaderboard command, over the same runs
    assert main(["leaderboard", str(tmp_path / "out"), "--recipe", "rwpost-table3"]) == 0
    assert "| AgentFact | rwpost | T+I+W | weighted F1 | 65.5 |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("dataset", "build", "records", "cell", "view_n"),
    [
        ("newsclippings", newsclippings_folder, NEWSCLIPPINGS, "T+I+W", ("binary", 2)),
        ("mocheg", mocheg_folder, MOCHEG, "T+W", ("main", 3)),
        ("claimreview", claimreview_folder, CLAIMREVIEW, "T+I+W", ("main", 3)),
    ],
)
def test_table3_on_each_adapters_files_compares_with_that_datasets_rows(
    tmp_path, monkeypatch, dataset, build, records, cell, view_n
):
    root = build(tmp_path, records)
    code, figures, markdown = run_recipe("rwpost-table3", f"{dataset}:{root}", tmp_path, monkeypatch)
    assert code == 0
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["setting"] == cell
    view, n = view_n
    assert metrics["views"][view]["n"] == n
    assert {r["dataset"] for r in figures} == {dataset}
    ours = [r for r in figures if r["system"] == "AgentFact"]
    assert ours and all(r["ours"] is not None and r["setting"] == cell for r in ours)
    assert f"| AgentFact | {dataset} | {cell} | accuracy |" in markdown


def test_table5_runs_each_ablation_beside_its_row(tmp_path, monkeypatch):
    data, images = released_head(tmp_path, n=2)
    code, records, markdown = run_recipe(
        "rwpost-table5", data, tmp_path, monkeypatch, "--image-root", str(images)
    )
    assert code == 0
    rows = {r["system"] for r in records if r["ours"] is not None}
    assert rows == {"Full System", "w/o Agent-SP", "w/o Agent-IR", "w/o Agent-TR", "w/o Agent-R-T"}
    # each run's report names its ablation (Table V's row)
    assert "Table V ablation: w/o Agent-TR" in (tmp_path / "out" / "wo-tr-TIW" / "report.md").read_text()
    assert "| Full System | rwpost | T+I+W | macro F1 | 0.489 |" in markdown


def test_the_stage_takes_a_recipe_from_params(tmp_path):
    from rwpost.evaluate.shards import EvaluateSettings

    settings = EvaluateSettings(recipe={"name": "rwpost-table5", "set": {"model": "my-model"}})
    assert [d.label for d in settings.detectors] == ["full", "wo-sp", "wo-ir", "wo-tr", "wo-rt"]
    assert {d.config["model"] for d in settings.detectors} == {"my-model"}
    assert settings.detectors[1].config["ablate"] == "sp"
    assert (settings.settings, settings.k, settings.failures) == (["T+I+W"], [], "class")
    assert EvaluateSettings(recipe="rwpost-table3", failures="wrong").failures == "class"


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (
            ["--recipe", "rwpost-table9"],
            "--recipe rwpost-table9: no such recipe or file (shipped: agentm3d-mmfakebench, rwpost-table3",
        ),
        (["--recipe", "rwpost-table3", "--detector", "majority"], "--recipe names its detectors"),
    ],
)
def test_a_bad_recipe_is_one_line(tmp_path, capsys, extra, problem):
    data, _ = released_head(tmp_path, n=2)
    code = main(["evaluate", "--data", str(data), *extra, "--out", str(tmp_path / "o")])
    assert code == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert problem in line


def test_a_recipe_file_with_a_bad_field_is_one_line(tmp_path):
    from rwpost.errors import ConfigError

    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ntitle: t\nsource: s\nfailures: sometimes\n")
    with pytest.raises(ConfigError) as caught:
        load_recipe(path)
    assert str(caught.value).startswith(f"{path}: failures:")


def test_a_cell_given_on_the_command_line_replaces_the_recipes(tmp_path, monkeypatch):
    data, _ = released_head(tmp_path, n=2)  # no --image-root: the bundled sample has no images
    code, records, markdown = run_recipe("rwpost-table3", data, tmp_path, monkeypatch, "--setting", "T+W")
    assert code == 0
    ours = [r for r in records if r["system"] == "AgentFact"]
    assert {r["setting"] for r in ours} == {"T+W"} and all(r["ours"] is not None for r in ours)
    assert "| AgentFact | rwpost | T+W | accuracy | 57.8 |" in markdown


def test_a_run_with_the_recipes_own_components_is_marked_a_reproduction():
    from rwpost.evaluate.log import RunManifest
    from rwpost.evaluate.recipes import substitutions

    row = load_recipe("rwpost-table5").rows[1]  # w/o Agent-SP: ablate sp, resolved as a list of one
    ran = {"model": "gpt-4o-mini", "search": "serper", "image_search": "google-vision", "ablate": ["sp"]}
    assert substitutions(row, RunManifest.model_construct(detector_config={**ran, "base_url": None})) == []
    repeated = [{**ran, "base_url": "https://user:pw@llm.example:8443/v1"}] * 2  # one config per repeat
    assert substitutions(row, RunManifest.model_construct(detector_config=repeated)) == [
        "base_url: llm.example:8443 (recipe: the provider's API)"
    ]
    assert substitutions(row, None) is None  # no manifest: not known, never guessed
