"""``rwpost sites``, ``rwpost labels --site`` / ``--unknown`` over a multi-site store, and
``rwpost crawl --from-html DIR --reader sites`` on the real pages of tests/fixtures/multisite/ (their
URLs given in an index.json beside them, as a user saving pages would)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rwpost.records import CrawledArticle
from rwpost.sites.registry import load_registry
from tests.conftest import one_line, run_cli, run_cli_out

ROOT = Path(__file__).parent / "fixtures" / "multisite"
GOLD = [json.loads(line) for line in (ROOT / "index.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real pages imported by the command line, with the multi-site reader."""
    saved = tmp_path_factory.mktemp("saved")
    shutil.copytree(ROOT / "pages", saved / "pages")
    index = [{"file": g["file"], "url": g["url"]} for g in GOLD]
    (saved / "index.json").write_text(json.dumps(index), encoding="utf-8")
    out = tmp_path_factory.mktemp("store")
    from rwpost.cli import main

    assert main(["crawl", "--from-html", str(saved), "--reader", "sites", "--out", str(out), "--json"]) == 0
    return out


def _records(store: Path) -> dict[str, CrawledArticle]:
    lines = (store / "articles.jsonl").read_text(encoding="utf-8").splitlines()
    return {r.fetched_url: r for r in (CrawledArticle.model_validate_json(line) for line in lines)}


def test_the_import_stores_every_page_with_its_claimreviews_and_language(store):
    records = _records(store)
    # TFC's article 4539 is there twice (a 2020 snapshot without ClaimReview, a 2022 one with it): one URL
    assert len(records) == len({g["url"] for g in GOLD}) == 41
    report = json.loads((store / "report.json").read_text(encoding="utf-8"))
    assert (report["files"], report["duplicates"], report["stored_parse_errors"]) == (42, 1, 0)
    for gold in GOLD:
        record = records[gold["url"]]
        if gold["file"].endswith("4539-2022snapshot.html"):
            continue  # the 2020 snapshot sorts first and is the one stored
        assert record.language == gold["language"] and record.language_declared == gold["html_lang"]
        assert record.publisher == gold["publisher"]
        assert record.metadata_only is not gold["has_claimreview"]
        review = record.claim_reviews[0] if record.claim_reviews else None
        assert (review.rating_alternate_name if review else None) == gold["rating_alternate_name"]
        assert (review.rating_value if review else None) == gold["rating_value"]
        assert record.layout == "multisite" and record.parse_error is None


def test_a_snopes_store_has_none_of_the_multisite_fields():
    record = CrawledArticle(
        id="rw-1",
        url="https://www.snopes.com/fact-check/x/",
        http_status=200,
        fetched_at="2024-01-01T00:00:00Z",
    )
    dumped = json.loads(record.model_dump_json())
    assert not {"site", "publisher", "language", "claim_reviews", "metadata_only", "field_sources"} & set(
        dumped
    )


