"""Issue 27's "numbers and output a reader can trust", typed detector options and the low-severity hostile
cases: one regression test per case (the cases and their commands are in the hostile and new-user
reviews of main 1944020)."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from snopes_crawler.spiders.snopes import SnopesSpider

from rwpost.dataset import read_samples
from rwpost.errors import ConfigError
from rwpost.io import folder_lock, write_jsonl
from rwpost.labels import Label
from rwpost.records import Evidence, Image
from rwpost.sample.serve import SampleServer
from rwpost.stages.base import load_params
from tests.conftest import DENIRO, DEV, ROOT, one_line, run_cli, run_cli_out
from tests.evaluate_helpers import SCRIPTED, TRUST_GOLD, image_bytes, make_sample, run_evaluate
from tests.killing import child_env, cli_command, stage_command


@pytest.fixture
def samples():
    return [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _script(tmp_path, name: str, repeats: list[dict[str, str]]):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({str(i): r for i, r in enumerate(repeats)}))
    return path


@pytest.mark.trust
class TestTrust:
    """Numbers a reader can trust: repeated runs are compared and shown by their mean, not repeat 0."""

    @pytest.fixture
    def repeated(self, tmp_path, samples, data):
        """Run A: repeat 0 perfect, repeats 1 and 2 all wrong (mean accuracy 1/3); run B: always half
        right (3 repeats of the same answers)."""
        right = {s.id: str(s.label) for s in samples}
        wrong = {s.id: ("True" if s.label is not Label.TRUE else "False") for s in samples}
        half = {s.id: (right if i % 2 else wrong)[s.id] for i, s in enumerate(samples)}
        runs = tmp_path / "runs"
        for name, script in (("lucky", [right, wrong, wrong]), ("steady", [half, half, half])):
            path = _script(tmp_path, name, script)
            args = ["--detector", SCRIPTED, "--set", f"script={path}", "--repeats", "3", "--name", name]
            assert run_evaluate(data, runs / name, *args) == 0
        return runs

    def test_compare_pairs_over_repeats_not_repeat_0(self, repeated, tmp_path, capsys):
        out = tmp_path / "compare.json"
        code, stdout, err = run_cli_out(
            capsys, "compare", repeated / "lucky", repeated / "steady", "--bootstrap", 200, "--out", out
        )
        assert code == 0, err
        accuracy = json.loads(out.read_text())["views"]["main"]["metrics"]["accuracy"]
        # the mean over the pairs (repeat 0 alone said +0.5, the opposite sign)
        assert accuracy["a"] == pytest.approx(1 / 3) and accuracy["b"] == pytest.approx(0.5)
        assert accuracy["difference"] == pytest.approx(1 / 3 - 0.5)
        low, high = accuracy["difference_ci95"]
        assert low <= accuracy["difference"] <= high and high < 0.5  # not repeat 0's +0.5
        assert (
            accuracy["mcnemar"]["p_value"] is None
            and "one answer per sample" in accuracy["mcnemar"]["reason"]
        )
        assert accuracy["repeats"]["difference"]["values"] == pytest.approx([0.5, -0.5, -0.5])
        assert "0.333 ± 0.577" in stdout and "-0.167 ± 0.577" in stdout
        assert "McNemar not computed" in err

    def test_compare_refuses_uneven_repeat_counts(self, repeated, tmp_path, samples, data, capsys):
        two = _script(tmp_path, "two", [{s.id: "True" for s in samples}] * 2)
        args = ["--detector", SCRIPTED, "--set", f"script={two}", "--repeats", "2", "--name", "two"]
        assert run_evaluate(data, tmp_path / "two", *args) == 0
        code, err = run_cli(capsys, "compare", repeated / "lucky", tmp_path / "two", "--bootstrap", 20)
        assert code == 2 and "run A has 3 repeats and run B 2" in one_line(err)

    def test_the_evaluate_table_shows_the_mean_over_repeats(
        self, tmp_path, samples, data, capsys, monkeypatch
    ):
        monkeypatch.setenv("COLUMNS", "80")
        right = {s.id: str(s.label) for s in samples}
        wrong = {s.id: ("True" if s.label is not Label.TRUE else "False") for s in samples}
        path = _script(tmp_path, "lucky", [right, wrong, wrong])
        args = ["--detector", SCRIPTED, "--set", f"script={path}", "--repeats", "3"]
        capsys.readouterr()
        assert run_evaluate(data, tmp_path / "run", *args) == 0
        stdout = capsys.readouterr().out
        assert "mean ± sd over 3 repeats" in stdout
        assert "0.333 ± 0.577" in stdout and "1.000" not in stdout  # repeat 0 alone was perfect
        assert "…" not in stdout
        metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
        main_view = metrics["repeats"]["views"]["main"]["accuracy"]
        assert main_view["values"] == [1.0, 0.0, 0.0] and np.isclose(main_view["mean"], 1 / 3)

    def test_the_leaderboard_and_compare_tables_are_readable_at_80_columns(
        self, repeated, capsys, monkeypatch
    ):
        monkeypatch.setenv("COLUMNS", "80")
        code, stdout, err = run_cli_out(capsys, "leaderboard", repeated)
        assert code == 0, err
        assert "…" not in stdout and "0.333 ± 0.577" in stdout and "0.500 ± 0.000" in stdout
        assert "steady: setting" in stdout  # one line per run, every header named
        assert "flagged: predictions that cite a blocked fact-check domain" in err
        code, stdout, err = run_cli_out(
            capsys, "compare", repeated / "lucky", repeated / "steady", "--bootstrap", 20
        )
        assert code == 0, err
        assert "…" not in stdout and "-0.167 ± 0.577" in stdout
        monkeypatch.setenv("COLUMNS", "250")  # a wide terminal still gets the table
        code, stdout, err = run_cli_out(capsys, "leaderboard", repeated)
        assert code == 0 and "┃ system" in stdout

    def test_a_run_report_says_what_it_trained_on_and_reads_right_on_tiny_groups(self, tmp_path, capsys):
        images = [Image(bytes=image_bytes())] * 11 + [None]
        gold = [*TRUST_GOLD, Label.TRUE, Label.FALSE]
        samples = [
            make_sample(i, g, image=images[i], category="Lonely" if i == 11 else "Generated")
            for i, g in enumerate(gold)
        ]
        data, train = tmp_path / "data.jsonl", tmp_path / "train.jsonl"
        write_jsonl(data, samples)
        write_jsonl(train, [make_sample(100 + i, g) for i, g in enumerate(TRUST_GOLD)])
        args = ["--detector", "majority", "--train", str(train), "--setting", "T+I", "--plots"]
        assert run_evaluate(data, tmp_path / "run", *args) == 0
        report = (tmp_path / "run" / "report.md").read_text()
        assert f"Trained on: {train} (sha256 " in report and ", 10 samples." in report
        assert "Images: not sent (the detector does not read images; 11 expected" in report
        assert "None sent" not in report
        one = [line for line in report.splitlines() if line.startswith("| Lonely ")]
        cells = [c.strip() for c in one[0].strip(" |").split("|")]
        assert cells[1] == "1" and cells[3] == "- (n=1)"  # no macro F1 of 1.0 from one sample
        assert "macro recall - (0 samples cite URLs)" in report
        assert "Difficulty is the number of gold evidence items" in report
        assert (tmp_path / "run" / "plots" / "category_f1.png").exists()

        args = ["--detector", "majority", "--train-fraction", "0.5"]
        assert run_evaluate(data, tmp_path / "part", *args) == 0
        report = (tmp_path / "part" / "report.md").read_text()
        assert "Trained on: --train-fraction 0.5 of the data (6 of 12 samples, seed 0" in report
        assert ", 6 samples." in report

        # a leaderboard of runs that cost nothing draws no cost figure
        code, err = run_cli(
            capsys, "leaderboard", tmp_path / "run", tmp_path / "part", "--out", tmp_path / "b"
        )
        assert code == 0, err
        assert (
            not (tmp_path / "b" / "cost_vs_f1.png").exists() and (tmp_path / "b" / "leaderboard.md").exists()
        )

    def test_stats_keeps_main_and_challenging_apart_and_names_its_columns(self, tmp_path, capsys):
        rows = [make_sample(i, g, subset="main", split="test") for i, g in enumerate(TRUST_GOLD)]
        rows += [
            make_sample(20 + i, g, subset="challenging", split="dev") for i, g in enumerate(["Mixture"] * 3)
        ]
        data = tmp_path / "samples.jsonl"
        write_jsonl(data, rows)
        code, err = run_cli(capsys, "stats", data, "--out", tmp_path / "stats")
        assert code == 0, err
        stats = json.loads((tmp_path / "stats" / "stats.json").read_text())
        assert stats["labels_by_subset"] == {
            "challenging": {"Mixture": 3},
            "main": {"False": 5, "True": 3, "Unproven": 2},
        }
        assert stats["splits"] == {"main/test": 10, "challenging/dev": 3}
        md = (tmp_path / "stats" / "stats.md").read_text()
        assert "| RW-Post label | challenging | main |" in md and "| Mixture | 3 | 0 |" in md
        assert "| category | median evidence items |" in md  # was headed "count"
        assert "| evidence items per sample | samples |" in md
        assert (tmp_path / "stats" / "labels.png").stat().st_size > 0


@pytest.mark.hostile
class TestHostile:
    """Careless use that must not mislead or touch anything."""

    def test_extract_dry_run_without_a_price_says_unpriced_and_creates_nothing(
        self, tmp_path, monkeypatch, capsys, de_niro
    ):
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
        tagged = tmp_path / "tagged.jsonl"
        write_jsonl(tagged, [de_niro])
        before = sorted(tmp_path.rglob("*"))
        code, stdout, err = run_cli_out(
            capsys, "extract", "--in", tagged, "--out", tmp_path / "x", "--dry-run"
        )
        assert code == 0, err
        assert "unpriced" in stdout and "0.0" not in stdout
        assert "no price for model" in stdout
        assert sorted(tmp_path.rglob("*")) == before  # no data/cache/llm.sqlite, no --out folder
        code, err = run_cli(
            capsys, "extract", "--in", tagged, "--out", tmp_path / "x", "--dry-run", "--price-in", 1
        )
        assert code == 2 and "--price-out" in one_line(err)

    @pytest.mark.slow
    def test_sigkill_of_rwpost_crawl_leaves_no_crawler_running(self, tmp_path):
        """L1: the crawler child dies with ``rwpost crawl`` (SIGKILL cannot be forwarded, so the kernel
        kills it: ``PR_SET_PDEATHSIG``) and a rerun is not refused by an orphan's lock."""
        out = tmp_path / "c"
        with SampleServer(ROOT / "data" / "sample" / "site") as server:
            args = [
                "crawl",
                "--start-url",
                f"{server.base_url}/fact-check/",
                "--out",
                str(out),
                "--allow-loopback",
            ]
            parent = subprocess.Popen(
                cli_command(*args), cwd=tmp_path, env=child_env(), stderr=subprocess.DEVNULL
            )
            lock, deadline = out / ".crawl.lock", time.monotonic() + 120
            while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
                assert parent.poll() is None, "the crawl ended before it could be killed"
                time.sleep(0.05)
            crawler = int(lock.read_text().split()[0])
            assert crawler != parent.pid
            parent.kill()
            parent.wait()
            while _alive(crawler) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(crawler), "the crawler child outlived rwpost crawl"

    def test_from_html_does_not_follow_a_symbolic_link_out_of_the_folder(self, tmp_path, capsys):
        """L4: ``link.html -> outside`` is set aside with its reason; its bytes never reach the store."""
        saved = tmp_path / "saved"
        saved.mkdir()
        (saved / "page.html").write_bytes(DENIRO.read_bytes())
        outside = tmp_path / "outside.txt"
        outside.write_text("private text outside the folder")
        (saved / "link.html").symlink_to(outside)
        (saved / "inside.html").symlink_to(saved / "page.html")  # a link inside the folder is followed
        code, err = run_cli(capsys, "crawl", "--from-html", saved, "--out", tmp_path / "store")
        assert code == 0, err
        stored = b"".join(gzip.decompress(p.read_bytes()) for p in (tmp_path / "store" / "html").iterdir())
        assert b"private text outside the folder" not in stored
        rows = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
        assert any(
            "a symbolic link out of the folder: not followed" in (r["parse_error"] or "") for r in rows
        )
        report = json.loads((tmp_path / "store" / "report.json").read_text())
        assert report["unreadable"] == 1 and report["files"] == 3

    def test_a_sitemap_url_on_another_port_of_the_host_is_off_site(self, tmp_path):
        """L3: ``http://127.0.0.1:22/...`` in the sample site's sitemap is another service, not the site."""
        spider = SnopesSpider(start_url="http://127.0.0.1:40269/fact-check/", out_dir=str(tmp_path))
        assert spider.on_site("http://127.0.0.1:40269/fact-check/a/")
        assert not spider.on_site("http://127.0.0.1:22/fact-check/ssh/")
        assert not spider.on_site("http://127.0.0.1/fact-check/a/")
        assert not spider.on_site("http://127.0.0.1:99999/fact-check/a/")
        snopes = SnopesSpider(start_url="https://www.snopes.com/fact-check/", out_dir=str(tmp_path / "s"))
        assert snopes.on_site("https://snopes.com/fact-check/a/") and snopes.on_site(
            "http://www.snopes.com/x/"
        )
        assert not snopes.on_site("https://www.snopes.com:8443/fact-check/a/")

    def test_one_oversized_defame_field_sets_that_row_aside_not_the_file(
        self, tmp_path, samples, data, capsys
    ):
        """L5: a 200 KB justification (over the csv module's 128 KiB field limit) is one bad row."""
        path = tmp_path / "predictions.csv"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["sample_index", "claim", "target", "predicted", "justification"])
            for i, sample in enumerate(samples):
                why = "x" * 200_000 if i == 3 else f"because {i}"
                writer.writerow(
                    [i, sample.claim, "x", "REFUTED" if sample.label is Label.FALSE else "SUPPORTED", why]
                )
        id_map = tmp_path / "ids.json"
        id_map.write_text(json.dumps({str(i): s.news_url for i, s in enumerate(samples)}))
        out = tmp_path / "run"
        code, err = run_cli(
            capsys, "evaluate", "--data", data, "--predictions", path, "--id-map", id_map, "--out", out,
            "--no-progress", "--bootstrap", "5",
        )  # fmt: skip
        assert code == 0, err
        report = json.loads((out / "input_report.json").read_text())
        assert [row["line"] for row in report["bad_rows"]] == [5]  # sample 3, line 5 (the header is line 1)
        assert "field 'justification' longer than 131072 characters" in report["bad_rows"][0]["reason"]
        assert json.loads((out / "metrics.json").read_text())["coverage"]["answered"] == len(samples) - 1
        assert csv.field_size_limit() == 131072  # the csv module's limit is given back

    def test_one_malformed_line_of_a_flat_file_is_a_bad_row_not_the_run(
        self, tmp_path, samples, data, capsys
    ):
        """D13: as the other formats, a line that is not JSON is set aside (``--strict`` makes it fatal)."""
        path = tmp_path / "preds.jsonl"
        lines = [json.dumps({"id": s.id, "label": str(s.label)}) for s in samples]
        path.write_text("\n".join([lines[0], '{"id": broken', *lines[1:]]) + "\n")
        code, err = run_cli(
            capsys, "evaluate", "--data", data, "--predictions", path, "--out", tmp_path / "run"
        )
        assert code == 0, err
        report = json.loads((tmp_path / "run" / "input_report.json").read_text())
        assert [row["line"] for row in report["bad_rows"]] == [2] and "not valid JSON" in report["bad_rows"][
            0
        ]["reason"]
        assert json.loads((tmp_path / "run" / "metrics.json").read_text())["accuracy"] == 1.0
        code, err = run_cli(
            capsys,
            "evaluate",
            "--data",
            data,
            "--predictions",
            path,
            "--out",
            tmp_path / "strict",
            "--strict",
        )
        assert code == 1 and "1 bad rows" in one_line(err)

    @pytest.mark.parametrize(
        "label_map,problem",
        [
            ("1=True,0=Bogus", "'Bogus' is not a label"),
            ("=True", "an empty spelling"),
            ("a=b=c", "'b=c' is not"),
        ],
    )
    def test_a_label_map_to_no_label_is_refused(self, label_map, problem, tmp_path, samples, data, capsys):
        """L6: ``--label-map`` targets are RW-Post labels (or empty: no answer)."""
        path = tmp_path / "preds.jsonl"
        write_jsonl(path, [{"id": s.id, "verdict": 1} for s in samples])
        args = [
            "--predictions",
            path,
            "--format",
            "generic",
            "--label-field",
            "verdict",
            "--label-map",
            label_map,
        ]
        code, err = run_cli(capsys, "evaluate", "--data", data, *args, "--out", tmp_path / "run")
        assert code == 2 and problem in one_line(err) and "--label-map" in one_line(err)
        assert not (tmp_path / "run").exists()

    def test_an_unknown_news_url_is_reported_as_written(self, tmp_path, data, capsys):
        """D13: the input report names an unknown row by the URL the user wrote, not only its hashed id."""
        path = tmp_path / "preds.jsonl"
        write_jsonl(path, [{"news_url": "https://www.snopes.com/fact-check/NOT-HERE/", "label": "True"}])
        code, err = run_cli(
            capsys, "evaluate", "--data", data, "--predictions", path, "--out", tmp_path / "run"
        )
        assert code == 0, err
        [unknown] = json.loads((tmp_path / "run" / "input_report.json").read_text())["unknown_ids"]
        assert unknown["news_url"] == "https://www.snopes.com/fact-check/NOT-HERE/" and unknown["line"] == 1

    def test_a_mistyped_label_field_is_refused_not_scored_as_all_failures(
        self, tmp_path, samples, data, capsys
    ):
        """L6: ``--label-field verdcit`` is absent in every row: one line naming the option, exit 2."""
        path = tmp_path / "preds.jsonl"
        write_jsonl(path, [{"meta": {"url": s.news_url}, "out": {"verdict": str(s.label)}} for s in samples])
        common = [
            "evaluate",
            "--data",
            data,
            "--predictions",
            path,
            "--format",
            "generic",
            "--id-field",
            "meta.url",
        ]
        code, err = run_cli(capsys, *common, "--label-field", "out.verdcit", "--out", tmp_path / "bad")
        line = one_line(err)
        assert (
            code == 2
            and "no row has the field --label-field 'out.verdcit'" in line
            and "'meta', 'out'" in line
        )
        assert not (tmp_path / "bad").exists()
        # a field present in some rows only: the others are failures, as before
        rows = [{"meta": {"url": s.news_url}, **({"out": {"verdict": str(s.label)}} if i % 2 else {})}
                for i, s in enumerate(samples)]  # fmt: skip
        write_jsonl(path, rows)
        code, err = run_cli(
            capsys, *common, "--label-field", "out.verdict", "--out", tmp_path / "half", "--no-progress"
        )
        assert code == 0, err
        assert json.loads((tmp_path / "half" / "metrics.json").read_text())["coverage"]["answered"] == 5

    def test_a_duplicate_key_in_params_yaml_is_refused_naming_the_key_and_lines(self, tmp_path):
        """L8: YAML keeps the last of two equal keys silently; a stage refuses it before any work."""
        text = (ROOT / "params.yaml").read_text(encoding="utf-8")
        first = text.index("\n  bootstrap:") + 1
        line = text[:first].count("\n") + 1
        params = tmp_path / "params.yaml"
        params.write_text(text[:first] + "  bootstrap: 5\n" + text[first:], encoding="utf-8")
        with pytest.raises(
            ConfigError, match=rf":{line + 1}: duplicate key 'bootstrap' \(also on line {line}\)"
        ):
            load_params(params)
        done = subprocess.run(
            stage_command("stats", params), cwd=ROOT, env=child_env(), capture_output=True, text=True
        )
        assert done.returncode == 2 and "duplicate key 'bootstrap'" in one_line(done.stderr)
        # a YAML merge key may override what it merges: that is not a duplicate
        merged = tmp_path / "merged.yaml"
        merged.write_text("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\n", encoding="utf-8")
        assert load_params(merged)["other"] == {"x": 3, "y": 2}


