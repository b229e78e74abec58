"""The schemas and labels commands (rwpost.commands.core)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rwpost.cli import app
from tests.conftest import one_line, run_cli, run_cli_out


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_labels_unknown_on_an_empty_store_says_so(self, tmp_path, capsys):
        (tmp_path / "articles.jsonl").write_text("", encoding="utf-8")
        code, err = run_cli(capsys, "labels", "--unknown", tmp_path)
        assert code == 1 and one_line(err) == f"error: {tmp_path}: the crawl store holds no articles"


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_schemas_refuses_to_replace_differing_files_unless_overwrite(self, tmp_path, capsys):
        folder = tmp_path / "schemas"
        assert run_cli(capsys, "schemas", "--dir", folder)[0] == 0
        written = {p.name: p.read_bytes() for p in folder.iterdir()}
        assert len(written) > 5
        # the documented regenerate action: files that already match are left alone, no --overwrite needed
        stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
        assert run_cli(capsys, "schemas", "--dir", folder)[0] == 0
        assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
        name = sorted(written)[0]
        (folder / name).write_text('{"title": "my own schema"}\n', encoding="utf-8")
        (folder / sorted(written)[1]).unlink()  # a missing file alone is no overwrite, but nothing is written
        code, err = run_cli(capsys, "schemas", "--dir", folder)
        assert code == 2 and name in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
        assert (folder / name).read_text(encoding="utf-8") == '{"title": "my own schema"}\n'
        assert not (folder / sorted(written)[1]).exists()
        assert run_cli(capsys, "schemas", "--dir", folder, "--overwrite")[0] == 0
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == written
        assert run_cli(capsys, "schemas", "--dir", folder, "--check")[0] == 0
        (tmp_path / "file").write_text("x", encoding="utf-8")
        code, err = run_cli(capsys, "schemas", "--dir", tmp_path / "file", "--overwrite")
        assert code == 2 and "is a file" in err


@pytest.mark.hostile
class TestHostile:
    """A hostile user on the data commands (stats, import-released, export-released, verify, diff, labels):
    odd inputs are one line naming the file, line or record, never exit 70; no input is overwritten.

    Every input is built from the authors' released records in data/sample/released/ and real Parquet
    files written by rwpost's own publish step."""

    def test_labels_unknown_json_on_an_empty_store_is_an_error_not_an_empty_table(self, tmp_path, capsys):
        store = tmp_path / "crawl"
        store.mkdir()
        (store / "articles.jsonl").write_bytes(b"")
        code, out, err = run_cli_out(capsys, "labels", "--unknown", store, "--json")
        assert code == 1 and out == ""
        assert "holds no articles" in one_line(err)


def test_labels_unknown_lists_words_of_a_store(tmp_path):
    rows = [
        {"rating": r}
        for r in ("False", "Totally Bogus", "Totally Bogus", "No Rating", None, "Unproven (retired)")
    ]
    (tmp_path / "articles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["labels", "--unknown", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"Totally Bogus": 2}