def test_labels_unknown_lists_per_site_and_language_what_no_table_maps(store, tmp_path, capsys):
    code, out, _err = run_cli_out(capsys, "labels", "--unknown", store, "--json")
    assert code == 0 and json.loads(out) == {}  # every real rating maps
    # a store where a publisher wrote a wording no table knows
    lines = (store / "articles.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    changed = 0
    for row in rows:
        if row.get("claim_reviews") and row["site"] == "factuel.afp.com":
            row["claim_reviews"][0]["rating_alternate_name"] = "Pas vraiment"
            changed += 1
    (tmp_path / "articles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, _err = run_cli_out(capsys, "labels", "--unknown", tmp_path, "--json")
    assert code == 0 and json.loads(out) == {"factuel.afp.com": {"fr": {"Pas vraiment": changed}}}
    code, out, _err = run_cli_out(capsys, "labels", "--unknown", tmp_path)
    assert code == 0 and "Pas vraiment" in out and "factuel.afp.com" in out


def test_labels_site_maps_a_publishers_ratings_as_json(capsys):
    code, out, _err = run_cli_out(
        capsys, "labels", "--site", "www.20minutes.fr", "--json", "really_false", "Faux", "?"
    )
    assert code == 0 and json.loads(out) == {"really_false": "False", "Faux": "False", "?": None}
    code, out, _err = run_cli_out(capsys, "labels", "--site", "tfc-taiwan", "--json", "錯誤", "證據不足")
    assert json.loads(out) == {"錯誤": "False", "證據不足": "Unproven"}


def test_labels_site_refuses_an_unknown_name_and_no_ratings(capsys):
    code, err = run_cli(capsys, "labels", "--site", "no-such-site", "Faux")
    assert code == 2 and "no such site in sites.yaml" in one_line(err)
    code, err = run_cli(capsys, "labels", "--site", "afp-factuel")
    assert code == 2 and "give the ratings to map" in one_line(err)


def test_sites_lists_the_packaged_fact_checkers(capsys):
    code, out, _err = run_cli_out(capsys, "sites", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["version"] == 1
    assert len(listed["sites"]) == 20
    assert {"boom", "tfc-taiwan", "reuters"} <= {s["name"] for s in listed["sites"]}
    code, out, _err = run_cli_out(capsys, "sites")
    assert code == 0 and "Taiwan FactCheck Center" in out


def test_a_bad_sites_file_is_one_line_naming_it(tmp_path, capsys):
    bad = tmp_path / "sites.yaml"
    bad.write_text(
        "version: 1\nsites:\n  - name: x\n    publisher: X\n    domains: []\n    terms: t\n", encoding="utf-8"
    )
    code, err = run_cli(capsys, "sites", "--sites-file", bad)
    assert code == 2 and one_line(err).startswith(f"error: {bad}: sites.0.domains:")
    with pytest.raises(Exception, match="given more than once"):
        twice = "version: 1\nsites:\n" + "  - {name: x, publisher: X, domains: [x.org], terms: t}\n" * 2
        bad.write_text(twice, encoding="utf-8")
        load_registry(bad)


def test_crawl_feed_refuses_a_missing_feed_file_in_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    code, err = run_cli(
        capsys, "crawl", "--feed", tmp_path / "missing.json", "--out", out, "--contact", "a@b.c"
    )
    assert code == 2 and "--feed" in one_line(err) and "no such file" in err
    assert not out.exists()


def _claim(i: int, site: str) -> dict:
    return {
        "text": f"claim {i}",
        "claimant": "someone",
        "claimDate": "2024-01-01T00:00:00Z",
        "claimReview": [
            {
                "publisher": {"name": site, "site": site},
                "url": f"https://{site}/fc/{i}",
                "title": f"title {i}",
                "reviewDate": "2024-01-02T00:00:00Z",
                "textualRating": "Faux",
                "languageCode": "fr",
            }
        ],
    }


def test_claims_search_pages_a_publishers_claims_into_a_feed_without_the_key(tmp_path, capsys, monkeypatch):
    from rwpost.sites.feed import read_feed
    from rwpost.testing.factcheck import FactCheckToolsServer

    claims = [_claim(i, "factuel.afp.com") for i in range(230)] + [_claim(999, "other.example")]
    out = tmp_path / "afp.json"
    with FactCheckToolsServer(claims, key="sekret-123") as server:
        monkeypatch.setenv("FACTCHECK_API_KEY", "sekret-123")
        monkeypatch.setenv("FACTCHECK_API_BASE", server.search_url)
        code, stdout, _err = run_cli_out(capsys, "claims-search", "factuel.afp.com", "--out", out)
        requests = list(server.requests)
        assert code == 0 and "230 claims of factuel.afp.com in 3 pages" in stdout
        reviews = list(read_feed(out))
        assert [r.url for r in reviews] == [f"https://factuel.afp.com/fc/{i}" for i in range(230)]
        assert reviews[0].review.rating_alternate_name == "Faux" and reviews[0].review.source == "feed"
        assert "sekret-123" not in out.read_text(encoding="utf-8")
        assert [r.get("pageToken") for r in requests] == [None, "100", "200"]
        code, err = run_cli(capsys, "claims-search", "factuel.afp.com", "--out", out)
        assert code == 2 and "exists" in one_line(err)
        monkeypatch.setenv("FACTCHECK_API_KEY", "wrong-key")
        code, err = run_cli(capsys, "claims-search", "factuel.afp.com", "--out", out, "--overwrite")
        assert code == 1 and one_line(err) == "error: claims:search for factuel.afp.com: HTTP 403"
        assert "wrong-key" not in err
    assert [r.url for r in read_feed(out)][:1] == [
        "https://factuel.afp.com/fc/0"
    ]  # a failed run left it whole
