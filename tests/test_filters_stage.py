"""The filter stage end to end on small stage files written here (generated, not real records)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image
from skimage import data as skdata

from rwpost.cli import main
from rwpost.ids import record_id
from rwpost.io import iter_jsonl, sha256_hex, write_jsonl
from rwpost.records import CrawledArticle, Decision, Extraction, ImageFile, Post, Provenance, TaggedArticle


def _write_stage_inputs(root: Path) -> dict[str, str]:
    crawl = root / "crawl"
    (crawl / "images").mkdir(parents=True)
    photo = crawl / "images" / "coffee.jpg"
    Image.fromarray(skdata.coffee()).save(photo)
    urls = {name: f"https://www.snopes.com/fact-check/{name}/" for name in ("coffee", "short", "noimage")}
    ids = {name: record_id(url) for name, url in urls.items()}
    img_url = "https://www.snopes.com/uploads/coffee.jpg"
    tagged = [
        TaggedArticle(
            id=ids["coffee"],
            news_url=urls["coffee"],
            claim="A photograph shows a cup of coffee.",
            text="t",
            word_count=400,
        ),
        TaggedArticle(
            id=ids["short"], news_url=urls["short"], claim="A photo shows a cat.", text="t", word_count=30
        ),
        TaggedArticle(
            id=ids["noimage"],
            news_url=urls["noimage"],
            claim="A video shows a dog.",
            text="t",
            word_count=400,
        ),
    ]
    write_jsonl(root / "tagged.jsonl", tagged)
    with open(root / "tagged.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "rw-broken", "news_url": "x"}) + "\n")  # no text, no word_count
    extractions = [
        Extraction(
            id=i,
            news_url=urls[n],
            post=Post(text="post", image_links=[img_url if n != "noimage" else "https://x/y.jpg"]),
            provenance=Provenance(backend="offline"),
        )
        for n, i in ids.items()
    ]
    write_jsonl(root / "extractions.jsonl", extractions)
    image = ImageFile(
        url=img_url, path="images/coffee.jpg", sha256=sha256_hex(photo.read_bytes()), width=400, height=400
    )
    crawled = [
        CrawledArticle(
            id=ids[n],
            url=urls[n],
            http_status=200,
            fetched_at=datetime(2024, 1, 1, tzinfo=UTC),
            images=[image],
        )
        for n in ("coffee", "short")
    ]
    write_jsonl(crawl / "articles.jsonl", crawled)
    return ids


def test_stage_writes_decisions_verdicts_funnel_and_rejects(tmp_path: Path) -> None:
    ids = _write_stage_inputs(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text(
        "filter:\n  size_limits:\n    min_words: 90\n  watermark:\n    require_isolated: true\n",
        encoding="utf-8",
    )
    out = tmp_path / "filter"
    args = [
        "filter",
        "run",
        "--tagged",
        str(tmp_path / "tagged.jsonl"),
        "--extractions",
        str(tmp_path / "extractions.jsonl"),
        "--crawl",
        str(tmp_path / "crawl" / "articles.jsonl"),
        "--out",
        str(out),
        "--params",
        str(params),
        "--json",
    ]
    assert main(args) == 0
    funnel = json.loads((out / "funnel.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["input"], summary["kept"], summary["rejected_input_lines"]) == (3, 1, 1)
    assert summary["params"]["watermark"] == {"require_isolated": True}
    assert funnel[0] == {**funnel[0], "step": "filter: size", "in": 3, "removed": 2, "out": 1}
    assert funnel[0]["reasons"] == {"image_missing": 1, "too_short": 1}
    decisions = [Decision.model_validate(obj) for _n, obj in iter_jsonl(out / "decisions.jsonl")]
    assert {(d.id, d.filter) for d in decisions} >= {
        (ids["coffee"], f) for f in ("size", "necessity", "watermark", "neardup")
    }
    verdicts = {obj["id"]: obj for _n, obj in iter_jsonl(out / "verdicts.jsonl")}
    assert verdicts[ids["coffee"]]["keep"] and verdicts[ids["coffee"]]["cluster_id"] == f"cl-{ids['coffee']}"
    assert verdicts[ids["short"]]["dropped_by"] == "size"
    (reject,) = [obj for _n, obj in iter_jsonl(out / "rejects.jsonl")]
    assert reject["id"] == "rw-broken" and reject["line"] == 4 and "tagged.jsonl:4" in reject["reason"]
    # a rerun measures nothing, and decisions served from the cache are the same bytes as measured ones
    cold = (out / "decisions.jsonl").read_bytes()
    assert main(args) == 0
    assert (out / "decisions.jsonl").read_bytes() == cold
    again = json.loads((out / "cache" / "last_run.json").read_text())
    assert [s["measured"] for s in again] == [0, 0, 0, 0]
    assert "measured" not in (out / "funnel.json").read_text()  # the hashed funnel holds no cache use


def test_dvc_stage_reads_paths_and_thresholds_from_params(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    _write_stage_inputs(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text(
        "filter:\n"
        f"  tagged: {tmp_path / 'tagged.jsonl'}\n"
        f"  extractions: {tmp_path / 'extractions.jsonl'}\n"
        f"  crawl: {tmp_path / 'crawl'}\n"
        f"  out: {tmp_path / 'out'}\n"
        "  order: [size, necessity]\n"
        "  size_limits: {min_words: 10}\n",
        encoding="utf-8",
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.filter", "--params", str(params)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    funnel = json.loads((tmp_path / "out" / "funnel.json").read_text())
    assert [s["step"] for s in funnel] == ["filter: size", "filter: necessity"]
    assert funnel[0]["reasons"] == {"image_missing": 1}  # 30 words now passes min_words 10