OTHER = ROOT / "data" / "sample" / "released" / "rwpost_dev_other_labels.jsonl"
"""The released records with the authors' mojibake category "Risqu√© Business" (line 27)."""


@pytest.mark.cli_errors
class TestCliErrors:
    """Import: bad or careless input is one line, and what was repaired is said."""

    def test_import_repairs_mojibake_and_records_the_repair_and_export_gives_the_release_back(
        self, tmp_path, capsys
    ):
        out = tmp_path / "other.parquet"
        code, stdout, err = run_cli_out(capsys, "import-released", OTHER, "--out", out)
        assert code == 0, err
        assert "repaired mis-decoded text in 1 samples" in stdout
        assert "'Risqu√© Business' -> 'Risqué Business'" in stdout
        samples = read_samples(out)
        risque = [s for s in samples if s.category and s.category.startswith("Risqu")]
        assert [s.category for s in risque] == ["Risqué Business"]
        assert risque[0].extra["repaired_text"] == {"category": "Risqu√© Business"}
        assert not any("√" in (s.category or "") for s in samples)
        code, err = run_cli(capsys, "export-released", out, "--out", tmp_path / "back.jsonl")
        assert code == 0, err
        assert (tmp_path / "back.jsonl").read_text(encoding="utf-8").splitlines() == [
            json.dumps(json.loads(line), ensure_ascii=False)
            for line in OTHER.read_text(encoding="utf-8").splitlines()
        ]  # the authors' bytes back: the release itself is never rewritten

    def test_a_null_evidence_url_stays_null_through_demo_and_flat(self, tmp_path, capsys):
        sample = make_sample(1, "False", evidence=[Evidence(id=1, type="Text", content="c", url=None)])
        write_jsonl(tmp_path / "s.jsonl", [sample])
        flat = tmp_path / "flat.jsonl"
        assert (
            run_cli(capsys, "export-released", tmp_path / "s.jsonl", "--out", flat, "--format", "flat")[0]
            == 0
        )
        assert json.loads(flat.read_text())["fact_checking_evidence"][0]["url"] is None

    def test_an_empty_release_is_refused_in_one_line(self, tmp_path, capsys):
        empty = tmp_path / "empty.jsonl"
        empty.write_text("\n\n")
        code, err = run_cli(capsys, "import-released", empty, "--out", tmp_path / "e.parquet")
        assert code == 1 and "empty.jsonl: no records to import" in one_line(err)
        assert not (tmp_path / "e.parquet").exists()
        bad = tmp_path / "bad.jsonl"
        bad.write_text("{nope\n")
        code, err = run_cli(capsys, "import-released", bad, "--out", tmp_path / "b.parquet", "--skip-bad")
        assert code == 1 and "no records to import (all 1 set aside in" in one_line(err)
        assert (tmp_path / "b.rejects.jsonl").exists() and not (tmp_path / "b.parquet").exists()

    def test_stats_refuses_an_existing_report_before_printing_anything(self, tmp_path, capsys):
        assert run_cli(capsys, "stats", DEV, "--out", tmp_path / "s")[0] == 0
        code, stdout, err = run_cli_out(capsys, "stats", DEV, "--out", tmp_path / "s")
        assert code == 2 and "stats.json: already exists" in one_line(err) and stdout == ""

    def test_rejects_help_names_the_default_file(self, capsys, monkeypatch):
        monkeypatch.setenv("COLUMNS", "200")
        code, stdout, _ = run_cli_out(capsys, "import-released", "--help")
        assert code == 0 and "dev.parquet -> dev.rejects.jsonl" in " ".join(stdout.split())

    def test_a_second_import_into_the_same_out_is_refused_while_the_first_runs(self, tmp_path, capsys):
        out = tmp_path / "dev.parquet"
        with folder_lock(tmp_path, f".{out.name}.lock"):  # the first import, still writing
            code, err = run_cli(capsys, "import-released", DEV, "--out", out)
        assert code == 1 and f"is being written by PID {os.getpid()}" in one_line(err)
        assert not out.exists()
        assert run_cli(capsys, "import-released", DEV, "--out", out)[0] == 0
        code, err = run_cli(capsys, "import-released", DEV, "--out", out)  # the second one, after it
        assert code == 2 and "already exists" in one_line(err)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.parquet"]  # no lock left behind


