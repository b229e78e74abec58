"""The crawl stage as `dvc repro` runs it: it serves the bundled sample site and crawls all of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwpost.sample.build import load_gold
from tests.conftest import ROOT, read_rows

pytestmark = pytest.mark.slow


SITE = ROOT / "data" / "sample" / "site"


GOLD = {g["id"]: g for g in load_gold(SITE)}


def read_store(out: Path) -> list[dict]:
    return read_rows(out / "articles.jsonl")


def test_dvc_stage_serves_the_bundled_site_and_crawls_it(tmp_path, capsys):
    from rwpost.stages import crawl as stage
    from rwpost.stages.base import run_stage

    params = {
        "crawl": {
            "start_url": None,
            "sample_site": str(SITE),
            "out": str(tmp_path / "stage"),
            "since": None,
            "until": None,
            "max_articles": 0,
            "user_agent": None,
            "contact": None,
            "throttle": False,
            "allow_loopback": False,
            "download_images": False,
            "max_image_bytes": 10485760,
        }
    }
    run_stage(stage, params)
    records = read_store(tmp_path / "stage")
    assert {g["id"] for g in GOLD.values()} <= {r["id"] for r in records}
    assert all(r["images"] == [] for r in records) and not (tmp_path / "stage" / "images").exists()
    assert "crawl: 111 articles" in capsys.readouterr().out
