"""Fixtures and helpers shared by the test modules (STYLE.md 9): the repository's paths and params, real
Snopes pages as a crawl store, samples written to a data file, in-process command-line runs (`run_cli`,
`one_line`), the `rwpost evaluate` command line with the options every scoring test uses, a free loopback
port, and the crawled sample pipeline the kill tests start from."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rwpost.cli import app, main
from rwpost.crawl import run_crawl
from rwpost.ids import record_id
from rwpost.io import sha256_hex, write_jsonl
from rwpost.records import CrawledArticle, TaggedArticle
from rwpost.rwpost_format import read_released
from rwpost.sample.serve import SampleServer
from rwpost.stages.base import load_params
from rwpost.tagged import tag_article
from tests.killing import SITE, child_env, crawl_options, run_to_end, stage_command, write_params

ROOT = Path(__file__).resolve().parents[1]
"""The repository."""
sys.path.insert(0, str(ROOT / "crawlers"))  # the Scrapy project, imported as `snopes_crawler`
PARAMS = load_params(ROOT / "params.yaml")
"""The repository's params.yaml, read as the stages read it."""
RELEASED_DIR = ROOT / "data" / "sample" / "released"
"""The authors' released records of the bundled sample."""
FIXTURES = Path(__file__).parent / "fixtures" / "snopes_html"
REAL_PAGES = {
    "robert-de-niro-trump-oscars": "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/",
    "house-resolution-piker-antisemitism": "https://www.snopes.com/fact-check/house-resolution-piker-antisemitism/",
}
"""The two whole real 2025-2026 pages (head and body slices, see fixtures/snopes_html/SOURCES.md)."""


ERA_2018 = FIXTURES / "2018"
"""The real 2018 pages (issue 17): early microdata pages and one late page, with hand-labelled gold."""
LATE = ERA_2018 / "2018-11_christmas-story-marathon-tbs.html"
LATE_URL = "https://www.snopes.com/fact-check/christmas-story-marathon-tbs/"


def _early_pages() -> list[dict]:
    pages = json.loads((ERA_2018 / "index.json").read_text(encoding="utf-8"))
    gold = json.loads((ERA_2018 / "with-rwpost-gold" / "index.json").read_text(encoding="utf-8"))
    pages += [dict(e, file=f"2018/with-rwpost-gold/{e['slug']}.fragment.html") for e in gold]
    return pages


EARLY = _early_pages()
"""The early 2018 pages' index entries (slug, url, file), the gold-labelled fragments included."""
NOT_TEXT = (
    "CLAIM",
    "RATING",
    "About this rating",
    "More From Snopes",
    "Loading...",
    "Filed Under",
    "Sources:",
)
"""Box and navigation text that must never reach an article's tagged text."""


def real_page(name: str) -> str:
    """A real page as one document: its saved ``<head>`` slice followed by its ``<body>`` slice."""
    return (FIXTURES / f"{name}.head.html").read_text(encoding="utf-8") + (
        FIXTURES / f"{name}.html"
    ).read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def _no_default_answer_cache(monkeypatch):
    """No shared answer cache between tests: an API detector's run caches its answers in the project's
    ``data/cache/llm.sqlite`` by default (``RWPOST_LLM_CACHE``), which would let one test's answers
    answer another's requests. A test of that default sets the variable itself."""
    monkeypatch.setenv("RWPOST_LLM_CACHE", "none")


@pytest.fixture(scope="module")
def de_niro() -> TaggedArticle:
    """The real De Niro page, tagged."""
    return tag_article(real_page("robert-de-niro-trump-oscars"), REAL_PAGES["robert-de-niro-trump-oscars"])


@pytest.fixture(scope="module")
def piker() -> TaggedArticle:
    """The real Piker resolution page, tagged."""
    return tag_article(
        real_page("house-resolution-piker-antisemitism"), REAL_PAGES["house-resolution-piker-antisemitism"]
    )


def write_real_crawl_store(root: Path, extra: list[CrawledArticle] = ()) -> Path:
    """A crawl store as the crawler writes it (articles.jsonl + html/<sha>.html.gz) of the real pages,
    plus ``extra`` records."""
    rows = []
    for name, url in REAL_PAGES.items():
        body = real_page(name).encode("utf-8")
        sha = sha256_hex(body)
        (root / "html").mkdir(parents=True, exist_ok=True)
        (root / "html" / f"{sha}.html.gz").write_bytes(gzip.compress(body))
        rows.append(
            CrawledArticle(
                id=record_id(url),
                url=url,
                http_status=200,
                fetched_at=datetime(2026, 5, 3, tzinfo=UTC),
                html_sha256=sha,
                html_path=f"html/{sha}.html.gz",
            )
        )
    write_jsonl(root / "articles.jsonl", [*rows, *extra])
    return root


