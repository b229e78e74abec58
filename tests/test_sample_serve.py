"""The bundled sample site served (sample/serve.py): hostile behaviours, synthetic benchmark pages,
sitemaps only on their own host."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

from rwpost.sample.build import load_gold
from rwpost.sample.serve import SampleServer
from tests.conftest import ROOT

SITE = ROOT / "data" / "sample" / "site"


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


def test_a_held_request_is_answered_only_once_released_and_stopping_releases_it():
    """What a crawl test stops mid-way relies on: a held page cannot be answered before ``release``."""

    def get_in_thread(url: str, answers: list[int]) -> threading.Thread:
        def get() -> None:
            with urllib.request.urlopen(url, timeout=120) as response:
                answers.append(response.status)

        thread = threading.Thread(target=get)
        thread.start()
        return thread

    with SampleServer(SITE) as server:
        asked = threading.Event()

        def when(path: str) -> bool:
            if path == "/fact-check/":
                asked.set()
                return True
            return False

        server.hold(when)
        answers: list[int] = []
        thread = get_in_thread(f"{server.base_url}/fact-check/", answers)
        assert asked.wait(timeout=120)  # the request reached the hold
        assert fetch(f"{server.base_url}/robots.txt")[0] == 200  # what is not held is answered meanwhile
        assert answers == [] and [p for _, p, _ in server.requests] == ["/robots.txt"]
        server.release()
        thread.join(timeout=120)
        assert answers == [200]
        assert fetch(f"{server.base_url}/fact-check/")[0] == 200  # released: held no more

        held = threading.Event()
        server.hold(lambda path: held.set() or True)
        stopped: list[int] = []
        thread = get_in_thread(f"{server.base_url}/fact-check/page/2/", stopped)
        assert held.wait(timeout=120)
    thread.join(timeout=120)  # the server stopped with the request held: it was answered, not left hanging
    assert not thread.is_alive() and stopped == [200]
