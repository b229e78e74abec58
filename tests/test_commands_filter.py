"""The filter commands (rwpost.commands.filter): run, funnel."""

from __future__ import annotations

import json

import pytest

from rwpost.io import write_jsonl
from tests.conftest import crawl_store, one_line, run_cli


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_corrupt_funnel_json_is_one_line(self, tmp_path, capsys):
        path = tmp_path / "funnel.json"
        path.write_text("[{not json", encoding="utf-8")
        code, err = run_cli(capsys, "filter", "funnel", path)
        assert code == 1
        assert f"{path}:1: not valid JSON" in one_line(err)

    def test_bad_params_yaml_is_one_line(self, tmp_path, capsys):
        params = tmp_path / "params.yaml"
        params.write_text("filter: [unclosed\n  - x: {\n", encoding="utf-8")
        code, err = run_cli(capsys, "filter", "run", "--params", params, "--out", tmp_path / "f")
        assert code == 2
        assert f"{params}: not valid YAML" in one_line(err)


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_filter_run_refuses_an_output_that_is_an_input(self, tmp_path, capsys):
        tagged = tmp_path / "decisions.jsonl"  # named like an output, given as the tagged input
        write_jsonl(tagged, [])
        before = tagged.read_bytes()
        code, err = run_cli(capsys, "filter", "run", "--tagged", tagged, "--out", tmp_path)
        assert code == 2 and "is also an input" in err
        assert tagged.read_bytes() == before

    def test_filter_run_reruns_on_its_own_inputs_but_keeps_another_runs_outputs(self, tmp_path, capsys):
        """The documented rerun (same input files, e.g. new thresholds) replaces the folder's outputs; a run
        on other input files into that folder is refused (exit 2, outputs untouched) unless --overwrite."""
        store = crawl_store(tmp_path / "crawl")
        assert run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "tagged")[0] == 0
        tagged = tmp_path / "tagged" / "articles.jsonl"
        extracted = tmp_path / "extract"
        assert run_cli(capsys, "extract", "--in", tagged, "--out", extracted, "--backend", "offline")[0] == 0
        common = ["--extractions", extracted / "extractions.jsonl", "--crawl", store / "articles.jsonl"]
        out = tmp_path / "filter"
        assert run_cli(capsys, "filter", "run", "--tagged", tagged, *common, "--out", out)[0] == 0
        assert run_cli(capsys, "filter", "run", "--tagged", tagged, *common, "--out", out)[0] == 0  # rerun
        before = {p.name: p.read_bytes() for p in out.glob("*.json*")}
        other = tmp_path / "other.jsonl"
        other.write_text(tagged.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
        code, err = run_cli(capsys, "filter", "run", "--tagged", other, *common, "--out", out)
        assert code == 2 and "holds the outputs of a run on other inputs (tagged differ)" in err
        assert {p.name: p.read_bytes() for p in out.glob("*.json*")} == before
        assert (
            run_cli(capsys, "filter", "run", "--tagged", other, *common, "--out", out, "--overwrite")[0] == 0
        )
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary["input"] == 1 and json.loads(before["summary.json"])["input"] == 2


def test_the_funnel_table_fills_its_measured_and_cached_columns_from_the_last_run(tmp_path, capsys):
    # issue 39 §3 (round-3 leftover): the funnel's measured and cached columns were always empty
    from tests.conftest import run_cli_out

    steps = [
        {
            "step": "filter: size",
            "in": 105,
            "removed": 47,
            "out": 58,
            "reasons": {"too_short": 47},
            "filter": "size",
        },
        {"step": "assemble", "in": 58, "removed": 1, "out": 57, "reasons": {"no_image": 1}},
    ]
    (tmp_path / "funnel.json").write_text(json.dumps(steps), encoding="utf-8")
    (tmp_path / "cache").mkdir()
    use = [{"filter": "size", "measured": 12, "from_cache": 93}]
    (tmp_path / "cache" / "last_run.json").write_text(json.dumps(use), encoding="utf-8")
    code, out, err = run_cli_out(capsys, "filter", "funnel", tmp_path / "funnel.json")
    assert code == 0, err
    [size_row] = [line for line in out.splitlines() if "filter: size" in line]
    assert "12" in size_row.split("too_short 47")[1] and "93" in size_row.split("too_short 47")[1]
