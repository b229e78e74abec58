"""No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rwpost.io import check_output, write_jsonl
from tests.conftest import DEV, crawl_store, run_cli


@pytest.fixture
def released(tmp_path: Path) -> Path:
    copy = tmp_path / "a.jsonl"
    shutil.copy(DEV, copy)
    return copy


def test_check_output_refuses_the_input_through_a_symlink_and_a_hard_link(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n", encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(source)
    os.link(source, tmp_path / "hard.jsonl")
    for alias in ("in.jsonl", "link.jsonl", "hard.jsonl", "./in.jsonl"):
        with pytest.raises(Exception, match="is also an input"):
            check_output(tmp_path / alias, [source], overwrite=True)
    assert check_output(tmp_path / "new.jsonl", [source]) == tmp_path / "new.jsonl"


def test_import_released_refuses_its_input_as_out(released, capsys):
    before = released.read_bytes()
    code, err = run_cli(capsys, "import-released", released, "--out", released, "--overwrite")
    assert code == 2 and "is also an input" in err
    assert released.read_bytes() == before


def test_import_released_refuses_an_existing_parquet_unless_overwrite(released, tmp_path, capsys):
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


def test_import_released_refuses_an_existing_rejects_file(released, tmp_path, capsys):
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


def test_export_released_refuses_input_and_existing_files(tmp_path, capsys):
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


def test_stats_refuses_to_write_json_over_its_input(released, tmp_path, capsys):
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


def test_reformat_refuses_existing_outputs_unless_overwrite(tmp_path, capsys):
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


def test_extract_refuses_its_input_as_output_and_resumes_otherwise(tmp_path, capsys, monkeypatch):
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
    assert run_cli(capsys, "extract", "--in", tagged, "--out", out, "--backend", "offline")[0] == 0  # resumes
    assert (out / "extractions.jsonl").read_bytes() == first


def test_filter_run_refuses_an_output_that_is_an_input(tmp_path, capsys):
    tagged = tmp_path / "decisions.jsonl"  # named like an output, given as the tagged input
    write_jsonl(tagged, [])
    before = tagged.read_bytes()
    code, err = run_cli(capsys, "filter", "run", "--tagged", tagged, "--out", tmp_path)
    assert code == 2 and "is also an input" in err
    assert tagged.read_bytes() == before


def test_annotate_merge_and_agreement_refuse_existing_outputs(released, tmp_path, capsys):
    verdicts = tmp_path / "verdicts.jsonl"
    write_jsonl(verdicts, [])
    out = tmp_path / "merged"
    assert run_cli(capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out)[0] == 0
    code, err = run_cli(capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out)
    assert code == 2 and "already exists" in err
    assert (
        run_cli(capsys, "annotate", "merge", released, "--verdicts", verdicts, "--out", out, "--overwrite")[0]
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


def test_annotate_pull_refuses_existing_exports_before_connecting(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "token")
    out = tmp_path / "export"
    out.mkdir()
    (out / "validation_verdicts.jsonl").write_text("precious\n", encoding="utf-8")
    code, err = run_cli(capsys, "annotate", "pull", "--out", out, "--port", 9, "--state", tmp_path / "ls")
    assert code == 2 and "already exists" in err and "not reachable" not in err
    assert (out / "validation_verdicts.jsonl").read_text(encoding="utf-8") == "precious\n"


def test_sample_build_refuses_a_non_empty_site_folder_and_the_released_folder(tmp_path, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "keep.txt").write_text("mine", encoding="utf-8")
    code, err = run_cli(capsys, "sample", "build", "--out", site)
    assert code == 2 and "already holds files" in err and len(err.strip().splitlines()) == 1
    assert (site / "keep.txt").read_text(encoding="utf-8") == "mine"
    code, err = run_cli(capsys, "sample", "build", "--out", DEV.parent / "site")
    assert code == 2 and "inside the released records folder" in err
    assert not (DEV.parent / "site").exists()


def test_schemas_refuses_to_replace_differing_files_unless_overwrite(tmp_path, capsys):
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


def test_filter_run_reruns_on_its_own_inputs_but_keeps_another_runs_outputs(tmp_path, capsys):
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
    assert run_cli(capsys, "filter", "run", "--tagged", other, *common, "--out", out, "--overwrite")[0] == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["input"] == 1 and json.loads(before["summary.json"])["input"] == 2


def test_compare_and_leaderboard_never_write_over_a_runs_files(tmp_path, capsys):
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
