"""The evaluation contract (issue 23): a detector written from ``rwpost.evaluate.contract``'s documented
example alone runs through the real runner; cells have one vocabulary (aliases only at parse time, in
the manifest once); a ``--k`` with no gold-evidence cell and a bad detector are one-line errors; the CLI
and the DVC stage plan their runs with one ``plan_runs`` from the stage's defaults."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

import rwpost.evaluate.contract as contract
from rwpost.cli import main
from rwpost.dataset import read_samples
from rwpost.errors import ConfigError
from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.data import split_train_test
from rwpost.evaluate.plan import DetectorEntry, plan_runs
from rwpost.evaluate.registry import make_detector
from rwpost.evaluate.runner import run
from rwpost.evaluate.task import Cell, EvalTask
from rwpost.labels import Label
from rwpost.stages.evaluate import Params

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
COMMON = ["--bootstrap", "0", "--no-progress", "--no-key-points"]


def documented_example(after: str = "through the real runner::\n") -> str:
    """The code block of ``rwpost.evaluate.contract``'s docstring that follows ``after``, dedented."""
    block = contract.__doc__.split(after, 1)[1]
    lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines)).strip() + "\n"


@pytest.fixture
def example_module(monkeypatch):
    """The documented example as an importable module (``example_detector:KeywordVote``)."""
    module = types.ModuleType("example_detector")
    exec(compile(documented_example(), "example_detector.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "example_detector", module)
    return module


def test_the_documented_detector_is_complete_in_under_60_lines_and_runs_through_the_runner(
    tmp_path, example_module
):
    assert len(documented_example().splitlines()) < 60
    samples = read_samples(RELEASED)
    train, test, _ = split_train_test(samples, 0.5, seed=0)
    spec = RunSpec("example_detector:KeywordVote", config={"min_count": 2}, setting="T", n_resamples=0)
    metrics = evaluate(test, spec, tmp_path / "run", train=train, encode=None).dump()
    assert metrics["coverage"]["answered"] == metrics["coverage"]["total"] == len(test)
    assert metrics["system"] == "example_detector:KeywordVote/T"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["detector_config"] == {"min_count": 2} and manifest["setting"] == "T"
    # the run resumes: nothing is asked again, nothing is trained again
    again = evaluate(test, spec, tmp_path / "run", train=train, encode=None).dump()
    assert again["accuracy"] == metrics["accuracy"]
    with pytest.raises(ConfigError, match=r"bad configuration \(min_count: .*options given: min_count"):
        make_detector("example_detector:KeywordVote", {"min_count": "many"})


def test_a_class_that_is_not_a_detector_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="must subclass rwpost.evaluate.contract.Detector"):
        make_detector("rwpost.evaluate.task:EvalTask")


def test_an_alias_is_read_as_its_cell_and_shown_only_by_the_canonical_name(tmp_path):
    assert Cell.parse("closed-book") == Cell.parse("T+I") and Cell.parse("closed-book").alias == "closed-book"
    assert [Cell.parse(x).name for x in ("gold-evidence", "open-web")] == ["T+I+E", "T+I+W"]
    out = tmp_path / "runs"
    args = ["evaluate", "--data", str(RELEASED), "--detector", "majority", "--train-fraction", "0.5"]
    assert main([*args, "--setting", "closed-book", "--setting", "T", "--out", str(out), *COMMON]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard", "majority-T", "majority-TI"]
    manifest = json.loads((out / "majority-TI" / "manifest.json").read_text())
    assert (manifest["setting"], manifest["setting_alias"]) == ("T+I", "closed-book")
    assert json.loads((out / "majority-T" / "manifest.json").read_text())["setting_alias"] is None
    board = json.loads((out / "leaderboard" / "leaderboard.json").read_text())
    assert {r["setting"] for r in board} == {"T", "T+I"}
    assert "closed-book" not in (out / "majority-TI" / "report.md").read_text()


def test_a_k_without_a_gold_evidence_cell_is_one_line_error(tmp_path, capsys):
    args = ["evaluate", "--data", str(RELEASED), "--detector", "majority", "--train-fraction", "0.5"]
    assert main([*args, "--setting", "T+I", "--k", "3", "--out", str(tmp_path / "r"), *COMMON]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert re.search(r"k 3 needs a gold-evidence cell .*T\+I", line), line
    assert not (tmp_path / "r").exists()
    with pytest.raises(ConfigError, match="evidence-k"):
        Cell.parse("T k=3")


def test_the_cli_and_the_stage_plan_alike_from_the_stage_defaults(tmp_path):
    defaults = Params.model_validate({"dataset": {"version": "v1"}})
    entries = [DetectorEntry(name="majority"), DetectorEntry(name="stratified", settings=["T+E"], k=[1])]
    plan = plan_runs(entries, defaults.settings, defaults.k, out=tmp_path, seed=defaults.seed)
    assert [(p.spec.system, p.out.name) for p in plan] == [
        ("majority/T+I", "majority-TI"),
        ("stratified/T+E", "stratified-TE"),
        ("stratified/T+E k=1", "stratified-TE_k1"),
    ]
    # the command line, given no cell, runs the stage's default cell into the same folder name
    out = tmp_path / "cli"
    args = ["evaluate", "--data", str(RELEASED), "--detector", "majority", "--detector", "stratified"]
    assert main([*args, "--train-fraction", "0.5", "--out", str(out), *COMMON]) == 0
    assert {p.name for p in out.iterdir()} == {"leaderboard", "majority-TI", "stratified-TI"}


def test_the_task_carries_the_label_space_and_blinds_with_its_evidence_seed():
    samples = read_samples(RELEASED)
    task = EvalTask.of("T+E k=1", samples, evidence_seed=7)
    assert task.label_names == ["True", "False", "Unproven"]
    with_evidence = next(s for s in samples if len(s.evidence) > 1)
    [kept] = task.blind(with_evidence).evidence
    assert kept.url is None and kept.source is None and task.blind(with_evidence).label is None


def test_run_tools_come_from_the_detectors_search_settings_behind_the_runs_guard(tmp_path: Path) -> None:
    """``ctx.tools`` builds each tool from the typed settings, behind the context's one guard; a context made
    without them, or settings naming no backend, is refused in one line."""
    from pydantic import BaseModel

    from rwpost.evaluate.leakage import BlockList
    from rwpost.evaluate.toolkit.tools import SearchTool, WikipediaTool, run_context

    class Config(BaseModel):
        search: str = "wikipedia"
        wikipedia: str = "wikipedia"
        image_search: str | None = None
        results_per_query: int = 3

    ctx = run_context(Config(), guard=contract.LeakageGuard(BlockList(["snopes.com"])))
    google, wiki = ctx.tools.search(), ctx.tools.wikipedia()
    assert type(google) is SearchTool and type(wiki) is WikipediaTool
    assert google.guard is wiki.guard is ctx.guard and (google.limit, wiki.limit) == (3, 3)
    assert (google.card.name, wiki.card.name) == ("Google", "Wikipedia")
    with pytest.raises(ConfigError, match="option 'image_search': no search backend given"):
        ctx.tools.reverse_image()
    with pytest.raises(ConfigError, match="has no search tools: build it with .*run_context"):
        contract.RunContext().tools.search()


class Fixed(contract.Detector):
    """A detector whose labels are declared on the class: it answers ``self.answer`` for every sample."""

    name = "fixed"
    labels = (Label.TRUE, Label.FALSE, Label.UNPROVEN)
    labels_hint = "evaluate it on the main set"
    answer = Label.TRUE

    def predict(self, samples, task, ctx):
        return [
            contract.Prediction(id=s.id, label=self.answer, probabilities={self.answer: 1.0}) for s in samples
        ]


def _labelled(labels) -> list:
    from tests.evaluate_helpers import make_sample

    return [make_sample(i, label) for i, label in enumerate(labels)]


def test_a_task_outside_the_declared_labels_is_refused_before_anything_is_written(tmp_path):
    samples = _labelled([Label.MIXTURE, Label.OUTDATED, Label.MIXTURE])
    spec = RunSpec("fixed", setting="T", n_resamples=0)
    with pytest.raises(ConfigError, match=r"^the fixed detector answers True, False, Unproven, not Mixture, "
                       r"Outdated: evaluate it on the main set$"):  # fmt: skip
        run(samples, spec, tmp_path / "run", make=lambda name, options: Fixed.build(options))
    assert not (tmp_path / "run").exists()


def test_an_answer_outside_the_declared_labels_fails_its_sample_naming_it(tmp_path):
    class Stray(Fixed):
        answer = Label.MIXTURE

    samples = _labelled([Label.TRUE, Label.FALSE, Label.UNPROVEN])
    spec = RunSpec("stray", setting="T", n_resamples=0)
    [predictions] = run(
        samples, spec, tmp_path / "run", make=lambda name, options: Stray.build(options)
    ).predictions
    assert all(p.label is None and p.probabilities is None for p in predictions)
    assert (
        predictions[0].error
        == "detector 'fixed' answered Mixture, outside the labels it declares (True, False, Unproven)"
    )
    answered = run(
        samples, spec, tmp_path / "ok", make=lambda name, options: Fixed.build(options)
    ).predictions
    assert [p.label for p in answered[0]] == [Label.TRUE] * 3
