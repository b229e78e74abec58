"""Open-web leakage safety: fact-check domains and post-claim results are filtered, citations audited."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.detectors.agentfact.sources import SCRAPE_FAILURE_LIST
from rwpost.evaluate.leakage import BlockList, LeakageGuard, SearchResult, audit
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import make_sample

RELEASED_BLOCKLIST = SCRAPE_FAILURE_LIST  # the authors' released blocked_domains.txt, as a user-given list
ROOT = Path(__file__).resolve().parents[1]


def test_audit_flags_predictions_citing_snopes_or_politifact():
    blocklist = BlockList.from_file(RELEASED_BLOCKLIST)
    predictions = [
        Prediction(id="a", label=Label.FALSE, evidence_urls=["https://www.snopes.com/fact-check/x/"]),
        Prediction(
            id="b", label=Label.TRUE, evidence_urls=["https://example.org/1", "http://politifact.com/y"]
        ),
        Prediction(id="c", label=Label.TRUE, evidence_urls=["https://apnews.com/article/z"]),
        Prediction(id="d", label=Label.TRUE, explanation="As https://media.snopes.com/q shows, it is true."),
        Prediction(id="e", label=Label.TRUE, evidence_urls=["https://www.reuters.com/fact-check/abc"]),
    ]
    flags = audit(predictions, blocklist)
    assert sorted(flags) == ["a", "b", "c", "d", "e"]  # apnews: the authors' code's substring (issue 24)
    assert flags["a"].domains == ("snopes.com",)
    assert flags["b"].urls == ("http://politifact.com/y",)
    assert flags["d"].domains == ("snopes.com",)  # a URL written in the explanation counts too


def test_released_block_list_is_loaded_on_top_of_the_built_in_fact_checkers():
    blocklist = BlockList.from_file(RELEASED_BLOCKLIST)
    assert blocklist.blocked_domain("https://boards.4chan.org/pol/") == "boards.4chan.org"  # from the file
    assert blocklist.blocked_domain("https://www.snopes.com/") == "snopes.com"  # built in
    assert (
        blocklist.blocked_domain("https://example.org/snopesish") == "example.org"
    )  # paper's substring rule
    assert blocklist.blocked_domain("https://nasa.gov/") is None


def test_the_built_in_fact_checkers_are_the_default_wherever_the_command_runs(tmp_path):
    import subprocess
    import sys

    code = (
        "import json; from rwpost.evaluate.leakage import BlockList; "
        "print(json.dumps(BlockList().describe()))"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    # issue 24: the authors' scrape-failure list is no leakage list; the default is the fact-checkers only
    assert described["count"] == 37
    assert described["count"] == len(BlockList().domains) and len(described["sha256"]) == 64
    assert BlockList().blocked_domain("https://boards.4chan.org/pol/") is None
    # package data: the wheel ships every file of rwpost/ (hatchling's packages), the authors' lists included;
    # tests/e2e/test_wheel_install.py evaluates from the installed wheel with this default list
    assert 'packages = ["rwpost"' in (ROOT / "pyproject.toml").read_text()
    assert all((ROOT / "rwpost" / "evaluate" / name).is_file() for name in ("authors_scrape_failures.txt",))


def test_the_guard_drops_blocked_domains_and_results_after_the_claim_time_saying_why():
    results = [
        SearchResult("https://www.snopes.com/fact-check/a/", published=date(2019, 1, 1)),
        SearchResult("https://factcheck.org/b", published=None),
        SearchResult("https://news.example/old", published=date(2019, 12, 31)),
        SearchResult("https://news.example/new", published=datetime(2020, 1, 2, 8, 0)),
        SearchResult("https://news.example/undated"),
    ]
    screened = LeakageGuard().screen(results, claim_time=date(2020, 1, 1))
    assert [r.url for r in screened.kept] == ["https://news.example/old", "https://news.example/undated"]
    assert [(d.result.url, d.reason) for d in screened.dropped] == [
        ("https://www.snopes.com/fact-check/a/", "blocked:snopes.com"),
        ("https://factcheck.org/b", "blocked:factcheck.org"),
        ("https://news.example/new", "after-claim-time"),
    ]
    assert screened.undated == 1
    [refused] = LeakageGuard().screen([SearchResult("https://politifact.com/x")], None).dropped
    assert refused.reason == "blocked:politifact.com"


def test_flagged_predictions_are_reported_counted_and_excluded(tmp_path):
    samples = [make_sample(i, g) for i, g in enumerate([Label.TRUE, Label.FALSE, Label.FALSE, Label.TRUE])]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    rows = [
        {"id": samples[0].id, "label": "True", "evidence_urls": ["https://www.snopes.com/fact-check/0/"]},
        {"id": samples[1].id, "label": "False", "evidence_urls": ["https://www.politifact.com/1"]},
        {"id": samples[2].id, "label": "True", "evidence_urls": ["https://example.org/2"]},
        {"id": samples[3].id, "label": "True", "evidence_urls": []},
    ]
    preds = tmp_path / "agent.jsonl"
    write_jsonl(preds, rows)
    out = tmp_path / "run"
    code = main(
        [
            "evaluate",
            "--data",
            str(data),
            "--predictions",
            str(preds),
            "--setting",
            "open-web",
            "--out",
            str(out),
            "--bootstrap",
            "0",
            "--no-progress",
            "--no-key-points",
        ]
    )
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["setting"] == "T+I+W"  # the canonical name of the open-web alias
    assert metrics["audit"]["flagged"] == 2
    assert metrics["audit"]["domains"] == {"snopes.com": 1, "politifact.com": 1}
    assert metrics["accuracy"] == pytest.approx(3 / 4)  # counted
    assert metrics["audit"]["excluding_flagged"]["accuracy"] == pytest.approx(1 / 2)  # and excluded
    assert metrics["audit"]["views_excluding_flagged"]["main"]["n"] == 2
    scored = [json.loads(x) for x in (out / "scored.jsonl").read_text().splitlines()]
    assert [r["flagged"] for r in scored] == [True, True, False, False]
    assert "2 predictions cite a blocked domain" in (out / "report.md").read_text()
