"""The annotate commands (rwpost.commands.annotate): push, pull, adjudicate, agreement, merge."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rwpost.cli import app
from rwpost.io import write_jsonl
from tests.conftest import DEV, one_line, read_rows, run_cli


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_bad_annotation_verdict_is_one_line_not_a_pydantic_dump(self, tmp_path, capsys):
        verdicts = tmp_path / "verdicts.jsonl"
        verdicts.write_text(
            json.dumps({"id": "rw-1", "annotator": "a", "post_extraction": "maybe?", "project": "validation"})
            + "\n",
            encoding="utf-8",
        )
        code, err = run_cli(capsys, "annotate", "agreement", "--verdicts", verdicts, "--out", tmp_path / "r")
        assert code == 1
        line = one_line(err)
        assert f"{verdicts}:1" in line and "record rw-1" in line and "post_extraction" in line

    @pytest.mark.parametrize("command", [["pull"], ["adjudicate"]])
    def test_annotate_without_label_studio_names_the_url(self, tmp_path, capsys, monkeypatch, command):
        monkeypatch.setenv("LABEL_STUDIO_API_KEY", "token")
        with socket.socket() as probe:  # a port nothing listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        verdicts = tmp_path / "v.jsonl"
        verdicts.write_text("", encoding="utf-8")
        extra = ["--out", tmp_path / "export"] if command == ["pull"] else ["--verdicts", verdicts]
        code, err = run_cli(capsys, "annotate", *command, "--port", port, "--state", tmp_path / "ls", *extra)
        assert code == 1
        line = one_line(err)
        assert f"http://127.0.0.1:{port}" in line and "not reachable" in line

    def test_annotate_agreement_names_a_missing_file_the_user_gave(self, tmp_path, capsys):
        """A mistyped --verdicts is "file not found", not "nothing to measure"; a bad --resamples is
        refused."""
        code, err = run_cli(
            capsys, "annotate", "agreement", "--verdicts", tmp_path / "typo.jsonl", "--out", tmp_path / "a"
        )
        assert code == 2 and one_line(err) == f"error: {tmp_path / 'typo.jsonl'}: file not found"
        empty = tmp_path / "verdicts.jsonl"
        empty.write_text("", encoding="utf-8")
        code, err = run_cli(
            capsys, "annotate", "agreement", "--verdicts", empty, "--resamples", "0", "--out", tmp_path / "a"
        )
        assert code == 2 and "'--resamples': Input should be greater than or equal to 1" in one_line(err)
        assert not (tmp_path / "a").exists()


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    @pytest.fixture
    def released(self, tmp_path: Path) -> Path:
        copy = tmp_path / "a.jsonl"
        shutil.copy(DEV, copy)
        return copy

    def test_annotate_merge_and_agreement_refuse_existing_outputs(self, released, tmp_path, capsys):
        verdicts = tmp_path / "verdicts.jsonl"
        write_jsonl(verdicts, [])
        out = tmp_path / "merged"
        assert run_cli(capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out)[0] == 0
        code, err = run_cli(capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out)
        assert code == 2 and "already exists" in err
        assert (
            run_cli(
                capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out, "--overwrite"
            )[0]
            == 0
        )
        # the samples to merge given as the output folder's samples.jsonl
        code, err = run_cli(
            capsys, "annotate", "merge", out / "samples.jsonl", "--verdicts", verdicts, "--out", out
        )
        assert code == 2 and "is also an input" in err
        report = tmp_path / "agreement"
        report.mkdir()
        (report / "agreement.md").write_text("mine\n", encoding="utf-8")
        code, err = run_cli(capsys, "annotate", "agreement", "--verdicts", verdicts, "--out", report)
        assert code == 2 and "agreement.md: already exists" in err

    def test_annotate_pull_refuses_existing_exports_before_connecting(self, tmp_path, capsys, monkeypatch):
        monkeypatch.setenv("LABEL_STUDIO_API_KEY", "token")
        out = tmp_path / "export"
        out.mkdir()
        (out / "validation_verdicts.jsonl").write_text("precious\n", encoding="utf-8")
        code, err = run_cli(capsys, "annotate", "pull", "--out", out, "--port", 9, "--state", tmp_path / "ls")
        assert code == 2 and "already exists" in err and "not reachable" not in err
        assert (out / "validation_verdicts.jsonl").read_text(encoding="utf-8") == "precious\n"


@pytest.mark.hostile
class TestHostile:
    """The dataset-building commands (crawl --from-html, reformat, extract, filter, sample, annotate) used the
    way a demanding or hostile user would: real files, real subprocesses, the real command line."""

    def test_annotate_merge_sets_aside_a_second_record_with_the_same_id(self, tmp_path):
        """Records to merge that repeat an id (a file concatenated twice): the first is merged, the repeat is
        set aside with the line it repeats, never written twice into samples.jsonl."""
        released = Path(__file__).parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
        lines = released.read_text(encoding="utf-8").splitlines()[:2]
        records = tmp_path / "records.jsonl"
        records.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
        verdicts = tmp_path / "verdicts.jsonl"
        verdicts.write_text("")
        out = tmp_path / "merged"
        args = ["annotate", "merge", str(records), "--verdicts", str(verdicts), "--out", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        samples = read_rows(out / "samples.jsonl")
        assert len(samples) == 2 and len({s["id"] for s in samples}) == 2
        [reject] = read_rows(out / "rejects.jsonl")
        assert reject["line"] == 3 and reject["id"] in {s["id"] for s in samples}
        assert "duplicate id (first on line 1)" in reject["reason"]
