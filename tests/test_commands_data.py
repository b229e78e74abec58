"""The data commands (rwpost.commands.data): stats, import-released, export-released, verify, diff."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rwpost.io import iter_jsonl, sha256_file
from rwpost.publish import BuildInfo, write_version
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from tests.conftest import DEV, one_line, released_lines, run_cli, run_cli_out


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_import_released_missing_file_names_it(self, tmp_path, capsys):
        code, err = run_cli(
            capsys, "import-released", tmp_path / "nope.jsonl", "--out", tmp_path / "o.parquet"
        )
        assert code == 1
        assert "nope.jsonl: file not found" in one_line(err)

    def test_import_released_directory_as_file_names_it(self, tmp_path, capsys):
        code, err = run_cli(capsys, "import-released", tmp_path, "--out", tmp_path / "o.parquet")
        assert code == 1
        assert f"{tmp_path}: is a directory" in one_line(err)

    def test_non_utf8_bytes_name_the_file_and_line(self, tmp_path, capsys):
        source = tmp_path / "bad.jsonl"
        lines = released_lines()
        source.write_bytes(lines[0] + b'{"claim": "caf\xe9"}\n' + lines[1])
        code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
        assert code == 1
        line = one_line(err)
        assert f"{source}:2" in line and "not UTF-8" in line and "0xe9" in line

    def test_non_utf8_line_with_skip_bad_becomes_a_reject(self, tmp_path, capsys):
        source = tmp_path / "bad.jsonl"
        lines = released_lines()
        source.write_bytes(lines[0] + b"\xff\xfe garbage\n" + lines[1])
        rejects = tmp_path / "rejects.jsonl"
        code, _ = run_cli(
            capsys,
            "import-released",
            source,
            "--out",
            tmp_path / "o.parquet",
            "--skip-bad",
            "--rejects",
            rejects,
        )
        assert code == 0
        (reject,) = [row for _n, row in iter_jsonl(rejects)]
        assert reject["line"] == 2 and "not UTF-8" in reject["reason"] and reject["source"] == str(source)

    def test_byte_order_mark_is_not_an_error(self, tmp_path, capsys):
        source = tmp_path / "bom.jsonl"
        source.write_bytes(b"\xef\xbb\xbf" + b"".join(released_lines(2)))
        code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
        assert code == 0, err

    def test_parquet_without_id_column_is_one_line(self, tmp_path, capsys):
        path = tmp_path / "noid.parquet"
        pq.write_table(pa.table({"claim": ["x"], "label": ["False"]}), path)
        code, err = run_cli(capsys, "stats", path)
        assert code == 1
        line = one_line(err)
        assert str(path) in line and "no id" in line

    def test_parquet_that_is_not_parquet_is_one_line(self, tmp_path, capsys):
        path = tmp_path / "junk.parquet"
        path.write_bytes(b"PAR1 not really\n\x00\x01")
        code, err = run_cli(capsys, "export-released", path, "--out", tmp_path / "o.jsonl")
        assert code == 1
        assert f"{path}: not a readable Parquet file" in one_line(err)

    def test_bad_label_names_file_line_and_field(self, tmp_path, capsys):
        row = json.loads(released_lines(1)[0])
        row["label"] = "Totally Bogus Rating"
        source = tmp_path / "label.jsonl"
        source.write_text(json.dumps(row) + "\n", encoding="utf-8")
        code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
        assert code == 1
        line = one_line(err)
        assert f"{source}:1" in line and "field 'label'" in line

    def test_unwritable_out_names_the_path_not_the_temp_file(self, tmp_path, capsys):
        blocker = tmp_path / "a-file"
        blocker.write_text("x", encoding="utf-8")
        out = blocker / "sub" / "out.jsonl"  # its parent cannot be made: a file is in the way
        code, err = run_cli(capsys, "export-released", DEV, "--out", out)
        assert code == 1
        line = one_line(err)
        assert str(out) in line and "cannot write" in line and ".tmp" not in line

    def test_out_that_is_a_directory_is_a_usage_error(self, tmp_path, capsys):
        (tmp_path / "dir").mkdir()
        code, err = run_cli(capsys, "export-released", DEV, "--out", tmp_path / "dir", "--overwrite")
        assert code == 2
        assert "is a directory" in one_line(err)


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    @pytest.fixture
    def released(self, tmp_path: Path) -> Path:
        copy = tmp_path / "a.jsonl"
        shutil.copy(DEV, copy)
        return copy

    def test_import_released_refuses_its_input_as_out(self, released, capsys):
        before = released.read_bytes()
        code, err = run_cli(capsys, "import-released", released, "--out", released, "--overwrite")
        assert code == 2 and "is also an input" in err
        assert released.read_bytes() == before

    def test_import_released_refuses_an_existing_parquet_unless_overwrite(self, released, tmp_path, capsys):
        out = tmp_path / "dev.parquet"
        assert run_cli(capsys, "import-released", released, "--out", out)[0] == 0
        before = out.read_bytes()
        small = tmp_path / "small.jsonl"
        small.write_bytes(b"".join(released.read_bytes().splitlines(keepends=True)[:5]))
        code, err = run_cli(capsys, "import-released", small, "--out", out)
        assert code == 2 and "already exists" in err and "--overwrite" in err
        assert out.read_bytes() == before
        assert run_cli(capsys, "import-released", small, "--out", out, "--overwrite")[0] == 0
        assert out.read_bytes() != before

    def test_import_released_refuses_an_existing_rejects_file(self, released, tmp_path, capsys):
        rejects = tmp_path / "keep.jsonl"
        rejects.write_text("precious\n", encoding="utf-8")
        code, err = run_cli(
            capsys,
            "import-released",
            released,
            "--out",
            tmp_path / "o.parquet",
            "--skip-bad",
            "--rejects",
            rejects,
        )
        assert code == 2 and "keep.jsonl: already exists" in err
        assert rejects.read_text(encoding="utf-8") == "precious\n"

    def test_export_released_refuses_input_and_existing_files(self, tmp_path, capsys):
        parquet = tmp_path / "dev.parquet"
        assert run_cli(capsys, "import-released", DEV, "--out", parquet)[0] == 0
        before = parquet.read_bytes()
        code, err = run_cli(capsys, "export-released", parquet, "--out", parquet, "--overwrite")
        assert code == 2 and "is also an input" in err and parquet.read_bytes() == before
        out = tmp_path / "dev.jsonl"
        out.write_text("x\n", encoding="utf-8")
        code, err = run_cli(capsys, "export-released", parquet, "--out", out)
        assert code == 2 and "already exists" in err and out.read_text(encoding="utf-8") == "x\n"
        assert run_cli(capsys, "export-released", parquet, "--out", out, "--overwrite")[0] == 0

    def test_stats_refuses_to_write_json_over_its_input(self, released, tmp_path, capsys):
        before = released.read_bytes()
        code, err = run_cli(capsys, "stats", released, "--json", released, "--overwrite")
        assert code == 2 and "is also an input" in err
        assert released.read_bytes() == before
        report = tmp_path / "r"
        report.mkdir()
        (report / "stats.md").write_text("mine\n", encoding="utf-8")
        code, err = run_cli(capsys, "stats", released, "--out", report, "--no-plots")
        assert code == 2 and "stats.md: already exists" in err
        assert run_cli(capsys, "stats", released, "--out", report, "--no-plots", "--overwrite")[0] == 0
        assert json.loads((report / "stats.json").read_text())["count"] > 0


RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"


@pytest.mark.hostile
class TestHostile:
    """A hostile user on the data commands (stats, import-released, export-released, verify, diff, labels):
    odd inputs are one line naming the file, line or record, never exit 70; no input is overwritten.

    Every input is built from the authors' released records in data/sample/released/ and real Parquet
    files written by rwpost's own publish step."""

    @pytest.fixture
    def version(self, tmp_path) -> Path:
        """A published version folder of the released dev records (all four split files)."""
        samples = read_released(DEV) + read_released(RELEASED / "rwpost_dev_other_labels.jsonl")
        out = tmp_path / "v1"
        write_version(assign_splits(samples, seed=1), out, BuildInfo("v1", "test", "released"))
        return out

    def test_stats_json_never_overwrites_a_split_of_the_folder_it_reads(self, tmp_path, version, capsys):
        split = version / "main" / "dev.parquet"
        before = sha256_file(split)
        code, _out, err = run_cli_out(capsys, "stats", version, "--json", split, "--overwrite")
        assert code == 2
        assert "is also an input" in one_line(err) and str(split) in err
        assert sha256_file(split) == before

    def test_stats_out_that_is_a_file_is_refused_before_any_work(self, tmp_path, capsys):
        target = tmp_path / "report.txt"
        target.write_text("mine\n", encoding="utf-8")
        code, out, err = run_cli_out(capsys, "stats", DEV, "--out", target)
        assert code == 2 and "is a file, expected a folder" in one_line(err)
        assert out == ""  # refused up front, not after printing the tables
        assert target.read_text(encoding="utf-8") == "mine\n"

    def test_a_symlink_loop_as_input_is_one_line_not_an_internal_error(self, tmp_path, capsys):
        loop = tmp_path / "loop1"
        os.symlink(tmp_path / "loop2", loop)
        os.symlink(loop, tmp_path / "loop2")
        for args in (
            ("import-released", loop, "--out", tmp_path / "o.parquet"),
            ("export-released", loop, "--out", tmp_path / "o.jsonl"),
            ("stats", loop),
        ):
            code, _out, err = run_cli_out(capsys, *args)
            assert code == 1, err
            line = one_line(err)
            assert str(loop) in line and ("symbolic link" in line.lower()), line
        assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "o.jsonl").exists()

    def test_import_released_refuses_a_second_record_of_the_same_article_naming_both_lines(
        self, tmp_path, capsys
    ):
        lines = DEV.read_bytes().splitlines(keepends=True)
        source = tmp_path / "dup.jsonl"
        source.write_bytes(lines[0] + lines[1] + lines[0])
        code, _out, err = run_cli_out(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
        assert code == 1
        assert f"{source}:3" in one_line(err) and "line 1" in err and "duplicate" in err
        assert not (tmp_path / "o.parquet").exists()

        code, out, err = run_cli_out(
            capsys, "import-released", source, "--out", tmp_path / "o.parquet", "--skip-bad"
        )
        assert code == 0, err
        assert len(pq.read_table(tmp_path / "o.parquet")) == 2
        [reject] = [json.loads(line) for line in (tmp_path / "o.rejects.jsonl").read_text().splitlines()]
        assert reject["line"] == 3 and reject["id"] and "line 1" in reject["reason"]

    def test_import_released_of_a_parquet_file_says_what_it_is(self, tmp_path, version, capsys):
        split = version / "main" / "test.parquet"
        code, _out, err = run_cli_out(capsys, "import-released", split, "--out", tmp_path / "o.parquet")
        assert code == 1
        line = one_line(err)
        assert "a Parquet file, not the released JSONL" in line and "UTF-8" not in line

    def test_a_split_with_a_duplicate_id_is_refused_naming_the_rows(self, tmp_path, version, capsys):
        table = pq.read_table(version / "main" / "test.parquet")
        doubled = tmp_path / "doubled.parquet"
        pq.write_table(pa.concat_tables([table.slice(0, 2), table.slice(0, 1)]), doubled)
        code, _out, err = run_cli_out(capsys, "stats", doubled)
        assert code == 1
        line = one_line(err)
        assert "row 3: duplicate id (also row 1)" in line and table.column("id")[0].as_py() in line

    def test_verify_refuses_checksum_lines_outside_the_folder(self, tmp_path, version, capsys):
        assert run_cli_out(capsys, "verify", version)[0] == 0
        digest = sha256_file(version / "main" / "dev.parquet")
        outside = tmp_path / "elsewhere.parquet"
        outside.write_bytes((version / "main" / "dev.parquet").read_bytes())
        sums = version / "SHA256SUMS"
        sums.write_text(sums.read_text() + f"{digest}  ../elsewhere.parquet\n", encoding="utf-8")
        code, _out, err = run_cli_out(capsys, "verify", version)
        assert code == 1 and "../elsewhere.parquet is outside the version folder" in one_line(err)

    def test_verify_of_a_card_that_is_not_utf8_is_one_line(self, version, capsys):
        (version / "README.md").write_bytes(b"\xff\xfe broken card")
        code, _out, err = run_cli_out(capsys, "verify", version)
        assert code == 1 and "README.md: unreadable" in one_line(err)

    def test_verify_and_diff_name_a_missing_folder_or_a_file(self, tmp_path, version, capsys):
        code, _out, err = run_cli_out(capsys, "verify", tmp_path / "nowhere")
        assert code == 1 and "nowhere: no such folder" in one_line(err)
        code, _out, err = run_cli_out(capsys, "diff", version, DEV)
        assert code == 1 and f"{DEV}: not a folder" in one_line(err)

    def test_a_clean_reimport_with_skip_bad_leaves_no_earlier_rejects_behind(self, tmp_path, capsys):
        """--skip-bad's rejects file belongs to this import: a clean re-import with --overwrite empties it,
        where it used to keep the lines an earlier import of another file set aside."""
        bad = tmp_path / "bad.jsonl"
        bad.write_text(DEV.read_text(encoding="utf-8").splitlines()[0] + "\n{not json\n", encoding="utf-8")
        out = tmp_path / "dev.parquet"
        code, _, _ = run_cli_out(capsys, "import-released", bad, "--out", out, "--skip-bad")
        rejects = tmp_path / "dev.rejects.jsonl"
        assert code == 0 and len(rejects.read_text().splitlines()) == 1
        code, _, _ = run_cli_out(capsys, "import-released", DEV, "--out", out, "--skip-bad", "--overwrite")
        assert code == 0 and rejects.read_text() == ""


def test_the_readme_examples_read_the_bundled_sample_from_any_folder(tmp_path, monkeypatch, capsys):
    """``data/sample/...`` paths that the current folder lacks are the bundled sample (issue 27)."""
    from rwpost.cli import main

    monkeypatch.chdir(tmp_path)
    released = "data/sample/released/rwpost_dev_main.head.jsonl"
    assert main(["stats", released]) == 0
    assert main(["import-released", released, "--out", "dev.parquet"]) == 0
    assert (tmp_path / "dev.parquet").is_file() and not (tmp_path / "data").exists()
    capsys.readouterr()
    assert main(["stats", "data/sample/released/absent.jsonl"]) == 1  # a missing file is still an error
    assert "data/sample/released/absent.jsonl: file not found" in capsys.readouterr().err