TYPED_OPTIONS = [
    (
        ["--detector", "agentfact", "--set", "stop_confidence=abc"],
        "stop_confidence: Input should be a valid integer",
    ),
    (["--detector", "agentfact", "--set", "max_steps=-5"], "max_steps: Input should be greater than 0"),
    (["--detector", "agentfact", "--set", "timeout_s=0"], "timeout_s must be a number of seconds above 0"),
    (
        ["--detector", "vlm", "--set", "timeout_s=nan"],
        "timeout_s must be a number of seconds above 0, got nan",
    ),
    (["--detector", "vlm", "--set", "max_new_tokens=0"], "max_new_tokens: Input should be greater than 0"),
    (["--detector", "vlm", "--set", "prompt=../../../etc/passwd"], "prompt: expected the name of a prompt"),
    (["--detector", "vlm", "--set", "prompt=/etc/passwd"], "prompt: expected the name of a prompt"),
    (["--detector", "stratified", "--seed", "-1"], "--seed: Input should be greater than or equal to 0"),
    (["--detector", "stratified", "--seed", str(2**64)], "--seed: Input should be less than or equal to"),
    (["--detector", "majority", "--setting", "T+E", "--k", "1", "--evidence-seed", "-1"], "--evidence-seed:"),
    (
        ["--detector", "majority", "--setting", "T+E", "--k", "99999999999999999999"],
        "--k: Input should be less",
    ),
    (["--detector", "majority", "--setting", "T", "--k", "1"], "--k 1 needs a gold-evidence cell"),
    (["--detector", "agentfact", "--set", "min_pool=-1"], "min_pool: Input should be greater than 0"),
    (["--detector", "agentfact", "--set", "subset_size=0"], "subset_size: Input should be greater than 0"),
    (["--detector", "agentfact", "--set", "max_replans=-1"], "max_replans: Input should be greater than or"),
    (
        ["--detector", "agentfact", "--set", "results_per_query=-3"],
        "results_per_query: Input should be greater",
    ),
    (
        ["--detector", "agentfact", "--set", "stop_confidence=9"],
        "stop_confidence: Input should be less than or",
    ),
    (
        ["--detector", "agentfact", "--set", "temperature=5"],
        "temperature: Input should be less than or equal",
    ),
    (["--detector", "vlm", "--set", "temperature=-1"], "temperature: Input should be greater than or equal"),
    (
        ["--detector", "vlm", "--set", "backend=local", "--set", "static_cache=maybe"],
        "static_cache: Input should",
    ),
    (["--detector", "vlm", "--set", "backend=local", "--set", "device=meta"], "device: String should match"),
]


