"""Evaluation draws figures only when asked: a run's report links exactly the figures on disk, the
metrics do not depend on drawing, and the stage and the evaluate command import no plotting library."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.data import load_eval_data
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.stages.evaluate import Params

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"


def _links(report: Path) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report.read_text())


@pytest.fixture(scope="module")
def data():
    return load_eval_data(RELEASED, train_fraction=0.5, seed=0)


def _run(data, out: Path, **kwargs) -> dict:
    spec = RunSpec("category-prior", setting="T", n_resamples=50)
    return evaluate(data.test, spec, out, train=data.train, data_info=data.info, **kwargs).dump()


def test_a_run_draws_no_figure_unless_asked_and_links_only_what_it_drew(data, tmp_path):
    plain = _run(data, tmp_path / "plain")
    assert not (tmp_path / "plain" / "plots").exists()
    assert _links(tmp_path / "plain" / "report.md") == []

    drawn = _run(data, tmp_path / "drawn", plots=True)
    links = _links(tmp_path / "drawn" / "report.md")
    assert "plots/confusion_main.png" in links and "plots/category_f1.png" in links
    assert all((tmp_path / "drawn" / link).stat().st_size > 0 for link in links)
    assert sorted(p.name for p in (tmp_path / "drawn" / "plots").iterdir()) == sorted(
        Path(link).name for link in links
    )
    assert plain == drawn  # drawing changes no score


def test_a_finished_run_resumed_with_plots_draws_them(data, tmp_path):
    first = _run(data, tmp_path / "run")
    assert _run(data, tmp_path / "run", plots=True) == first
    assert _links(tmp_path / "run" / "report.md")
    assert all((tmp_path / "run" / link).exists() for link in _links(tmp_path / "run" / "report.md"))


def test_leaderboard_without_plot_leaves_no_stale_figure(data, tmp_path):
    _run(data, tmp_path / "runs" / "a")
    metrics_path = tmp_path / "runs" / "a" / "metrics.json"
    metrics = json.loads(metrics_path.read_text())  # a run that cost something: the figure is drawn
    metrics["ledger"]["per_sample"]["cost_usd"] = 0.01
    metrics_path.write_text(json.dumps(metrics))
    board = tmp_path / "board"
    write_leaderboard([tmp_path / "runs"], board)
    assert (board / "cost_vs_f1.png").exists()
    write_leaderboard([tmp_path / "runs"], board, plot=False)
    assert not (board / "cost_vs_f1.png").exists() and (board / "leaderboard.md").exists()


def test_command_takes_plots_and_defaults_to_the_stage(tmp_path):
    assert Params.model_fields["plots"].default is False
    common = ["evaluate", "--data", str(RELEASED), "--train-fraction", "0.5", "--detector", "majority"]
    common += ["--setting", "T", "--bootstrap", "20", "--no-progress", "--no-key-points"]
    assert main([*common, "--out", str(tmp_path / "off")]) == 0
    assert main([*common, "--out", str(tmp_path / "on"), "--plots"]) == 0
    assert not (tmp_path / "off" / "plots").exists()
    assert (tmp_path / "on" / "plots" / "confusion_main.png").exists()
    off = json.loads((tmp_path / "off" / "metrics.json").read_text())
    on = json.loads((tmp_path / "on" / "metrics.json").read_text())
    assert off == on


@pytest.mark.parametrize(
    ("module", "heavy"),
    [
        ("rwpost.stages.evaluate", ["matplotlib", "sentence_transformers", "torch"]),
        ("rwpost.commands.evaluate", ["matplotlib", "sentence_transformers", "torch", "sklearn"]),
        ("rwpost.stages.annotate_merge", ["matplotlib", "sentence_transformers", "sklearn", "scipy.stats"]),
    ],
)
def test_heavy_libraries_are_imported_where_used_only(module, heavy):
    code = f"import sys, {module}; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
