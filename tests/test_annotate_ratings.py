"""The long tail of ratings reviewed in Label Studio: ``rwpost annotate push-ratings STORE`` (one task per
site, language and unmapped rating), two annotators, disagreements to an adjudicator, and
``rwpost annotate pull-ratings`` writing the next version of the reviewed rating table that the rating
tables then read. The live test runs on the session's one real Label Studio (the ``live`` fixture of
conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rwpost.annotate.ratings import rating_record_id, resolve_ratings
from rwpost.annotate.verdicts import rating_verdicts
from rwpost.errors import ConfigError
from rwpost.labels import REVIEWED_EXCLUSION, Label
from rwpost.records import ClaimReviewFacts, CrawledArticle, Reject
from rwpost.sites.rating_table import (
    RatingTable,
    ReviewedRating,
    dump_rating_table,
    load_rating_table,
    updated_table,
)
from rwpost.sites.ratings import map_record, unmapped_rating_rows
from rwpost.sites.registry import packaged_registry
from tests.annotate_live import ANNOTATORS, CONFIGS, GUIDELINES, annotator_clients
from tests.conftest import one_line, run_cli

# (site, language, wording, pages): wordings no packaged table maps
LONG_TAIL = [
    ("factuel.afp.com", "fr", "Pas vraiment", 3),
    ("factcheck.example.org", "en", "Zombie claim", 2),
    ("factcheck.example.org", "en", "Cherry-picked", 1),
    ("faktencheck.example.de", "de", "Halbwahr mit Haken", 1),
]


def _record(n: int, site: str, language: str, rating: str) -> CrawledArticle:
    return CrawledArticle(
        id=f"ms-{n}",
        url=f"https://{site}/check/{n}",
        http_status=200,
        fetched_at="2026-01-01T00:00:00Z",
        claim=f"Generated test claim {n} rated {rating}",
        site=site,
        publisher=f"Publisher of {site}",
        language=language,
        claim_reviews=[
            ClaimReviewFacts(claim_reviewed=f"claim {n}", rating_alternate_name=rating, source="json-ld")
        ],
    )


def _records() -> list[CrawledArticle]:
    out, n = [], 0
    for site, language, rating, pages in LONG_TAIL:
        for _ in range(pages):
            out.append(_record(n, site, language, rating))
            n += 1
    out.append(_record(n, "factuel.afp.com", "fr", "Faux"))  # mapped by the French table
    return out


@pytest.fixture
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "articles.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in _records()))
    return folder


def _row(site: str, language: str, rating: str, label: str, status: str = "agreed") -> ReviewedRating:
    return ReviewedRating(site=site, language=language, rating=rating, label=label, status=status)


# --- the table update --------------------------------------------------------------------------------


def test_the_packaged_table_is_version_0_and_leaves_the_long_tail_unmapped():
    assert load_rating_table() == RatingTable(version=0, ratings=[])
    rows, read = unmapped_rating_rows(_records())
    assert read == 8
    assert [(r.site, r.language, r.rating, r.articles) for r in rows] == LONG_TAIL
    assert rows[0].example_claim == "Generated test claim 0 rated Pas vraiment"
    assert rows[0].example_url == "https://factuel.afp.com/check/0"


def test_an_update_adds_only_new_rows_and_bumps_the_version():
    base = RatingTable(version=3, ratings=[_row("a.org", "en", "Meh", "Mixture")])
    new, added = updated_table(
        base, [_row("a.org", "en", "meh.", "False"), _row("b.org", "es", "Bulo total", "False")]
    )
    assert new.version == 4 and [r.rating for r in added] == ["Bulo total"]
    # a reviewed row is never changed by a later pull (same site, language and normalised wording)
    assert {(r.rating, r.label) for r in new.ratings} == {("Meh", "Mixture"), ("Bulo total", "False")}
    same, none = updated_table(new, [_row("a.org", "en", "MEH", "True")])
    assert same is new and none == []


def test_the_table_round_trips_through_its_yaml_and_bad_files_are_one_line(tmp_path):
    table = RatingTable(version=1, ratings=[_row("tfc-taiwan.org.tw", "zh-Hant", "部分錯誤?", "Mixture")])
    path = tmp_path / "t.yaml"
    path.write_text(dump_rating_table(table), encoding="utf-8")
    assert "部分錯誤?" in path.read_text(encoding="utf-8")  # Unicode kept, not escaped
    assert load_rating_table(path) == table
    bad = yaml.safe_load(path.read_text(encoding="utf-8"))
    bad["ratings"][0]["label"] = "Maybe"
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"t\.yaml: ratings\.0\.label: ") as err:
        load_rating_table(path)
    assert "\n" not in str(err.value)
    bad["ratings"] = [_row("a.org", "en", "Meh", "False").model_dump()] * 2
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(ConfigError, match="rating 'meh' of a.org \\(en\\) given more than once"):
        load_rating_table(path)


def test_the_rating_tables_read_a_reviewed_table_for_its_site_and_language_only():
    table = RatingTable(
        version=1,
        ratings=[
            _row("factuel.afp.com", "fr", "Pas vraiment", "Mixture"),
            _row("factcheck.example.org", "en", "Zombie claim", "excluded", "adjudicated"),
        ],
    )
    registry = packaged_registry().with_reviewed(table.lookup())
    records = _records()
    assert map_record(records[0], registry).label == Label.MIXTURE
    assert map_record(records[0], registry).via == "site"
    zombie = map_record(records[3], registry)
    assert zombie.label is None and zombie.reason == REVIEWED_EXCLUSION
    # the same wording in another language is not covered by the row
    other = _record(99, "factuel.afp.com", "en", "Pas vraiment")
    assert map_record(other, registry).label is None
    rows, _ = unmapped_rating_rows(records, registry)
    assert [(r.site, r.rating) for r in rows] == [
        ("factcheck.example.org", "Cherry-picked"),
        ("faktencheck.example.de", "Halbwahr mit Haken"),
    ]


# --- Label Studio answers -> reviewed rows -------------------------------------------------------------


def _task(task_id: int, rating: tuple[str, str, str], answers: list[tuple[int, int, str]]) -> dict:
    site, language, words = rating
    return {
        "id": task_id,
        "data": {
            "record_id": rating_record_id(site, language, words),
            "site": site,
            "language": language,
            "rating": words,
            "articles": 2,
        },
        "annotations": [
            {
                "id": annotation_id,
                "completed_by": user,
                "result": [
                    {
                        "from_name": "label",
                        "to_name": "rating",
                        "type": "choices",
                        "value": {"choices": [label]},
                    }
                ],
            }
            for annotation_id, user, label in answers
        ],
    }


def test_two_agreeing_answers_make_a_row_disagreements_wait_and_bad_answers_are_set_aside():
    users = {1: "a@x.org", 2: "b@x.org", 3: "judge@x.org"}
    export = [
        _task(10, ("s.org", "en", "Nope"), [(100, 1, "False"), (101, 2, "False")]),
        _task(11, ("s.org", "en", "Kinda"), [(102, 1, "Mixture"), (103, 2, "True")]),
        _task(12, ("s.org", "en", "Hmm"), [(104, 1, "Unproven")]),
        _task(13, ("s.org", "en", "Odd"), [(105, 1, "Perhaps"), (106, 2, "excluded")]),
    ]
    rejects: list[Reject] = []
    verdicts = rating_verdicts(export, users, project="ratings", rejects=rejects)
    assert len(verdicts) == 6 and [r.reason for r in rejects] == [
        "label 'Perhaps' is not one of ['True', 'False', 'Unproven', 'Mixture', 'Outdated', 'excluded']"
    ]
    resolved = resolve_ratings(verdicts)
    assert [(r.rating, r.label, r.status, r.annotators) for r in resolved.rows] == [
        ("Nope", "False", "agreed", ["a@x.org", "b@x.org"])
    ]
    assert sorted(v.rating for v in resolved.open["disputed"]) == ["Kinda"]
    assert sorted(v.rating for v in resolved.open["pending"]) == ["Hmm", "Odd"]
    judged = rating_verdicts(
        [_task(20, ("s.org", "en", "Kinda"), [(200, 3, "Mixture")])], users, project="x", adjudicated=True
    )
    resolved = resolve_ratings([*verdicts, *judged])
    assert [(r.rating, r.label, r.status) for r in resolved.rows] == [
        ("Kinda", "Mixture", "adjudicated"),
        ("Nope", "False", "agreed"),
    ]
    assert resolved.open["disputed"] == []


# --- refusals that need no server ----------------------------------------------------------------------


def test_push_ratings_refuses_a_store_without_multisite_records_in_one_line(tmp_path, capsys):
    snopes = CrawledArticle(
        id="rw-1",
        url="https://www.snopes.com/fact-check/x/",
        http_status=200,
        fetched_at="2024-01-01T00:00:00Z",
    )
    (tmp_path / "articles.jsonl").write_text(snopes.model_dump_json() + "\n")
    code, err = run_cli(capsys, "annotate", "push-ratings", tmp_path, "--state", tmp_path / "ls")
    assert code == 2 and "no multi-site record" in one_line(err)
    code, err = run_cli(capsys, "annotate", "push-ratings", tmp_path / "none", "--state", tmp_path / "ls")
    assert code == 2 and "no crawl store here" in one_line(err)
    assert not (tmp_path / "ls").exists()


def test_pull_ratings_refuses_an_existing_table_or_a_bad_base_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "ratings-reviewed.yaml"
    out.write_text("version: 7\nratings: []\n")
    code, err = run_cli(capsys, "annotate", "pull-ratings", "--out", out, "--state", tmp_path / "ls")
    assert code != 0 and "--overwrite" in one_line(err)
    assert out.read_text() == "version: 7\nratings: []\n"
    base = tmp_path / "base.yaml"
    base.write_text("version: 1\nratings: [{site: a.org}]\n")
    new = tmp_path / "new.yaml"
    code, err = run_cli(capsys, "annotate", "pull-ratings", "--out", new, "--base", base)
    assert code == 2 and one_line(err).startswith(f"error: {base}: ratings.0.")
    assert not new.exists()


# --- the real server, end to end ---------------------------------------------------------------------


@pytest.mark.slow
def test_push_answer_adjudicate_and_pull_ratings_through_a_real_label_studio(live, store, tmp_path):
    from rwpost.annotate import sync
    from rwpost.annotate.tasks import PROJECTS
    from rwpost.cli import main as rwpost_main

    common = ["--state", str(live.state), "--port", str(live.port)]
    push = ["annotate", "push-ratings", str(store), *common, "--configs", str(CONFIGS)]
    push += ["--guidelines", str(GUIDELINES)]
    assert rwpost_main(push) == 0
    project = sync.find_project(live.client, PROJECTS["ratings"].title)
    tasks = {t.data["rating"]: t for t in live.client.tasks.list(project=project.id)}
    assert sorted(tasks) == sorted(r for _s, _l, r, _n in LONG_TAIL)
    shown = tasks["Pas vraiment"].data
    assert shown["count_line"] == "3 articles carry this rating"
    assert shown["example_claim"] == "Generated test claim 0 rated Pas vraiment"
    assert "factuel.afp.com" in shown["site_line"] and "language: fr" in shown["site_line"]
    assert rwpost_main(push) == 0  # a rerun imports nothing twice
    assert len(list(live.client.tasks.list(project=project.id))) == 4

    annotators = annotator_clients(live)
    a, b, judge = (annotators[e] for e in ANNOTATORS)

    def answer(client, rating: str, label: str) -> None:
        result = [
            {"from_name": "label", "to_name": "rating", "type": "choices", "value": {"choices": [label]}}
        ]
        client.annotations.create(tasks[rating].id, result=result)

    answer(a, "Pas vraiment", "Mixture")
    answer(b, "Pas vraiment", "Mixture")  # agreed
    answer(a, "Zombie claim", "excluded")
    answer(b, "Zombie claim", "False")  # disputed -> adjudicated below
    answer(a, "Cherry-picked", "Mixture")  # pending: one answer only

    assert rwpost_main(push) == 0  # the rerun sends the disagreement to the adjudicator
    judging = sync.find_project(live.client, PROJECTS["ratings-adjudication"].title)
    disputed = list(live.client.tasks.list(project=judging.id))
    assert [t.data["rating"] for t in disputed] == ["Zombie claim"]
    assert "ann-a@rwpost.test: excluded" in disputed[0].data["disagreement"]
    judge_result = [
        {"from_name": "label", "to_name": "rating", "type": "choices", "value": {"choices": ["excluded"]}}
    ]
    judge.annotations.create(disputed[0].id, result=judge_result)

    out = tmp_path / "ratings-reviewed.yaml"
    assert rwpost_main(["annotate", "pull-ratings", "--out", str(out), *common]) == 0
    table = load_rating_table(out)
    assert table.version == 1
    assert [(r.site, r.language, r.rating, r.label, r.status, r.articles) for r in table.ratings] == [
        ("factcheck.example.org", "en", "Zombie claim", "excluded", "adjudicated", 2),
        ("factuel.afp.com", "fr", "Pas vraiment", "Mixture", "agreed", 3),
    ]
    # the rating tables read the update: what is left of the long tail is what is still open
    registry = packaged_registry().with_reviewed(table.lookup())
    rows, _ = unmapped_rating_rows(_records(), registry)
    assert [r.rating for r in rows] == ["Cherry-picked", "Halbwahr mit Haken"]
    # never over an existing file unasked; with --overwrite the same content (the base has not changed)
    before = out.read_bytes()
    assert rwpost_main(["annotate", "pull-ratings", "--out", str(out), *common]) != 0
    assert out.read_bytes() == before
    assert rwpost_main(["annotate", "pull-ratings", "--out", str(out), "--overwrite", *common]) == 0
    assert out.read_bytes() == before
    # a later pull on top of the adopted table adds only what is new
    answer(b, "Cherry-picked", "Mixture")
    again = tmp_path / "v2.yaml"
    args = ["annotate", "pull-ratings", "--out", str(again), "--base", str(out), *common]
    assert rwpost_main(args) == 0
    second = load_rating_table(again)
    assert second.version == 2 and len(second.ratings) == 3
    assert json.dumps(second.ratings[0].model_dump()) == json.dumps(
        {
            "site": "factcheck.example.org",
            "language": "en",
            "rating": "Cherry-picked",
            "label": "Mixture",
            "status": "agreed",
            "annotators": ["ann-a@rwpost.test", "ann-b@rwpost.test"],
            "articles": 1,
        }
    )
