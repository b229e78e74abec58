"""A hostile user on the data commands (stats, import-released, export-released, verify, diff, labels):
odd inputs are one line naming the file, line or record, never exit 70; no input is overwritten.

Every input is built from the authors' released records in data/sample/released/ and real Parquet
files written by rwpost's own publish step."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rwpost.io import sha256_file
from rwpost.publish import OFFLINE_EXTRACTION_NOTE, BuildInfo, write_version
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from tests.conftest import DEV, one_line, run_cli_out

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"


@pytest.fixture
def version(tmp_path) -> Path:
    """A published version folder of the released dev records (all four split files)."""
    samples = read_released(DEV) + read_released(RELEASED / "rwpost_dev_other_labels.jsonl")
    out = tmp_path / "v1"
    write_version(assign_splits(samples, seed=1), out, BuildInfo("v1", "test", "released"))
    return out


def test_stats_json_never_overwrites_a_split_of_the_folder_it_reads(tmp_path, version, capsys):
    split = version / "main" / "dev.parquet"
    before = sha256_file(split)
    code, _out, err = run_cli_out(capsys, "stats", version, "--json", split, "--overwrite")
    assert code == 2
    assert "is also an input" in one_line(err) and str(split) in err
    assert sha256_file(split) == before


def test_stats_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys):
    target = tmp_path / "report.txt"
    target.write_text("mine\n", encoding="utf-8")
    code, out, err = run_cli_out(capsys, "stats", DEV, "--out", target)
    assert code == 2 and "is a file, expected a folder" in one_line(err)
    assert out == ""  # refused up front, not after printing the tables
    assert target.read_text(encoding="utf-8") == "mine\n"


def test_a_symlink_loop_as_input_is_one_line_not_an_internal_error(tmp_path, capsys):
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


def test_import_released_refuses_a_second_record_of_the_same_article_naming_both_lines(tmp_path, capsys):
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


def test_import_released_of_a_parquet_file_says_what_it_is(tmp_path, version, capsys):
    split = version / "main" / "test.parquet"
    code, _out, err = run_cli_out(capsys, "import-released", split, "--out", tmp_path / "o.parquet")
    assert code == 1
    line = one_line(err)
    assert "a Parquet file, not the released JSONL" in line and "UTF-8" not in line


def test_a_split_with_a_duplicate_id_is_refused_naming_the_rows(tmp_path, version, capsys):
    table = pq.read_table(version / "main" / "test.parquet")
    doubled = tmp_path / "doubled.parquet"
    pq.write_table(pa.concat_tables([table.slice(0, 2), table.slice(0, 1)]), doubled)
    code, _out, err = run_cli_out(capsys, "stats", doubled)
    assert code == 1
    line = one_line(err)
    assert "row 3: duplicate id (also row 1)" in line and table.column("id")[0].as_py() in line


def test_verify_refuses_checksum_lines_outside_the_folder(tmp_path, version, capsys):
    assert run_cli_out(capsys, "verify", version)[0] == 0
    digest = sha256_file(version / "main" / "dev.parquet")
    outside = tmp_path / "elsewhere.parquet"
    outside.write_bytes((version / "main" / "dev.parquet").read_bytes())
    sums = version / "SHA256SUMS"
    sums.write_text(sums.read_text() + f"{digest}  ../elsewhere.parquet\n", encoding="utf-8")
    code, _out, err = run_cli_out(capsys, "verify", version)
    assert code == 1 and "../elsewhere.parquet is outside the version folder" in one_line(err)


def test_verify_of_a_card_that_is_not_utf8_is_one_line(version, capsys):
    (version / "README.md").write_bytes(b"\xff\xfe broken card")
    code, _out, err = run_cli_out(capsys, "verify", version)
    assert code == 1 and "README.md: unreadable" in one_line(err)


def test_verify_and_diff_name_a_missing_folder_or_a_file(tmp_path, version, capsys):
    code, _out, err = run_cli_out(capsys, "verify", tmp_path / "nowhere")
    assert code == 1 and "nowhere: no such folder" in one_line(err)
    code, _out, err = run_cli_out(capsys, "diff", version, DEV)
    assert code == 1 and f"{DEV}: not a folder" in one_line(err)


def test_labels_unknown_json_on_an_empty_store_is_an_error_not_an_empty_table(tmp_path, capsys):
    store = tmp_path / "crawl"
    store.mkdir()
    (store / "articles.jsonl").write_bytes(b"")
    code, out, err = run_cli_out(capsys, "labels", "--unknown", store, "--json")
    assert code == 1 and out == ""
    assert "holds no articles" in one_line(err)


def test_the_card_says_extraction_was_offline_only_when_it_was(tmp_path):
    samples = assign_splits(read_released(DEV), seed=1)
    notes = ["Every image is a generated stand-in drawn with Pillow."]
    offline = write_version(samples, tmp_path / "a", BuildInfo("a", "test", "offline", generated_notes=notes))
    card = (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
    assert card.count(OFFLINE_EXTRACTION_NOTE) == 1 and offline["extractor"]["backend"] == "offline"
    write_version(samples, tmp_path / "b", BuildInfo("b", "test", "llm", generated_notes=notes))
    card = (tmp_path / "b" / "README.md").read_text(encoding="utf-8")
    assert "Extractor backend: **llm**" in card and OFFLINE_EXTRACTION_NOTE not in card
    notes_twice = [*notes, OFFLINE_EXTRACTION_NOTE]  # params.yaml still carrying the note: said once
    write_version(samples, tmp_path / "c", BuildInfo("c", "test", "offline", generated_notes=notes_twice))
    assert (tmp_path / "c" / "README.md").read_text(encoding="utf-8").count(OFFLINE_EXTRACTION_NOTE) == 1


def test_a_clean_reimport_with_skip_bad_leaves_no_earlier_rejects_behind(tmp_path, capsys):
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