def crawl_store(root: Path) -> Path:
    """The real pages' crawl store plus a record whose HTML is missing and one the crawler failed to parse."""
    missing = "https://www.snopes.com/fact-check/missing-html/"
    broken = "https://www.snopes.com/fact-check/broken/"
    fetched = datetime(2026, 5, 3, tzinfo=UTC)
    extra = [
        CrawledArticle(id=record_id(missing), url=missing, http_status=200, fetched_at=fetched),
        CrawledArticle(
            id=record_id(broken),
            url=broken,
            http_status=200,
            fetched_at=fetched,
            parse_error="no claim found",
        ),
    ]
    return write_real_crawl_store(root, extra)


def free_port(host: str = "127.0.0.1") -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


DEV = RELEASED_DIR / "rwpost_dev_main.head.jsonl"
"""The released dev records' head: real input for the command-line tests."""


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    """Exit code and stderr of one in-process run of the command line."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def run_cli_out(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one in-process run of the command line."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    """The one line of an error output; fails on more lines, a traceback or an internal error."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


def released_lines(n: int = 3) -> list[bytes]:
    """The first ``n`` lines of :data:`DEV`, as bytes."""
    return DEV.read_bytes().splitlines(keepends=True)[:n]


@pytest.fixture
def data(tmp_path, samples) -> Path:
    """The test module's ``samples`` written to a JSONL data file."""
    path = tmp_path / "samples.jsonl"
    write_jsonl(path, samples)
    return path


@pytest.fixture
def evaluate_cli() -> Callable[..., None]:
    """Run ``rwpost evaluate ARGS`` without bootstrap, progress or key points; it must exit 0."""

    def run(*args: str) -> None:
        assert main(["evaluate", *args, "--bootstrap", "0", "--no-progress", "--no-key-points"]) == 0

    return run


def released_records():
    """The released dev records of the bundled sample (main head and other labels)."""
    return read_released(RELEASED_DIR / "rwpost_dev_main.head.jsonl") + read_released(
        RELEASED_DIR / "rwpost_dev_other_labels.jsonl"
    )


DENIRO = FIXTURES / "robert-de-niro-trump-oscars.html"


DENIRO_URL = "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/"


def read_rows(path: Path) -> list[dict]:
    """The JSON lines of ``path``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def import_and_tag(saved: Path, tmp_path: Path) -> tuple[dict, dict, dict]:
    """``rwpost crawl --from-html`` then ``rwpost reformat``: the import report, the stored record and the
    tagged article."""
    runner = CliRunner()
    store, tagged = tmp_path / "store", tmp_path / "tagged"
    crawled = runner.invoke(app, ["crawl", "--from-html", str(saved), "--out", str(store), "--json"])
    assert crawled.exit_code == 0, crawled.output
    reformatted = runner.invoke(app, ["reformat", "--in", str(store), "--out", str(tagged)])
    assert reformatted.exit_code == 0, reformatted.output
    [stored] = read_rows(store / "articles.jsonl")
    [article] = read_rows(tagged / "articles.jsonl")
    return json.loads((store / "report.json").read_text()), stored, article


def params_with(section: str, **values: object) -> dict:
    """:data:`PARAMS` with ``values`` set in its ``section``."""
    return {**PARAMS, section: {**PARAMS[section], **values}}


@pytest.fixture(scope="session")
def sample_crawl(tmp_path_factory) -> Path:
    """One uninterrupted crawl of the sample site by the real spider (``crawl_options``): the store that a
    stopped and resumed crawl must equal, and the kill tests' pipeline input. Read only."""
    out = tmp_path_factory.mktemp("pipeline") / "crawl"
    with SampleServer(SITE) as server:
        run_crawl(crawl_options(server, out))
    return out