@pytest.mark.cli_errors
class TestTypedOptions:
    """A detector or run option that cannot mean what was meant is one line naming it, exit 2, and
    nothing is written (the run folder is not even created)."""

    @pytest.mark.parametrize("args,problem", TYPED_OPTIONS, ids=[" ".join(a[1:]) for a, _ in TYPED_OPTIONS])
    def test_refused_in_one_line_before_anything_is_written(
        self, args, problem, tmp_path, capsys, monkeypatch
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        data = tmp_path / "data.jsonl"
        write_jsonl(data, [make_sample(i, g) for i, g in enumerate(TRUST_GOLD)])
        common = ["evaluate", "--data", data, "--out", tmp_path / "out", "--train-fraction", "0.5"]
        code, err = run_cli(capsys, *common, "--model", "m", "--no-progress", *args)
        assert code == 2 and problem in one_line(err)
        assert not (tmp_path / "out").exists()

    def test_compare_refuses_a_negative_seed(self, tmp_path, capsys):
        code, err = run_cli(capsys, "compare", tmp_path / "a", tmp_path / "b", "--seed", "-1")
        assert code == 2 and "--seed: Input should be greater than or equal to 0" in one_line(err)

    def test_params_refuse_a_negative_seed_and_a_huge_k(self):
        from rwpost.evaluate.shards import EvaluateSettings

        for bad in ({"seed": -1}, {"evidence_seed": -1}, {"k": [10**20]}):
            with pytest.raises(ValidationError):
                EvaluateSettings.model_validate(bad)


@pytest.mark.cli_errors
def test_help_is_readable_at_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, stdout, _ = run_cli_out(capsys, "evaluate", "--help")
    assert code == 0 and "rwpost.detectors" in stdout and "…" not in stdout
    assert all(len(line) <= 80 for line in stdout.splitlines())
