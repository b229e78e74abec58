"""URL identity: each key ignores what its docstring says and nothing more."""

from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.explanations import evidence_url_scores
from rwpost.extract.offline import link_key
from rwpost.labels import Label
from rwpost.records import Evidence
from rwpost.urls import article_key, evidence_key, location_key, path_key
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
