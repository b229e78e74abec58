"""The crawler stores the video files a page embeds directly (``<video src>`` / ``<source>``), bounded like
images, and never a platform's player: a real Scrapy crawl of a one-article site built in the test from a
page of the sample site (the sample site itself has no video page), served by the sample server."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from rwpost.crawl import CrawlConfig, run_crawl
from rwpost.sample.serve import SampleServer
from tests.conftest import ROOT

SITE = ROOT / "data" / "sample" / "site"
SLUG = "alaska-earthquake-road-repair"
VIDEOS = """
<video controls src="/uploads/clip.mp4"></video>
<video controls><source src="/uploads/clip.mp4" type="video/mp4"></video>
<video controls><source src="/uploads/big.webm" type="video/webm"></video>
<video controls src="/uploads/page.mp4"></video>
<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>
"""
"""The players put into the article: a small MP4 (twice: stored once), a WebM over the cap, an "MP4" that
is an HTML page, and a YouTube player (a platform: never downloaded)."""

CAP = 200_000


def write_clip(path: Path) -> bytes:
    """A 1 s, 10 fps, 32 x 24 MP4 written with OpenCV."""
    cv2 = pytest.importorskip("cv2")
    import numpy as np

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10.0, (32, 24))
    for i in range(10):
        writer.write(np.full((24, 32, 3), (20 * i, 80, 160), np.uint8))
    writer.release()
    return path.read_bytes()


def video_site(root: Path) -> bytes:
    """A site of one article (a sample-site page with :data:`VIDEOS` in its body) and its listing."""
    shutil.copy(SITE / "robots.txt", root / "robots.txt")
    page = (SITE / "fact-check" / SLUG / "index.html").read_text(encoding="utf-8")
    assert "<p>The post read:</p>" in page
    (root / "fact-check" / SLUG).mkdir(parents=True)
    (root / "fact-check" / SLUG / "index.html").write_text(
        page.replace("<p>The post read:</p>", VIDEOS + "<p>The post read:</p>"), encoding="utf-8"
    )
    listing = (
        '<html><head><title>Fact Checks</title></head><body><main id="main-list"><div class="article_list">'
        f'<article class="article_wrapper"><a class="outer_article_link_wrapper" href="/fact-check/{SLUG}/">'
        '<h3 class="article_title">Fact check (True): a road</h3><span class="article_date">'
        '<time datetime="2018-12-31">December 31, 2018</time></span></a></article></div></main></body></html>'
    )
    (root / "fact-check" / "index.html").write_text(listing, encoding="utf-8")
    (root / "uploads").mkdir()
    shutil.copy(next((SITE / "uploads").glob("rw-*.jpg")), root / "uploads" / "rw-e687af5679dace4a.jpg")
    (root / "uploads" / "big.webm").write_bytes(b"\x1a\x45\xdf\xa3" + b"\x00" * (CAP + 10))
    (root / "uploads" / "page.mp4").write_bytes(b"<html><body>not a video</body></html>")
    return write_clip(root / "uploads" / "clip.mp4")


def test_a_page_embedding_video_files_stores_them_bounded_and_never_a_platform_player(tmp_path):
    site, out = tmp_path / "site", tmp_path / "crawl"
    site.mkdir()
    clip = video_site(site)
    with SampleServer(site) as server:
        config = CrawlConfig(
            start_url=f"{server.base_url}/fact-check/",
            out=out,
            since="any",
            throttle=False,
            allow_loopback=True,
            contact="tests@rwpost.invalid",
            max_video_bytes=CAP,
        )
        run_crawl(config)
        requested = {path for _, path, _ in server.requests}
    [record] = [json.loads(line) for line in (out / "articles.jsonl").read_text().splitlines()]
    assert record["parse_error"] is None and len(record["images"]) == 1
    videos = {v["url"].rsplit("/", 1)[-1]: v for v in record["videos"]}
    assert len(record["videos"]) == 3
    assert list(videos) == ["clip.mp4", "big.webm", "page.mp4"]  # the player's source is listed once
    stored = videos["clip.mp4"]
    digest = hashlib.sha256(clip).hexdigest()
    assert stored == {
        "url": stored["url"],
        "sha256": digest,
        "path": f"videos/{digest}.mp4",
        "format": "mp4",
        "size_bytes": len(clip),
        "error": None,
    }
    assert (out / stored["path"]).read_bytes() == clip
    assert videos["big.webm"]["error"] == f"refused: larger than the video size cap ({CAP} bytes)"
    assert videos["big.webm"]["path"] is None
    assert videos["page.mp4"]["error"] == "not a video: the bytes are no known video container"
    assert sorted(p.name for p in (out / "videos").iterdir()) == [f"{digest}.mp4"]
    assert not any("youtube" in path for path in requested)
    # the crawl store is a video folder for FactGuard: a sample whose video_link is the clip's URL
    from rwpost.evaluate.video import find_video, probe

    found = find_video("sample-1", stored["url"].replace("http://", "https://"), out)
    assert found == out / stored["path"] and probe(found).frames == 10


def test_no_videos_keeps_the_record_as_before(tmp_path):
    site, out = tmp_path / "site", tmp_path / "crawl"
    site.mkdir()
    video_site(site)
    with SampleServer(site) as server:
        config = CrawlConfig(
            start_url=f"{server.base_url}/fact-check/",
            out=out,
            since="any",
            throttle=False,
            allow_loopback=True,
            contact="tests@rwpost.invalid",
            download_videos=False,
        )
        run_crawl(config)
        requested = {path for _, path, _ in server.requests}
    [line] = (out / "articles.jsonl").read_text().splitlines()
    assert '"videos"' not in line and not (out / "videos").exists()
    assert not {"/uploads/clip.mp4", "/uploads/big.webm"} & requested
