"""The leakage lists say what they are (issue 24, section 3): the guard withholds fact-checkers and pages
after the cut; the authors' scrape-failure and social/.gov lists are source filters, never leakage."""

from __future__ import annotations

from datetime import date

from rwpost.evaluate.contract import Prediction
from rwpost.evaluate.detectors.agentfact.sources import SCRAPE_FAILURE_LIST, SourceFilter, read_list
from rwpost.evaluate.leakage import (
    AUTHORS_FACT_CHECK_SUBSTRINGS,
    FACT_CHECK_SUBSTRINGS,
    BlockList,
    LeakageGuard,
    SearchResult,
    audit,
)
from rwpost.labels import Label


def test_the_guard_blocks_fact_checkers_and_the_authors_34_substrings_but_not_newsrooms():
    assert len(AUTHORS_FACT_CHECK_SUBSTRINGS) == 34 and len(FACT_CHECK_SUBSTRINGS) == 35  # + leadstories
    results = [
        SearchResult("https://www.reuters.com/world/us/story-2019-01-01/"),
        SearchResult("https://www.nytimes.com/2019/01/01/us/story.html"),
        SearchResult("https://apnews.com/article/anything"),  # all of AP News, as the authors match it
        SearchResult("https://www.poynter.org/ifcn/"),
        SearchResult("https://www.rappler.com/newsbreak/"),
        SearchResult("https://factuel.afp.com/x"),
        SearchResult("https://www.reuters.com/fact-check/abc"),
        SearchResult("https://www.facebook.com/post/1"),
        SearchResult("https://www.nasa.gov/news"),
    ]
    screened = LeakageGuard().screen(results, date(2020, 1, 1))
    assert [r.url for r in screened.kept] == [
        "https://www.reuters.com/world/us/story-2019-01-01/",
        "https://www.nytimes.com/2019/01/01/us/story.html",
        "https://www.facebook.com/post/1",
        "https://www.nasa.gov/news",
    ]
    assert [d.reason for d in screened.dropped] == [
        "blocked:apnews.com",
        "blocked:poynter.org",
        "blocked:rappler.com",
        "blocked:factuel.afp.com",
        "blocked:reuters.com",  # its fact-check section, by the substring "fact-check"
    ]


def test_a_prediction_citing_reuters_is_not_flagged_one_citing_a_fact_checker_is():
    predictions = [
        Prediction(id="reuters", label=Label.TRUE, evidence_urls=["https://www.reuters.com/world/x"]),
        Prediction(id="cnn", label=Label.TRUE, evidence_urls=["https://www.cnn.com/2019/x"]),
        Prediction(id="ap", label=Label.TRUE, evidence_urls=["https://apnews.com/article/x"]),
        Prediction(id="snopes", label=Label.TRUE, evidence_urls=["https://www.snopes.com/fact-check/y/"]),
    ]
    assert sorted(audit(predictions, BlockList())) == ["ap", "snopes"]


def test_the_authors_other_lists_are_source_filters_off_unless_asked():
    scrape = read_list(SCRAPE_FAILURE_LIST)  # 1,650 released lines, 1,648 distinct hosts
    assert len(scrape) == 1648 and "www.reuters.com" in scrape and "www.cnn.com" in scrape
    off = SourceFilter()
    assert not off.active and off.reason("https://www.facebook.com/x") is None
    on = SourceFilter(unsupported=True, scrape_failures=True)
    assert on.reason("https://m.facebook.com/x") == "unsupported:facebook.com"
    assert on.reason("https://x.com/user/status/1") == "unsupported:x.com"
    assert on.reason("https://www.nasa.gov/news") == "gov:nasa.gov"
    assert on.reason("https://www.reuters.com/world/x") == "scrape-failure:www.reuters.com"
    assert on.reason("https://reuters.com/world/x") is None  # exact host, as their extraction matches it
    assert on.reason("https://example.org/report.PDF") == "file-type:.pdf"
    assert on.reason("https://example.org/story") is None
    assert SourceFilter(unsupported=True).reason("https://www.reuters.com/world/x") is None
