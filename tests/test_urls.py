"""URL identity: each key ignores what its docstring says and nothing more."""

import json

import pytest

from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.explanations import evidence_url_scores
from rwpost.evaluate.leakage import MALFORMED, BlockList, LeakageGuard, SearchResult, normalize_domain
from rwpost.extract.offline import link_key
from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.records import Evidence
from rwpost.urls import (
    article_key,
    evidence_key,
    location_key,
    path_key,
    split_url,
    url_host,
    url_problem,
)
from tests.conftest import run_cli
from tests.evaluate_helpers import make_sample


def test_article_key_ignores_scheme_www_case_slashes_query_and_fragment():
    assert article_key("http://WWW.Snopes.com//fact-check/A?x=1#top") == "https://snopes.com/fact-check/A/"
    assert article_key("snopes.com:8080/a") == "https://snopes.com:8080/a/"


def test_path_key_ignores_the_host():
    assert path_key("http://127.0.0.1:8001//fact-check/a") == path_key(
        '"https://www.snopes.com/fact-check/a/"'
    )


def test_location_key_keeps_www_and_port_but_ignores_query():
    assert location_key("https://Media.x.com/a.jpg?w=1") == location_key("//media.x.com/a.jpg/")
    assert location_key("https://www.x.com/a.jpg") != location_key("https://x.com/a.jpg")


def test_evidence_key_keeps_the_query():
    assert evidence_key("http://www.BBC.com/news/x/#p") == evidence_key("https://bbc.com/news/x")
    assert evidence_key("https://x.com/watch?v=1") != evidence_key("https://x.com/watch?v=2")


def test_the_evaluation_and_the_extraction_compare_evidence_alike():
    """The evidence-URL metric and the extractor's link identity agree on which URLs are one page."""
    gold, cited = "https://www.Example.org/report/?id=7", "http://example.org/report?id=7#s2"
    assert link_key(gold) == link_key(cited)
    sample = make_sample(1, Label.FALSE, evidence=[Evidence(id=1, type="Text", content="report", url=gold)])
    scores = evidence_url_scores([sample], [Prediction(id=sample.id, evidence_urls=[cited])])
    assert scores["micro_recall"] == scores["micro_precision"] == 1.0


# --- issue 39 H1: one parser decides what a URL is; text that is not one never raises -------------------

NOT_URLS = [
    "http://[1]/x",
    "https://[::1/x",
    "http://a b.com/x",
    "http://h:99999/",
    "[1]",
    "word []",
    "[" * 100,
]


@pytest.mark.parametrize("text", NOT_URLS)
def test_no_key_raises_on_text_that_is_not_a_url(text):
    # before: ValueError "'1' does not appear to be an IPv4 or IPv6 address" from urllib, uncaught
    for key in (evidence_key, location_key, path_key, normalize_domain, url_host, BlockList().blocked_domain):
        key(text)
    assert url_host(text) == ""


def test_split_url_says_which_text_is_a_url_and_why_not():
    assert split_url("http://[::1]:80/x").port == 80
    assert split_url("http://[1]/x") is None and "IPv4 or IPv6" in url_problem("http://[1]/x")
    assert url_problem("http://h:99999/") == "Port out of range 0-65535"
    assert split_url("http://a b.com/x") is None
    assert split_url("https://example.org/a?b=1").netloc == "example.org"
    assert evidence_key("http://[1]/x") != evidence_key("http://1/x")  # not a URL matches no page


def test_the_guard_sets_aside_a_result_that_is_not_a_url_and_keeps_the_rest():
    results = [SearchResult(u) for u in ["http://[1]/x", "https://[::1/x", "https://example.org/a"]]
    screened = LeakageGuard().screen(results, None)  # before: ValueError, exit 70 in t2agent/agentfact
    assert [r.url for r in screened.kept] == ["https://example.org/a"]
    assert [(d.result.url, d.reason) for d in screened.dropped] == [
        ("http://[1]/x", MALFORMED),
        ("https://[::1/x", MALFORMED),
    ]


def test_a_redirect_wrapper_to_a_fact_checker_is_blocked_bing_base64_included():
    bing = "https://www.bing.com/ck/a?u=a1aHR0cHM6Ly93d3cuc25vcGVzLmNvbS9mYWN0LWNoZWNrL3gv"
    assert BlockList().blocked_domain(bing) == "snopes.com"  # before: None, the result passed the guard
    assert BlockList().blocked_domain("https://www.bing.com/ck/a?u=a1aHR0cHM6Ly9leGFtcGxlLm9yZy8") is None
    assert (
        BlockList().blocked_domain("https://l.facebook.com/l.php?u=https%3A%2F%2Fsnopes.com%2Fx")
        == "snopes.com"
    )


def test_a_predictions_file_citing_a_bracket_is_scored(tmp_path, capsys):
    samples = [make_sample(i, g) for i, g in enumerate([Label.TRUE, Label.FALSE])]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    preds = tmp_path / "flat.jsonl"
    rows = [
        {"id": samples[0].id, "label": "True", "evidence_urls": ["[1]", "http://[1]/x"]},
        {"id": samples[1].id, "label": "False", "evidence_urls": ["word []"]},
    ]
    write_jsonl(preds, rows)
    out = tmp_path / "run"
    code, err = run_cli(
        capsys, "evaluate", "--data", data, "--predictions", preds, "--out", out, "--bootstrap", "0",
        "--no-progress", "--no-key-points",
    )  # fmt: skip
    assert code == 0, err  # before: exit 70, on every rerun
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["accuracy"] == 1.0 and metrics["audit"]["flagged"] == 0
