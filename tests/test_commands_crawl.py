"""The crawl and sample commands (rwpost.commands.crawl): options, saved pages, the sample site."""

from __future__ import annotations

import gzip
import json
import socket

import pytest
from typer.testing import CliRunner

from rwpost.cli import app
from tests.conftest import (
    DENIRO,
    DENIRO_URL,
    DEV,
    FIXTURES,
    LATE,
    import_and_tag,
    one_line,
    read_rows,
    run_cli,
)

LOOP = ["--start-url", "http://127.0.0.1:9/", "--allow-loopback"]


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    def test_sample_serve_on_a_port_in_use_is_one_line(self, capsys):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            code, err = run_cli(capsys, "sample", "serve", "--port", port)
        assert code == 2
        line = one_line(err)
        assert f"127.0.0.1:{port}" in line and "in use" in line

    @pytest.mark.parametrize(
        ("args", "problem"),
        [
            (["--start-url", "notaurl"], "--start-url: expected an http(s) URL, got 'notaurl'"),
            (["--start-url", "http://127.0.0.1:9/"], "is a loopback address: pass --allow-loopback"),
            (["--start-url", "https://www.snopes.com/"], "--contact is required for a crawl of the real web"),
            ([*LOOP, "--since", "2030-13-01"], "--since: expected a date like 2017-01-01"),
            ([*LOOP, "--max-articles", "-3"], "--max-articles: expected 0 (no limit) or more, got -3"),
            ([*LOOP, "--delay", "-0.5"], "--delay: expected 0 or more seconds, got -0.5"),
            (
                [*LOOP, "--since", "2020-01-01", "--until", "2010-01-01"],
                "--until 2010-01-01 is before --since",
            ),
        ],
    )
    def test_crawl_options_are_checked_before_anything_starts(self, tmp_path, capsys, args, problem):
        """Each bad option is one line naming it, exit 2, before a connection or an output folder."""
        out = tmp_path / "crawl"
        code, err = run_cli(capsys, "crawl", *args, "--out", out)
        line = one_line(err)
        assert code == 2 and problem in line, line
        assert not out.exists()


@pytest.mark.overwrite
class TestOverwrite:
    """No command writes over one of its inputs, or over an existing file unless asked (``--overwrite``);
    ``extract`` resumes into its folder and ``filter run`` reruns into its folder, as documented."""

    def test_sample_build_refuses_a_non_empty_site_folder_and_the_released_folder(self, tmp_path, capsys):
        site = tmp_path / "site"
        site.mkdir()
        (site / "keep.txt").write_text("mine", encoding="utf-8")
        code, err = run_cli(capsys, "sample", "build", "--out", site)
        assert code == 2 and "already holds files" in err and len(err.strip().splitlines()) == 1
        assert (site / "keep.txt").read_text(encoding="utf-8") == "mine"
        code, err = run_cli(capsys, "sample", "build", "--out", DEV.parent / "site")
        assert code == 2 and "inside the released records folder" in err
        assert not (DEV.parent / "site").exists()


CITED = "https://web.archive.org/web/20250303120000/https://x.com/sot6ixtv/status/1896415374754918673"
"""An archived copy of a source, cited in the article the way Snopes cites them."""


