"""The bundled Snopes-like site: reproducible from the released records, small, and hostile on purpose."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

from rwpost.ids import record_id
from rwpost.sample.build import RELEASED_FILES, build_site, load_gold
from rwpost.sample.serve import SampleServer

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "data" / "sample" / "site"
RELEASED = ROOT / "data" / "sample" / "released"


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


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
        assert page["claim"] == row["claim"] and page["category"] == row["category"]
        assert page["date"] == row["claim_time"]
        assert (SITE / page["page"].lstrip("/") / "index.html").is_file()
    ratings = {g["rating"] for g in gold.values()}
    assert {"False", "True", "Mixture", "Satire", "Outdated", "Unproven", "Fake"} <= ratings
    assert any(g["image_size"] and min(g["image_size"]) < 200 for g in gold.values())


def test_generated_content_is_labelled_as_generated():
    readme = (SITE / "README.md").read_text()
    assert "generated" in readme.lower() and "not the original images" in readme


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # report the 302 itself
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_server_plays_the_hostile_behaviours():
    with SampleServer(SITE) as server:
        base = server.base_url
        assert fetch(f"{base}/fact-check/hostile-flaky/")[:2][0] == 500
        assert fetch(f"{base}/fact-check/hostile-flaky/")[0] == 200
        status, headers, _ = fetch(f"{base}/fact-check/hostile-busy/")
        assert status == 429 and headers["Retry-After"] == "1"
        status, headers, _ = fetch(f"{base}/fact-check/hostile-loop/")
        assert status == 302 and headers["Location"] == "/fact-check/hostile-loop-back/"
        assert len(fetch(f"{base}/fact-check/hostile-huge/")[2]) > 5 * 1024 * 1024
        assert fetch(f"{base}/fact-check/hostile-gone/")[0] == 404
        assert fetch(f"{base}/../../etc/passwd")[0] == 404
        robots = fetch(f"{base}/robots.txt")[2].decode()
        assert f"Sitemap: {base}/sitemap.xml" in robots and "Disallow: /private/" in robots
        assert f"<loc>{base}/fact-check/" in fetch(f"{base}/sitemap.xml")[2].decode()
        status, headers, body = fetch(f"{base}/uploads/hostile-not-an-image.jpg")
        assert headers["Content-Type"] == "image/jpeg" and body.startswith(b"<html>")
        assert [path for _, path, _ in server.requests][:2] == ["/fact-check/hostile-flaky/"] * 2


def test_server_adds_synthetic_pages_for_the_benchmark():
    with SampleServer(SITE, synthetic=120) as server:
        listing = fetch(f"{server.base_url}/synthetic/page/3/")[2].decode()
        assert "/fact-check/synthetic-100/" in listing and "next-button" not in listing
        page = fetch(f"{server.base_url}/fact-check/synthetic-7/")[2].decode()
        assert 'href="https://sample.rwpost.invalid/fact-check/synthetic-7/"' in page
        assert fetch(f"{server.base_url}/fact-check/synthetic-120/")[0] == 404


def test_live_site_sitemaps_are_served_only_on_the_sitemap_host():
    """``sitemaps/`` as Snopes serves it from media.snopes.com: one sitemap per month of publication
    listing that month's articles (on the site's own host), the latest and the news sitemap."""
    gold = load_gold(SITE)
    with SampleServer(SITE) as server:
        status, _, body = fetch(server.sitemap_base + "sitemap-articles-2023-05.xml")
        assert status == 200
        may = {g["page"] for g in gold if (g["date"] or "").startswith("2023-05")}
        locs = set(re.findall(r"<loc>([^<]+)</loc>", body.decode()))
        assert {f"{server.base_url}{p}" for p in may} < locs  # plus the generated news piece and feature
        assert fetch(f"{server.base_url}/sitemaps/sitemap-articles-2023-05.xml")[0] == 404
        assert fetch(server.sitemap_base.replace("/sitemaps/", "/fact-check/"))[0] == 404
        latest = fetch(server.sitemap_base + "sitemap-latest.xml")[2].decode()
        news = fetch(server.sitemap_base + "sitemap-news.xml")[2].decode()
    newest = sorted((g for g in gold if g["date"]), key=lambda g: g["date"], reverse=True)
    assert f"{newest[0]['page']}</loc>" in latest and f"{newest[0]['page']}</loc><news:news>" in news
    monthly = sorted((SITE / "sitemaps").glob("sitemap-articles-*.xml"))
    listed = [loc for path in monthly for loc in re.findall(r"<loc>[^<]+</loc>", path.read_text())]
    assert len(listed) == len(set(listed)) == sum(1 for g in gold if g["date"]) + 2
