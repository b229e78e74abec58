"""Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rwpost.io import iter_jsonl, write_jsonl
from tests.conftest import DEV, crawl_store, one_line, released_lines, run_cli


def test_import_released_missing_file_names_it(tmp_path, capsys):
    code, err = run_cli(capsys, "import-released", tmp_path / "nope.jsonl", "--out", tmp_path / "o.parquet")
    assert code == 1
    assert "nope.jsonl: file not found" in one_line(err)


def test_import_released_directory_as_file_names_it(tmp_path, capsys):
    code, err = run_cli(capsys, "import-released", tmp_path, "--out", tmp_path / "o.parquet")
    assert code == 1
    assert f"{tmp_path}: is a directory" in one_line(err)


def test_non_utf8_bytes_name_the_file_and_line(tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    lines = released_lines()
    source.write_bytes(lines[0] + b'{"claim": "caf\xe9"}\n' + lines[1])
    code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
    assert code == 1
    line = one_line(err)
    assert f"{source}:2" in line and "not UTF-8" in line and "0xe9" in line


def test_non_utf8_line_with_skip_bad_becomes_a_reject(tmp_path, capsys):
    source = tmp_path / "bad.jsonl"
    lines = released_lines()
    source.write_bytes(lines[0] + b"\xff\xfe garbage\n" + lines[1])
    rejects = tmp_path / "rejects.jsonl"
    code, _ = run_cli(
        capsys, "import-released", source, "--out", tmp_path / "o.parquet", "--skip-bad", "--rejects", rejects
    )
    assert code == 0
    (reject,) = [row for _n, row in iter_jsonl(rejects)]
    assert reject["line"] == 2 and "not UTF-8" in reject["reason"] and reject["source"] == str(source)


def test_byte_order_mark_is_not_an_error(tmp_path, capsys):
    source = tmp_path / "bom.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + b"".join(released_lines(2)))
    code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
    assert code == 0, err


def test_parquet_without_id_column_is_one_line(tmp_path, capsys):
    path = tmp_path / "noid.parquet"
    pq.write_table(pa.table({"claim": ["x"], "label": ["False"]}), path)
    code, err = run_cli(capsys, "stats", path)
    assert code == 1
    line = one_line(err)
    assert str(path) in line and "no id" in line


def test_parquet_that_is_not_parquet_is_one_line(tmp_path, capsys):
    path = tmp_path / "junk.parquet"
    path.write_bytes(b"PAR1 not really\n\x00\x01")
    code, err = run_cli(capsys, "export-released", path, "--out", tmp_path / "o.jsonl")
    assert code == 1
    assert f"{path}: not a readable Parquet file" in one_line(err)


def test_bad_label_names_file_line_and_field(tmp_path, capsys):
    row = json.loads(released_lines(1)[0])
    row["label"] = "Totally Bogus Rating"
    source = tmp_path / "label.jsonl"
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code, err = run_cli(capsys, "import-released", source, "--out", tmp_path / "o.parquet")
    assert code == 1
    line = one_line(err)
    assert f"{source}:1" in line and "field 'label'" in line


def test_bad_annotation_verdict_is_one_line_not_a_pydantic_dump(tmp_path, capsys):
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


def test_unwritable_out_names_the_path_not_the_temp_file(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    out = blocker / "sub" / "out.jsonl"  # its parent cannot be made: a file is in the way
    code, err = run_cli(capsys, "export-released", DEV, "--out", out)
    assert code == 1
    line = one_line(err)
    assert str(out) in line and "cannot write" in line and ".tmp" not in line


def test_out_that_is_a_directory_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "dir").mkdir()
    code, err = run_cli(capsys, "export-released", DEV, "--out", tmp_path / "dir", "--overwrite")
    assert code == 2
    assert "is a directory" in one_line(err)


def test_sample_serve_on_a_port_in_use_is_one_line(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, err = run_cli(capsys, "sample", "serve", "--port", port)
    assert code == 2
    line = one_line(err)
    assert f"127.0.0.1:{port}" in line and "in use" in line


@pytest.mark.parametrize("command", [["pull"], ["adjudicate"]])
def test_annotate_without_label_studio_names_the_url(tmp_path, capsys, monkeypatch, command):
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


def test_reformat_sets_a_truncated_html_gz_aside(tmp_path, capsys):
    store = crawl_store(tmp_path / "crawl")
    victim = sorted((store / "html").glob("*.html.gz"))[0]
    victim.write_bytes(victim.read_bytes()[:200])  # a gzip stream cut short
    code, err = run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "tagged")
    assert code == 0, err
    assert "Aborted" not in err
    reasons = [row["reason"] for _n, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
    assert any(victim.name in r and "unreadable" in r for r in reasons)


def test_corrupt_funnel_json_is_one_line(tmp_path, capsys):
    path = tmp_path / "funnel.json"
    path.write_text("[{not json", encoding="utf-8")
    code, err = run_cli(capsys, "filter", "funnel", path)
    assert code == 1
    assert f"{path}:1: not valid JSON" in one_line(err)


def test_usage_errors_are_one_line_exit_2(capsys):
    code, err = run_cli(capsys, "stats", "--no-such-option")
    assert code == 2
    assert "--no-such-option" in one_line(err)
    code, err = run_cli(capsys, "export-released", DEV, "--out", "x.jsonl", "--format", "bogus")
    assert code == 2
    assert "--format" in one_line(err)


def test_bad_params_yaml_is_one_line(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text("filter: [unclosed\n  - x: {\n", encoding="utf-8")
    code, err = run_cli(capsys, "filter", "run", "--params", params, "--out", tmp_path / "f")
    assert code == 2
    assert f"{params}: not valid YAML" in one_line(err)


def test_truncated_last_line_in_a_stage_input_is_a_reject(tmp_path, capsys):
    store = crawl_store(tmp_path / "crawl")
    articles = store / "articles.jsonl"
    articles.write_bytes(articles.read_bytes() + b'{"schema_version": "1.0", "id": "rw-cut')
    code, err = run_cli(capsys, "reformat", "--in", store, "--out", tmp_path / "tagged")
    assert code == 0, err
    rejects = [row for _n, row in iter_jsonl(tmp_path / "tagged" / "rejects.jsonl")]
    assert any(r["line"] == 5 and "not valid JSON" in r["reason"] for r in rejects)


def test_tagged_store_with_wrong_types_is_set_aside_by_extract(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    tagged = tmp_path / "tagged.jsonl"
    write_jsonl(tagged, [{"id": 5, "url": ["x"]}])
    code, err = run_cli(capsys, "extract", "--in", tagged, "--out", tmp_path / "x", "--backend", "offline")
    assert code == 0, err
    (reject,) = [row for _n, row in iter_jsonl(tmp_path / "x" / "rejects.jsonl")]
    assert "tagged.jsonl:1" in reject["reason"]


def test_gzip_of_garbage_is_named(tmp_path):
    # the reader under reformat: a .gz that is not gzip at all
    from rwpost.errors import RecordError
    from rwpost.records import CrawledArticle
    from rwpost.reformat import _read_html

    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "x.html.gz").write_bytes(b"not gzip")
    article = CrawledArticle(
        id="rw-x",
        url="https://www.snopes.com/fact-check/x/",
        http_status=200,
        fetched_at=datetime(2026, 5, 3, tzinfo=UTC),
        html_path="html/x.html.gz",
    )
    with pytest.raises(RecordError, match=r"record rw-x, field 'html_path'.*x\.html\.gz unreadable"):
        _read_html(tmp_path, article)


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
def test_a_bad_price_table_is_refused_before_the_run(tmp_path, capsys, text, problem):
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


LOOP = ["--start-url", "http://127.0.0.1:9/", "--allow-loopback"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--start-url", "notaurl"], "--start-url: expected an http(s) URL, got 'notaurl'"),
        (["--start-url", "http://127.0.0.1:9/"], "is a loopback address: pass --allow-loopback"),
        (["--start-url", "https://www.snopes.com/"], "--contact is required for a crawl of the real web"),
        ([*LOOP, "--since", "2030-13-01"], "--since: expected a date like 2017-01-01"),
        ([*LOOP, "--max-articles", "-3"], "--max-articles: expected 0 (no limit) or more, got -3"),
        ([*LOOP, "--since", "2020-01-01", "--until", "2010-01-01"], "--until 2010-01-01 is before --since"),
    ],
)
def test_crawl_options_are_checked_before_anything_starts(tmp_path, capsys, args, problem):
    """Each bad option is one line naming it, exit 2, before a connection or an output folder."""
    out = tmp_path / "crawl"
    code, err = run_cli(capsys, "crawl", *args, "--out", out)
    line = one_line(err)
    assert code == 2 and problem in line, line
    assert not out.exists()


def test_annotate_agreement_names_a_missing_file_the_user_gave(tmp_path, capsys):
    """A mistyped --verdicts is "file not found", not "nothing to measure"; a bad --resamples is refused."""
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


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["extract", "--backend", "offline", "--limit", "-1", "--out", "OUT"], "--limit"),  # dropped one
        (["extract", "--backend", "llm", "--dry-run", "--concurrency", "0", "--out", "OUT"], "--concurrency"),
        (["extract", "--price-in", "-1", "--price-out", "1", "--out", "OUT"], "--price-in"),
        (["reformat", "--min-words", "-5", "--out", "OUT"], "--min-words"),
        (["sample", "serve", "--port", "70000"], "--port"),
        (["annotate", "push", "--limit", "-2"], "--limit"),
    ],
)
def test_numeric_options_out_of_range_are_usage_errors(tmp_path, capsys, args, option):
    """A count, a price or a port out of range is refused before anything is read or written."""
    out = tmp_path / "out"
    code, err = run_cli(capsys, *[out if a == "OUT" else a for a in args])
    line = one_line(err)
    assert code == 2 and f"'{option}'" in line, line
    assert not out.exists()


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("filter", "workers", 0), ("reformat", "min_words", -1), ("extract", "concurrency", 0)],
)
def test_params_yaml_counts_out_of_range_name_the_key(tmp_path, capsys, section, key, value):
    """params.yaml is checked like the options: a count out of range names the file and the key."""
    import yaml

    params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
    params[section][key] = value
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    from rwpost.stages import extract, reformat
    from rwpost.stages import filter as filter_stage
    from rwpost.stages.base import load_params

    stage = {"filter": filter_stage, "reformat": reformat, "extract": extract}[section]
    with pytest.raises(Exception, match=rf"{section}\.{key}: Input should be greater than"):
        stage.Params.from_params(load_params(path), str(path))


def test_a_file_where_a_folder_is_expected_and_a_missing_schema_folder_are_one_line(tmp_path, capsys):
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
def test_an_output_folder_that_is_a_file_is_one_line_not_an_internal_error(tmp_path, capsys, args):
    """Both once ended in exit 70 (FileExistsError from making the folder)."""
    a_file = tmp_path / "afile"
    a_file.write_text("", encoding="utf-8")
    (tmp_path / "saved").mkdir()
    given = {"AFILE": a_file, "SAVED": tmp_path / "saved"}
    code, err = run_cli(capsys, *[given.get(a, a) for a in args])
    assert code == 1 and one_line(err) == f"error: {a_file}: exists and is not a folder"
    assert a_file.read_text(encoding="utf-8") == ""


def test_labels_unknown_on_an_empty_store_says_so(tmp_path, capsys):
    (tmp_path / "articles.jsonl").write_text("", encoding="utf-8")
    code, err = run_cli(capsys, "labels", "--unknown", tmp_path)
    assert code == 1 and one_line(err) == f"error: {tmp_path}: the crawl store holds no articles"
