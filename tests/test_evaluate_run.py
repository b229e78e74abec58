"""One evaluation run (rwpost.evaluate.run): runner, scorer and reports, repeats included."""

from __future__ import annotations

import json

import pytest

from rwpost.cli import main
from rwpost.labels import Label
from tests.evaluate_helpers import SCRIPTED, TRUST_GOLD, make_sample, read_metrics, run_evaluate


@pytest.mark.trust
class TestTrust:
    """Issue 14, numbers you can trust: a regression test for each defect of "Wrong or misleading numbers".

    1 stale results, 2 repeats, 3 failures (coverage, policies, invalid answers), 4 compare, 5 calibration,
    6 BOM / unreadable predictions files / duplicate ids. Every score is checked against a direct
    scikit-learn computation under each failure policy."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]

    def test_repeats_report_mean_and_every_repeat_and_the_leaderboard_ranks_by_the_mean(
        self, tmp_path, samples, data
    ):
        right = {s.id: str(s.label) for s in samples}
        wrong = {s.id: ("True" if s.label is not Label.TRUE else "False") for s in samples}
        lucky = tmp_path / "lucky.json"  # repeat 0 perfect, repeats 1 and 2 all wrong: mean 1/3
        lucky.write_text(json.dumps({"0": right, "1": wrong, "2": wrong}))
        steady = tmp_path / "steady.json"  # always half right
        half = {s.id: (right if i % 2 else wrong)[s.id] for i, s in enumerate(samples)}
        steady.write_text(json.dumps({"0": half}))
        runs = tmp_path / "runs"
        args = ["--detector", SCRIPTED]
        assert (
            run_evaluate(
                data, runs / "lucky", *args, "--set", f"script={lucky}", "--repeats", "3", "--name", "lucky"
            )
            == 0
        )
        assert (
            run_evaluate(data, runs / "steady", *args, "--set", f"script={steady}", "--name", "steady") == 0
        )
        metrics = read_metrics(runs / "lucky")
        assert metrics["accuracy"] == pytest.approx(1 / 3)
        assert metrics["repeats"]["headline"]["accuracy"]["values"] == [1.0, 0.0, 0.0]
        report = (runs / "lucky" / "report.md").read_text()
        assert (
            "mean ± sd over 3 repeats" in report
            and "| accuracy | 0.333 ± 0.577 | 1.000 | 0.000 | 0.000 |" in report
        )

        board = tmp_path / "board"
        assert main(["leaderboard", str(runs), "--out", str(board)]) == 0
        rows = json.loads((board / "leaderboard.json").read_text())
        assert [r["system"] for r in rows] == ["steady", "lucky"]  # ranked by the mean macro F1
        assert rows[1]["repeat_values"]["accuracy"] == [1.0, 0.0, 0.0]
        md = (board / "leaderboard.md").read_text()
        assert "0.333 ± 0.577" in md and "1.000, 0.000, 0.000" in md

        result = tmp_path / "compare.json"
        assert (
            main(
                [
                    "compare",
                    str(runs / "lucky"),
                    str(runs / "steady"),
                    "--bootstrap",
                    "50",
                    "--out",
                    str(result),
                ]
            )
            == 0
        )
        accuracy = json.loads(result.read_text())["views"]["main"]["metrics"]["accuracy"]
        assert accuracy["repeats"]["a"]["values"] == [1.0, 0.0, 0.0]
        assert accuracy["repeats"]["difference"]["mean"] == pytest.approx(1 / 3 - 0.5)
