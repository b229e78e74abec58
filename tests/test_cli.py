"""The command line (rwpost.cli): every error is one line with exit 1 (bad input) or 2 (bad usage)."""

from __future__ import annotations

import pytest

from tests.conftest import DEV, one_line, run_cli


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_usage_errors_are_one_line_exit_2(self, capsys):
        code, err = run_cli(capsys, "stats", "--no-such-option")
        assert code == 2
        assert "--no-such-option" in one_line(err)
        code, err = run_cli(capsys, "export-released", DEV, "--out", "x.jsonl", "--format", "bogus")
        assert code == 2
        assert "--format" in one_line(err)

    @pytest.mark.parametrize(
        ("args", "option"),
        [
            (["extract", "--backend", "offline", "--limit", "-1", "--out", "OUT"], "--limit"),  # dropped one
            (
                ["extract", "--backend", "llm", "--dry-run", "--concurrency", "0", "--out", "OUT"],
                "--concurrency",
            ),
            (["extract", "--price-in", "-1", "--price-out", "1", "--out", "OUT"], "--price-in"),
            (["reformat", "--min-words", "-5", "--out", "OUT"], "--min-words"),
            (["sample", "serve", "--port", "70000"], "--port"),
            (["annotate", "push", "--limit", "-2"], "--limit"),
        ],
    )
    def test_numeric_options_out_of_range_are_usage_errors(self, tmp_path, capsys, args, option):
        """A count, a price or a port out of range is refused before anything is read or written."""
        out = tmp_path / "out"
        code, err = run_cli(capsys, *[out if a == "OUT" else a for a in args])
        line = one_line(err)
        assert code == 2 and f"'{option}'" in line, line
        assert not out.exists()

    def test_a_file_where_a_folder_is_expected_and_a_missing_schema_folder_are_one_line(
        self, tmp_path, capsys
    ):
        """``sample build --out FILE`` once ended in an internal error (exit 70)."""
        a_file = tmp_path / "afile"
        a_file.write_text("", encoding="utf-8")
        code, err = run_cli(capsys, "sample", "build", "--released", "data/sample/released", "--out", a_file)
        assert code == 2 and one_line(err) == f"error: {a_file}: is a file, expected a folder for the site"
        code, err = run_cli(capsys, "schemas", "--check", "--dir", tmp_path / "none")
        assert code == 2 and f"{tmp_path / 'none'}: no such folder of schema files" in one_line(err)

    @pytest.mark.parametrize(
        "args",
        [
            ["crawl", "--from-html", "SAVED", "--out", "AFILE"],
            [
                "extract",
                "--in",
                "data/sample/released/rwpost_dev_main.head.jsonl",
                "--out",
                "AFILE",
                "--backend",
                "offline",
            ],
        ],  # fmt: skip
    )
    def test_an_output_folder_that_is_a_file_is_one_line_not_an_internal_error(self, tmp_path, capsys, args):
        """Both once ended in exit 70 (FileExistsError from making the folder)."""
        a_file = tmp_path / "afile"
        a_file.write_text("", encoding="utf-8")
        (tmp_path / "saved").mkdir()
        given = {"AFILE": a_file, "SAVED": tmp_path / "saved"}
        code, err = run_cli(capsys, *[given.get(a, a) for a in args])
        assert code == 1 and one_line(err) == f"error: {a_file}: exists and is not a folder"
        assert a_file.read_text(encoding="utf-8") == ""
