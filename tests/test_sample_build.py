"""The bundled sample site generator (sample/build.py): reproducible from the released records, small,
its layouts by date, its generated content labelled."""

from __future__ import annotations

import json
from pathlib import Path

from ftfy import fix_encoding

from rwpost.ids import record_id
from rwpost.sample.build import RELEASED_FILES, build_site, load_gold
from tests.conftest import ROOT

SITE = ROOT / "data" / "sample" / "site"
RELEASED = ROOT / "data" / "sample" / "released"


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_sample_layouts_follow_the_date_rule():
    by_era = {}
    for g in load_gold(SITE):
        era = (
            "2022+"
            if (g["date"] or "0") >= "2022"
            else "2019-21"
            if (g["date"] or "0") >= "2019"
            else (
                "2018-late"
                if (g["date"] or "0")[:7] >= "2018-07"
                else "2017-18"
                if (g["date"] or "0") >= "2017"
                else "older"
            )
        )
        by_era.setdefault(era, set()).add(g["layout"])
    assert by_era.pop("2022+") == {"snopes-2020s"}
    assert by_era.pop("2019-21") == {"snopes-wordpress-2017"}
    assert by_era.pop("2018-late") == {"snopes-2018-cards"}
    assert by_era.pop("2017-18") == {"snopes-2018-microdata"}
    # 2015-2016 and undated pages are spread across the three older themes
    assert by_era.pop("older") <= {"snopes-2018-microdata", "snopes-2018-cards", "snopes-wordpress-2017"}


ROOT = Path(__file__).resolve().parents[1]


SITE = ROOT / "data" / "sample" / "site"


def test_committed_site_is_what_the_generator_builds(tmp_path):
    build_site(RELEASED, tmp_path / "site")
    assert files_of(tmp_path / "site") == files_of(SITE)


def test_site_stays_small():
    assert sum(len(b) for b in files_of(SITE).values()) < 3 * 1024 * 1024


def test_every_released_record_has_a_page_with_its_real_id_and_fields():
    released = []
    for name in RELEASED_FILES:
        released += [json.loads(line) for line in (RELEASED / name).read_text().splitlines() if line.strip()]
    gold = {g["id"]: g for g in load_gold(SITE)}
    assert set(gold) == {record_id(r["news_url"]) for r in released}
    for row in released:
        page = gold[record_id(row["news_url"])]
        # the release's mojibake is shown repaired ("Risqu√© Business" -> "Risqué Business"), nothing else
        assert page["claim"] == fix_encoding(row["claim"]) and page["category"] == fix_encoding(
            row["category"]
        )
        assert page["date"] == row["claim_time"]
        assert (SITE / page["page"].lstrip("/") / "index.html").is_file()
    ratings = {g["rating"] for g in gold.values()}
    assert {"False", "True", "Mixture", "Satire", "Outdated", "Unproven", "Fake"} <= ratings
    assert any(g["image_size"] and min(g["image_size"]) < 200 for g in gold.values())


def test_generated_content_is_labelled_as_generated():
    readme = (SITE / "README.md").read_text()
    assert "generated" in readme.lower() and "not the original images" in readme
