"""The tagged-text evaluation on the golden set of real pages (benchmarks/tagged_eval.py)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.tagged_eval import FIELDS, evaluate, evaluate_fields, field_accuracy
from benchmarks.tagged_eval import main as tagged_eval_main

FIXTURES = Path(__file__).parent / "fixtures"


def test_golden_set_scores_full_precision_and_recall():
    scores = evaluate(FIXTURES / "tagged" / "golden.json", FIXTURES / "snopes_html")
    assert all(s.precision == 1.0 and s.recall == 1.0 for s in scores)


def test_every_field_of_every_real_page_per_era():
    """The page model against the facts each real page shows (golden ``fields``, read from the pages
    without rwpost): every era, every field; a field the saved page lacks must come out empty."""
    table = field_accuracy(evaluate_fields(FIXTURES / "tagged" / "golden.json", FIXTURES / "snopes_html"))
    assert {era: row["pages"] for era, row in table.items()} == {
        "2017-18 microdata": 13, "2018-late": 1, "2019-21": 1, "2022+": 2, "all": 17,
    }  # fmt: skip
    for era, row in table.items():
        assert all(row[field] == 1.0 for field in FIELDS), (era, row)


def test_field_scoring_catches_a_wrong_value(tmp_path):
    """The scorer is not lenient: the 2022+ JSON-LD's mislabelled time (Pacific clock time written as UTC),
    an invented headline where the page shows none, and a rating off by case all count as wrong."""
    golden = json.loads((FIXTURES / "tagged" / "golden.json").read_text(encoding="utf-8"))
    by_name = {page["name"]: page for page in golden["pages"]}
    by_name["robert-de-niro-trump-oscars"]["fields"]["date_published"] = "2025-03-03T11:28:26+00:00"
    by_name["david-hogg-give-nazi-salute"]["fields"]["headline"] = "Did David Hogg Give a Nazi Salute?"
    by_name["2018-11_christmas-story-marathon-tbs"]["fields"]["rating"] = "false"
    (tmp_path / "golden.json").write_text(json.dumps(golden), encoding="utf-8")
    scores = {s.name: s for s in evaluate_fields(tmp_path / "golden.json", FIXTURES / "snopes_html")}
    assert not scores["robert-de-niro-trump-oscars"].right["date_published"]
    assert not scores["david-hogg-give-nazi-salute"].right["headline"]
    assert not scores["2018-11_christmas-story-marathon-tbs"].right["rating"]
    assert sum(not ok for s in scores.values() for ok in s.right.values()) == 3


def test_evaluation_script_prints_fields_and_links_per_era(capsys):
    assert tagged_eval_main(["--golden", str(FIXTURES / "tagged" / "golden.json"),
                             "--fixtures", str(FIXTURES / "snopes_html")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "field accuracy by era" in out and "wrong on" not in out
    assert "era 2017-18 microdata" in out and "ALL (micro)" in out
    assert tagged_eval_main(["--golden", "no-such.json"]) == 2
    assert capsys.readouterr().err.strip() == "error: no-such.json: no such golden file"
