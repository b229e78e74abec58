"""The dataset-building commands (crawl --from-html, reformat, extract, filter, sample, annotate) used the
way a demanding or hostile user would: real files, real subprocesses, the real command line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from rwpost.cli import app

FIXTURES = Path(__file__).parent / "fixtures" / "snopes_html"
DENIRO = FIXTURES / "robert-de-niro-trump-oscars.html"
DENIRO_URL = "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/"
CITED = "https://web.archive.org/web/20250303120000/https://x.com/sot6ixtv/status/1896415374754918673"
"""An archived copy of a source, cited in the article the way Snopes cites them."""


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _import_and_tag(saved: Path, tmp_path: Path) -> tuple[dict, dict, dict]:
    """``rwpost crawl --from-html`` then ``rwpost reformat``: the import report, the stored record and the
    tagged article."""
    runner = CliRunner()
    store, tagged = tmp_path / "store", tmp_path / "tagged"
    crawled = runner.invoke(app, ["crawl", "--from-html", str(saved), "--out", str(store), "--json"])
    assert crawled.exit_code == 0, crawled.output
    reformatted = runner.invoke(app, ["reformat", "--in", str(store), "--out", str(tagged)])
    assert reformatted.exit_code == 0, reformatted.output
    [stored] = _rows(store / "articles.jsonl")
    [article] = _rows(tagged / "articles.jsonl")
    return json.loads((store / "report.json").read_text()), stored, article


def test_a_saved_page_citing_an_archived_source_is_not_taken_for_a_wayback_capture(tmp_path):
    """A saved Snopes page whose body links a web.archive.org copy of a source (Snopes does this all the
    time) is the page itself, not a capture: its URL stays the one its index gives (not the archived
    source's) and the archive link stays in the article as the evidence it is."""
    saved = tmp_path / "saved"
    saved.mkdir()
    page = DENIRO.read_text(encoding="utf-8")
    assert "https://archive.li/kghRH" in page
    (saved / "deniro.html").write_text(page.replace("https://archive.li/kghRH", CITED), encoding="utf-8")
    (saved / "index.json").write_text(json.dumps([{"file": "deniro.html", "url": DENIRO_URL}]))
    report, stored, article = _import_and_tag(saved, tmp_path)
    assert report["wayback"] == 0
    assert stored["url"] == DENIRO_URL and stored["parse_error"] is None
    assert CITED in [link["url"] for link in article["links"]]
    assert f"WEBPAGE 3: {CITED}]" in article["text"]


def test_a_wayback_capture_keeps_the_archive_links_the_page_itself_made(tmp_path):
    """A real capture (toolbar, rewrite script, every URL behind the archive's prefix) of a page that cites
    an archived copy: the archive's prefix is undone once, so the page's own archive link survives, and
    the captured URL is the one the rewrite script names (not the first archived URL in the file)."""
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
    report, stored, article = _import_and_tag(saved, tmp_path)
    assert report["wayback"] == 1
    assert stored["url"] == DENIRO_URL and stored["parse_error"] is None
    urls = [link["url"] for link in article["links"]]
    assert CITED in urls
    assert not any(url.startswith(stamp) for url in urls)


def test_a_rerun_of_extract_does_not_set_aside_the_same_bad_input_line_again(tmp_path):
    """``rwpost extract`` resumes into its folder; the input lines it set aside (a line cut short, a record
    that does not validate) are in rejects.jsonl once, however often it is rerun, and the summary counts
    them once."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "deniro.html").write_text(DENIRO.read_text(encoding="utf-8"), encoding="utf-8")
    (saved / "index.json").write_text(json.dumps([{"file": "deniro.html", "url": DENIRO_URL}]))
    _import_and_tag(saved, tmp_path)
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
    rejects = _rows(out / "rejects.jsonl")
    assert sorted(str(r["id"]) for r in rejects) == ["None", "rw-not-an-article"]
    assert len(_rows(out / "extractions.jsonl")) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["extracted"], summary["set_aside"]) == (1, 2)


def test_an_import_into_a_store_inside_the_saved_pages_folder_does_not_read_its_own_store(tmp_path):
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
        [row] = _rows(store / "articles.jsonl")
        assert row["url"] == "https://saved-page.invalid/deniro.html"


def test_annotate_merge_sets_aside_a_second_record_with_the_same_id(tmp_path):
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
    samples = _rows(out / "samples.jsonl")
    assert len(samples) == 2 and len({s["id"] for s in samples}) == 2
    [reject] = _rows(out / "rejects.jsonl")
    assert reject["line"] == 3 and reject["id"] in {s["id"] for s in samples}
    assert "duplicate id (first on line 1)" in reject["reason"]