@pytest.fixture(scope="session")
def sample_pipeline(sample_crawl) -> Path:
    """:func:`sample_crawl`, then the reformat and offline extract stages beside it (the kill tests'
    input)."""
    root = sample_crawl.parent
    params = write_params(
        root,
        reformat={"crawl": str(root / "crawl"), "out": str(root / "tagged")},
        extract={
            "input": str(root / "tagged" / "articles.jsonl"),
            "out": str(root / "extract"),
            "backend": "offline",
            "cache": str(root / "unused.sqlite"),
        },
    )
    for stage in ("reformat", "extract"):
        run_to_end(stage_command(stage, params), cwd=ROOT, env=child_env())
    return root


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    """The session's one real Label Studio (tests/annotate_live.py), shared by the live annotation tests of
    every module: starting one takes about a minute."""
    from tests.annotate_live import running_label_studio

    with running_label_studio(tmp_path_factory.mktemp("label-studio")) as server:
        yield server


def run_command_as_user(cmd: list[str], cwd: Path) -> str:
    """Run ``cmd`` in ``cwd`` as a user would (this Python's tools first, offline, no LLM key); its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RWPOST_LLM_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(cwd)
    env["HF_DATASETS_OFFLINE"] = "1"
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def clean_checkout(dest: Path) -> Path:
    """The repository's committed and new (not ignored) files copied to ``dest``, with no build outputs."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in files:
        if (ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).symlink_to(os.readlink(ROOT / rel))
        elif (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    (dest / "dvc.lock").unlink(missing_ok=True)
    run_command_as_user(["git", "init", "-q"], dest)
    return dest


@pytest.fixture(scope="session")
def cli_built_sample(tmp_path_factory) -> Path:
    """A clean checkout in which the bundled sample is built from the command line, every option at its
    default but --no-throttle (the site is served on 127.0.0.1, where waiting between requests only slows
    the build). tests/e2e/test_build_sample.py checks it equals `dvc repro`'s build; the view tests serve
    its outputs. Read only."""
    root = clean_checkout(tmp_path_factory.mktemp("cli"))
    rwpost = [sys.executable, "-m", "rwpost.cli"]
    run_command_as_user([*rwpost, "crawl", "--no-throttle"], root)
    run_command_as_user([*rwpost, "reformat"], root)
    run_command_as_user([*rwpost, "extract"], root)
    run_command_as_user([*rwpost, "filter", "run"], root)
    for stage in ("assemble", "annotate_merge", "split"):
        run_command_as_user([sys.executable, "-m", f"pipelines.{stage}"], root)
    return root


# The suite runs on two workers (pytest-xdist, `--dist loadgroup`: the Makefile's test command). Tests that
# use one of the session's expensive fixtures go to one worker, so each fixture is built once per run (one
# Label Studio server, one crawled or built sample, one e2e checkout), as on one worker; fixtures that one
# test uses together (the built sample and the checkout) are one group. A test that asks for such a fixture
# at run time (request.getfixturevalue) names it with the marker `session_fixtures("name", ...)`.
SESSION_GROUPS = {
    "live": "label-studio",
    "sample_crawl": "sample",
    "sample_pipeline": "sample",
    "cli_built_sample": "built-sample",
    "checkout": "checkout",
}


def _session_groups(item) -> set[str]:
    names = set(getattr(item, "fixturenames", ()))
    for mark in item.iter_markers("session_fixtures"):
        names.update(mark.args)
    return {SESSION_GROUPS[name] for name in names if name in SESSION_GROUPS}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the marks into the groups' node ids
def pytest_collection_modifyitems(config, items):
    joined = {group: {group} for group in SESSION_GROUPS.values()}  # each group's connected component
    found = [(item, _session_groups(item)) for item in items]
    for _, groups in found:
        component = set().union(*(joined[group] for group in groups)) if groups else set()
        for group in component:
            joined[group] = component
    for item, groups in found:
        if groups:
            item.add_marker(pytest.mark.xdist_group("+".join(sorted(joined[next(iter(groups))]))))


def pytest_runtest_setup(item):
    """On a worker of `--dist loadgroup`, a grouped test's node id must carry its group: when it does not (as
    with pytest 9.2 and pytest-xdist 3.8, pytest-xdist#1386), the group's tests are scattered over the workers
    and fail by order, so each fails here with the reason instead."""
    mark = item.get_closest_marker("xdist_group")
    grouping = getattr(item.config.option, "loadgroup", False)
    if grouping and mark and not item.nodeid.endswith(f"@{mark.args[0]}"):
        pytest.fail(
            f"pytest-xdist did not keep group {mark.args[0]!r}: this pytest and pytest-xdist do not work"
            " together for --dist loadgroup (pytest-xdist#1386); install the dev extra's pins",
            pytrace=False,
        )