@pytest.mark.hostile
class TestHostile:
    """The dataset-building commands (crawl --from-html, reformat, extract, filter, sample, annotate) used the
    way a demanding or hostile user would: real files, real subprocesses, the real command line."""

    def test_a_saved_page_citing_an_archived_source_is_not_taken_for_a_wayback_capture(self, tmp_path):
        """A saved Snopes page whose body links a web.archive.org copy of a source (Snopes does this all the
        time) is the page itself, not a capture: its URL stays the one its index gives (not the archived
        source's) and the archive link stays in the article as the evidence it is."""
        saved = tmp_path / "saved"
        saved.mkdir()
        page = DENIRO.read_text(encoding="utf-8")
        assert "https://archive.li/kghRH" in page
        (saved / "deniro.html").write_text(page.replace("https://archive.li/kghRH", CITED), encoding="utf-8")
        (saved / "index.json").write_text(json.dumps([{"file": "deniro.html", "url": DENIRO_URL}]))
        report, stored, article = import_and_tag(saved, tmp_path)
        assert report["wayback"] == 0
        assert stored["url"] == DENIRO_URL and stored["parse_error"] is None
        assert CITED in [link["url"] for link in article["links"]]
        assert f"WEBPAGE 3: {CITED}]" in article["text"]

    def test_a_wayback_capture_keeps_the_archive_links_the_page_itself_made(self, tmp_path):
        """A real capture (toolbar, rewrite script, every URL behind the archive's prefix) of a page that
        cites an archived copy: the archive's prefix is undone once, so the page's own archive link survives,
        and the captured URL is the one the rewrite script names (not the first archived URL in the file)."""
        saved = tmp_path / "saved"
        saved.mkdir()
        stamp = "https://web.archive.org/web/20250304000000"
        page = DENIRO.read_text(encoding="utf-8").replace("https://archive.li/kghRH", CITED)
        page = page.replace('href="https://', f'href="{stamp}/https://').replace(
            'src="https://', f'src="{stamp}im_/https://'
        )
        script = (
            f'<script>__wm.init("https://web.archive.org/web");\n__wm.wombat("{DENIRO_URL}",'
            '"20250304000000","https://web.archive.org/","web","/_static/");</script>'
        )
        toolbar = "<!-- BEGIN WAYBACK TOOLBAR INSERT --><div>toolbar</div><!-- END WAYBACK TOOLBAR INSERT -->"
        page = page.replace("<body", script + toolbar + "<body", 1)
        (saved / "capture.html.gz").write_bytes(gzip.compress(page.encode("utf-8")))
        report, stored, article = import_and_tag(saved, tmp_path)
        assert report["wayback"] == 1
        assert stored["url"] == DENIRO_URL and stored["parse_error"] is None
        urls = [link["url"] for link in article["links"]]
        assert CITED in urls
        assert not any(url.startswith(stamp) for url in urls)

    def test_an_import_into_a_store_inside_the_saved_pages_folder_does_not_read_its_own_store(self, tmp_path):
        """``--out`` inside ``--from-html`` (or the same folder): a rerun reads the saved pages again, never
        the store's own ``html/<sha>.html.gz`` as more saved pages (each page without a canonical link became
        a second record under a stand-in URL)."""
        runner = CliRunner()
        for case, inside in (("sub", "store"), ("same", ".")):
            saved = tmp_path / case
            saved.mkdir()
            (saved / "deniro.html").write_text(DENIRO.read_text(encoding="utf-8"), encoding="utf-8")
            store = saved / inside
            for _ in range(2):
                args = ["crawl", "--from-html", str(saved), "--out", str(store), "--json"]
                result = runner.invoke(app, args)
                assert result.exit_code == 0, result.output
                report = json.loads((store / "report.json").read_text())
                assert (report["files"], report["store_articles"], report["duplicates"]) == (1, 1, 0)
            [row] = read_rows(store / "articles.jsonl")
            assert row["url"] == "https://saved-page.invalid/deniro.html"


def test_an_unreadable_saved_page_is_set_aside_with_its_reason(tmp_path):
    """A cut-short ``.html.gz`` among saved pages: the import goes on (the real page is stored as usual);
    the damaged file becomes a record with its reason, which reformat sets aside, never a traceback."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "late.html").write_text(LATE.read_text(encoding="utf-8"), encoding="utf-8")
    page = LATE.read_bytes()
    (saved / "cut.html.gz").write_bytes(gzip.compress(page)[:4000])  # a download cut short
    runner = CliRunner()
    crawled = runner.invoke(app, ["crawl", "--from-html", str(saved), "--out", str(tmp_path / "store")])
    assert crawled.exit_code == 0, crawled.output
    rows = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    bad = next(row for row in rows if row["url"].endswith("/cut.html.gz"))
    assert bad["parse_error"].startswith("unreadable saved page: EOFError")
    report = json.loads((tmp_path / "store" / "report.json").read_text())
    assert (report["files"], report["stored_ok"], report["unreadable"]) == (2, 1, 1)
    out = tmp_path / "tagged"
    reformatted = runner.invoke(app, ["reformat", "--in", str(tmp_path / "store"), "--out", str(out)])
    assert reformatted.exit_code == 0, reformatted.output
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rejects] == [bad["id"]]
    assert "unreadable saved page" in json.dumps(rejects[0])


def test_an_index_json_that_gives_no_url_is_said_not_skipped(tmp_path):
    """The authors' gold folder lists pages by ``slug``, not ``file``: such an index gives no page its URL.
    The import says which index entry it could not use (in the command's output and the page's reason),
    where it used to say only "give it in an index.json beside it" with one right there."""
    saved = tmp_path / "saved"
    saved.mkdir()
    gold = FIXTURES / "2018" / "with-rwpost-gold"
    slug = "liberals-protesting-trump-photo"
    (saved / f"{slug}.fragment.html").write_bytes((gold / f"{slug}.fragment.html").read_bytes())
    (saved / "index.json").write_text(
        json.dumps([{"slug": slug, "url": f"https://www.snopes.com/fact-check/{slug}/"},
                    {"file": "missing.html", "url": "https://www.snopes.com/fact-check/missing/"}])
    )  # fmt: skip
    result = CliRunner().invoke(app, ["crawl", "--from-html", str(saved), "--out", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    assert 'index not used: index.json: entry 1 has no "file" and "url"' in result.output
    assert "index not used: index.json: entry 2: no such file missing.html" in result.output
    report = json.loads((tmp_path / "store" / "report.json").read_text())
    assert report["index_problems"] == 2 and len(report["index_problem_lines"]) == 2
    (row,) = [json.loads(line) for line in (tmp_path / "store" / "articles.jsonl").read_text().splitlines()]
    assert row["parse_error"].startswith("no URL") and "entry 1" in row["parse_error"]
