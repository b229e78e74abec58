"""The bundled sample site's generator (sample/build.py)."""

from __future__ import annotations

from rwpost.sample.build import load_gold
from tests.conftest import ROOT

SITE = ROOT / "data" / "sample" / "site"


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
