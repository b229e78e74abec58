"""The reformat and extract commands (rwpost.commands.extract): options, inputs and outputs."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from rwpost.cli import app
from rwpost.cli import main as cli_main
from rwpost.io import iter_jsonl, write_jsonl
from rwpost.testing.llm import FakeLLMServer
from tests.conftest import DENIRO, DENIRO_URL, crawl_store, import_and_tag, read_rows, run_cli
from tests.extract_helpers import answers as _answers


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_reformat_sets_a_truncated_html_gz_aside(self, tmp_path, capsys):
        store = crawl_store(tmp_path / "crawl")
        victim = sorted((store / "html").glob("*.html.gz"))[0]
        victim.write_bytes(victim.read_bytes()[:200])  # a gzip stream cut short
        code, err = run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "tagged")
        assert code == 0, err
        assert "Aborted" not in err
        reasons = [row["reason"] for _n, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
        assert any(victim.name in r and "unreadable" in r for r in reasons)

    def test_truncated_last_line_in_a_stage_input_is_a_reject(self, tmp_path, capsys):
        store = crawl_store(tmp_path / "crawl")
        articles = store / "articles.jsonl"
        articles.write_bytes(articles.read_bytes() + b'{"schema_version": "1.0", "id": "rw-cut')
        code, err = run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "tagged")
        assert code == 0, err
        rejects = [row for _n, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
        assert any(r["line"] == 5 and "not valid JSON" in r["reason"] for r in rejects)

    def test_tagged_store_with_wrong_types_is_set_aside_by_extract(self, tmp_path, capsys, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        tagged = tmp_path / "tagged.jsonl"
        write_jsonl(tagged, [{"id": 5, "url": ["x"]}])
        code, err = run_cli(
            capsys, "extract", "--in", tagged, "--out", tmp_path / "x", "--backend", "offline"
        )
        assert code == 0, err
        (reject,) = [row for _n, row in iter_jsonl(tmp_path / "x" / "rejects.jsonl")]
        assert "tagged.jsonl:1" in reject["reason"]


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_reformat_refuses_existing_outputs_unless_overwrite(self, tmp_path, capsys):
        store = crawl_store(tmp_path / "crawl")
        out = tmp_path / "tagged"
        assert run_cli(capsys, "reformat", "--in", store, "--out", out)[0] == 0
        before = (out / "articles.jsonl").read_bytes()
        code, err = run_cli(capsys, "reformat", "--in", store, "--out", out)
        assert code == 2 and "already exists" in err
        assert run_cli(capsys, "reformat", "--in", store, "--out", out, "--overwrite")[0] == 0
        assert (out / "articles.jsonl").read_bytes() == before
        # the store itself as the output folder: its articles.jsonl is the input
        code, err = run_cli(capsys, "reformat", "--in", store, "--out", store, "--overwrite")
        assert code == 2 and "is also an input" in err

    def test_extract_refuses_its_input_as_output_and_resumes_otherwise(self, tmp_path, capsys, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        store = crawl_store(tmp_path / "crawl")
        assert run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "t")[0] == 0
        tagged = tmp_path / "t" / "articles.jsonl"
        inside = tmp_path / "x" / "extractions.jsonl"
        inside.parent.mkdir()
        shutil.copy(tagged, inside)
        before = inside.read_bytes()
        code, err = run_cli(capsys, "extract", "--in", inside, "--out", inside.parent, "--backend", "offline")
        assert code == 2 and "is also an input" in err and inside.read_bytes() == before
        out = tmp_path / "e"
        assert run_cli(capsys, "extract", "--in", tagged, "--out", out, "--backend", "offline")[0] == 0
        first = (out / "extractions.jsonl").read_bytes()
        assert (
            run_cli(capsys, "extract", "--in", tagged, "--out", out, "--backend", "offline")[0] == 0
        )  # resumes
        assert (out / "extractions.jsonl").read_bytes() == first


@pytest.mark.hostile
class TestHostile:
    """The dataset-building commands (crawl --from-html, reformat, extract, filter, sample, annotate) used the
    way a demanding or hostile user would: real files, real subprocesses, the real command line."""

    def test_a_rerun_of_extract_does_not_set_aside_the_same_bad_input_line_again(self, tmp_path):
        """``rwpost extract`` resumes into its folder; the input lines it set aside (a line cut short, a
        record that does not validate) are in rejects.jsonl once, however often it is rerun, and the summary
        counts them once."""
        saved = tmp_path / "saved"
        saved.mkdir()
        (saved / "deniro.html").write_text(DENIRO.read_text(encoding="utf-8"), encoding="utf-8")
        (saved / "index.json").write_text(json.dumps([{"file": "deniro.html", "url": DENIRO_URL}]))
        import_and_tag(saved, tmp_path)
        tagged = tmp_path / "tagged" / "articles.jsonl"
        with tagged.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "rw-not-an-article", "url": "https://www.snopes.com/x/"}) + "\n")
            handle.write('{"id": "rw-cut-short", "url": ')  # the last line of a copy cut short
        out = tmp_path / "extract"
        runner = CliRunner()
        for _ in range(3):
            args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "offline", "--json"]
            result = runner.invoke(app, [*args, "--cache", str(tmp_path / "llm.sqlite")])
            assert result.exit_code == 0, result.output
        rejects = read_rows(out / "rejects.jsonl")
        assert sorted(str(r["id"]) for r in rejects) == ["None", "rw-not-an-article"]
        assert len(read_rows(out / "extractions.jsonl")) == 1
        summary = json.loads((out / "summary.json").read_text())
        assert (summary["extracted"], summary["set_aside"]) == (1, 2)


def test_cli_reformat_then_extract_offline_then_dry_run(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    store = crawl_store(tmp_path / "crawl")
    assert cli_main(["reformat", "--in", str(store), "--out", str(tmp_path / "tagged")]) == 0
    tagged = tmp_path / "tagged" / "articles.jsonl"
    out = tmp_path / "extract"
    assert cli_main(["extract", "--in", str(tagged), "--out", str(out)]) == 0  # auto -> offline
    rows = [row for _, row in iter_jsonl(out / "extractions.jsonl")]
    assert len(rows) == 2 and {r["provenance"]["backend"] for r in rows} == {"offline"}
    capsys.readouterr()
    assert (
        cli_main(
            [
                "extract",
                "--in",
                str(tagged),
                "--out",
                str(out),
                "--dry-run",
                "--json",
                "--price-in",
                "2.5",
                "--price-out",
                "10",
                "--model",
                "gpt-4o",
                "--cache",
                str(tmp_path / "cache.sqlite"),
            ]
        )
        == 0
    )
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["total"]["requests"] == 6 and estimate["total"]["cost_usd"] > 0


def test_cli_extract_llm_backend_reads_the_server_from_the_environment(tmp_path, monkeypatch, de_niro):
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [de_niro])
    with FakeLLMServer(_answers()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "secret-test-key")
        args = [
            "extract",
            "--in",
            str(tagged),
            "--out",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "c.db"),
        ]
        assert cli_main(args) == 0
        assert server.chat_requests == 3
    cost = (tmp_path / "out" / "cost.json").read_text()
    assert "secret-test-key" not in cost and json.loads(cost)["backend"] == "llm"


def test_a_dry_run_prices_the_model_with_the_prices_of_params_yaml(tmp_path, monkeypatch, capsys, de_niro):
    # issue 39 §3 (round-3 leftover): the dry run said "unpriced" although params.yaml prices gpt-4o-mini
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [de_niro])
    prices = {"extract": {"prices": {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}}}
    (tmp_path / "params.yaml").write_text(json.dumps(prices), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["extract", "--in", str(tagged), "--out", "out", "--dry-run", "--json", "--model", "gpt-4o-mini"]
    capsys.readouterr()
    assert cli_main(args) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["priced"] and estimate["total"]["cost_usd"] > 0
