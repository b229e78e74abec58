"""The evaluate commands (rwpost.commands.evaluate): options and files checked before a run starts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rwpost.io import write_jsonl
from tests.conftest import DEV, ROOT, one_line, run_cli
from tests.evaluate_helpers import HOSTILE_GOLD, evaluate_quietly, make_sample


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(HOSTILE_GOLD)]

    def test_a_json_price_table_indented_with_tabs_is_read(self, tmp_path, data, samples):
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        prices = tmp_path / "prices.json"
        prices.write_text(
            json.dumps({"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}, indent="\t")
        )
        assert (
            evaluate_quietly(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices))
            == 0
        )

    def test_a_broken_json_price_file_names_the_file_and_line(self, tmp_path, data, samples, capsys):
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        prices = tmp_path / "prices.json"
        prices.write_text('{"gpt-4o-mini":\n\t{"input_per_mtok": 0.15,}}\n')
        assert (
            evaluate_quietly(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices))
            == 2
        )
        err = " ".join(capsys.readouterr().err.split())
        assert f"{prices}: not a readable YAML or JSON price table" in err and "at line 2" in err


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ('{"gpt-4o": 5}', "not a price table at gpt-4o: Input should be a valid dictionary"),
            ('{"gpt-4o": {"input_per_mtok": "cheap"}}', "not a price table at gpt-4o.input_per_mtok"),
            ('{"gpt-4o": {"input_per_mtok": -1}}', "greater than or equal to 0"),
            ('{"gpt-4o": {"input_per_token": 1}}', "at gpt-4o.input_per_token"),
            ("a: [1,\n", "not a readable YAML or JSON price table"),
        ],
    )
    def test_a_bad_price_table_is_refused_before_the_run(self, tmp_path, capsys, text, problem):
        """A price table is checked before anything runs (a run would only find it unusable when pricing
        calls it had already paid for): one line naming the file, the entry and the problem, exit 2."""
        prices = tmp_path / "prices.json"
        prices.write_text(text, encoding="utf-8")
        out = tmp_path / "runs"
        code, err = run_cli(capsys, "evaluate", "--data", DEV, "--detector", "majority", "--train-fraction",
                            "0.5", "--out", out, "--prices", prices)  # fmt: skip
        line = one_line(err)
        assert code == 2 and line.startswith(f"error: {prices}: ") and problem in line, line
        assert not out.exists()


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_compare_and_leaderboard_never_write_over_a_runs_files(self, tmp_path, capsys):
        """``compare --out`` once replaced a run's metrics.json and ``leaderboard --out RUN`` its
        explanations.jsonl; both are now refused, and an earlier comparison or leaderboard is replaced only
        with --overwrite."""
        v = Path("data/sample/released/rwpost_dev_main.head.jsonl")
        run_dir = tmp_path / "runs"
        assert run_cli(capsys, "evaluate", "--data", v, "--detector", "majority", "--train-fraction", "0.5",
                   "--out", run_dir)[0] == 0  # fmt: skip
        runs = sorted(p.parent for p in run_dir.rglob("metrics.json"))
        assert runs
        one = runs[0]
        before = {p.name: p.read_bytes() for p in one.iterdir() if p.is_file()}
        code, err = run_cli(capsys, "compare", one, one, "--out", one / "metrics.json")
        assert code == 2 and "is also an input of this command" in err
        code, err = run_cli(capsys, "leaderboard", one, "--out", one)
        assert code == 2 and "explanations.jsonl: is also an input of this command" in err
        assert {p.name: p.read_bytes() for p in one.iterdir() if p.is_file()} == before
        assert run_cli(capsys, "compare", one, one, "--out", tmp_path / "c.json")[0] == 0
        code, err = run_cli(capsys, "compare", one, one, "--out", tmp_path / "c.json")
        assert code == 2 and "already exists" in err
        assert run_cli(capsys, "compare", one, one, "--out", tmp_path / "c.json", "--overwrite")[0] == 0
        assert run_cli(capsys, "leaderboard", one, "--out", tmp_path / "lb")[0] == 0
        code, err = run_cli(capsys, "leaderboard", one, "--out", tmp_path / "lb")
        assert code == 2 and "leaderboard.json: already exists" in err
        assert run_cli(capsys, "leaderboard", one, "--out", tmp_path / "lb", "--overwrite")[0] == 0


def test_evaluate_with_the_vlm_detector_and_no_endpoint_fails_fast(tmp_path, monkeypatch):
    from rwpost.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
    started = time.monotonic()
    code = main(["evaluate", "--data", str(data), "--detector", "vlm", "--out", str(tmp_path / "ev")])
    assert code == 2 and time.monotonic() - started < 30
