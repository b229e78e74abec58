"""Serve a built sample site on 127.0.0.1 (``rwpost sample serve``), hostile behaviours included.

Files are served as built, with the loopback address put into robots.txt and the sitemaps; the live
site's sitemaps (``sitemaps/``) only on the host name :data:`SITEMAP_HOST`, as Snopes serves them from
media.snopes.com and not from www.snopes.com. The server
itself plays the hostile pages that need behaviour (500 then success, 429 with Retry-After, a redirect
loop, a very large page, an image where an article should be) and, for the benchmark, generated
synthetic pages.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from rwpost.errors import RwpostError
from rwpost.sample.build import SITE_BASE_TOKEN, bundled, load_gold
from rwpost.sample.hostile import HOSTILE_HOST
from rwpost.snopes.layouts import LAYOUT_2020S
from rwpost.testing.server import LoopbackHandler, LoopbackServer
from rwpost.urls import url_host, url_parts

SITEMAP_HOST = "localhost"
"""The host name (of the same loopback server) that serves ``sitemaps/``: the sample's media.snopes.com."""
SITEMAPS_PATH = "/sitemaps/"

_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".jpg": "image/jpeg",
    ".png": "image/png",
}


class _SiteHandler(LoopbackHandler):
    """GET only: the answer comes from :meth:`SampleServer.respond`, and the request is recorded."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server: SampleServer = self.owner
        path = url_parts(self.path).path
        host = url_host("//" + self.headers.get("Host", ""))
        server.wait_if_held(path)
        status, headers, body = server.respond(path, host)
        with server._lock:
            server.requests.append(("GET", path, status))
        self.reply(status, headers, body)


class SampleServer(LoopbackServer):
    """A threaded HTTP server for the sample site on 127.0.0.1, with the hostile behaviours built in.

    It records every request (method, path, status) in :attr:`requests` so tests can check what the
    crawler fetched. ``synthetic`` adds that many generated article pages (for the benchmark), listed
    under ``/synthetic/`` with pagination. :meth:`hold` keeps chosen requests waiting until
    :meth:`release`: a test that stops a crawl mid-way holds the rest of the site, so the crawl cannot have
    finished before it is stopped, however fast the machine.
    """

    handler = _SiteHandler
    thread_name = "sample-site"

    def __init__(
        self, site_dir: Path, port: int = 0, synthetic: int = 0, huge_bytes: int = 6_000_000
    ) -> None:
        self.site_dir = bundled(Path(site_dir))  # the default data/sample/site is found from any folder
        if not (self.site_dir / "robots.txt").exists():
            raise RwpostError(
                f"{self.site_dir}: not a built sample site (no robots.txt; run rwpost sample build)"
            )
        self.synthetic = synthetic
        self.huge_bytes = huge_bytes
        self.requests: list[tuple[str, str, int]] = []
        self._hits: dict[str, int] = {}
        self._lock = threading.Lock()
        self._template: str | None = None
        self._held: Callable[[str], bool] | None = None
        self._released = threading.Event()
        super().__init__(port)

    def hold(self, when: Callable[[str], bool]) -> None:
        """From now until :meth:`release`, a request whose path ``when`` accepts waits before it is answered
        (``when`` runs in the request's thread, for each request, and may look at anything)."""
        self._released.clear()
        self._held = when

    def release(self) -> None:
        """Answer the held requests and hold no more (stopping the server releases them too)."""
        self._held = None
        self._released.set()

    def wait_if_held(self, path: str) -> None:
        """Block the calling request thread while ``path`` is held."""
        when = self._held
        if when is not None and when(path):
            self._released.wait()

    def stop(self) -> None:
        self.release()
        super().stop()

    def hit(self, path: str) -> int:
        """Count a request to ``path``; returns how many there have been, this one included."""
        with self._lock:
            self._hits[path] = self._hits.get(path, 0) + 1
            return self._hits[path]

    @property
    def sitemap_base(self) -> str:
        """Where the live site's sitemaps are served (``--sitemap-base`` of a ``--sitemaps`` crawl)."""
        return f"http://{SITEMAP_HOST}:{self.port}{SITEMAPS_PATH}"

    def respond(self, path: str, host: str = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one GET to ``host`` (the whole site logic, also used without a
        socket)."""
        count = self.hit(path)
        if path.startswith(SITEMAPS_PATH) != (host == SITEMAP_HOST) and path != "/robots.txt":
            return 404, {"Content-Type": "text/plain"}, b"not found on this host"
        if path == "/fact-check/hostile-flaky/" and count == 1:
            return 500, {"Retry-After": "1", "Content-Type": "text/plain"}, b"temporary failure"
        if path == "/fact-check/hostile-busy/" and count == 1:
            return 429, {"Retry-After": "1", "Content-Type": "text/plain"}, b"too many requests"
        if path == "/fact-check/hostile-loop/":
            return 302, {"Location": "/fact-check/hostile-loop-back/"}, b""
        if path == "/fact-check/hostile-loop-back/":
            return 302, {"Location": "/fact-check/hostile-loop/"}, b""
        if path == "/fact-check/hostile-binary/":
            return (
                200,
                {"Content-Type": "image/png"},
                (self.site_dir / "uploads" / "hostile-bomb.png").read_bytes(),
            )
        if path == "/fact-check/hostile-huge/":
            return 200, {"Content-Type": _CONTENT_TYPES[".html"]}, self._huge_page()
        if self.synthetic and (path.startswith("/synthetic/") or path.startswith("/fact-check/synthetic-")):
            body = self._synthetic(path)
            if body is not None:
                return 200, {"Content-Type": _CONTENT_TYPES[".html"]}, body
        target = (self.site_dir / unquote(path).lstrip("/")).resolve()
        if not str(target).startswith(str(self.site_dir.resolve())):
            return 404, {"Content-Type": "text/plain"}, b"not found"
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            return 404, {"Content-Type": "text/html"}, b"<html><body><h1>404 Not Found</h1></body></html>"
        body = target.read_bytes()
        if target.suffix in (".xml", ".txt"):
            body = body.replace(SITE_BASE_TOKEN.encode(), self.base_url.encode())
            if path == "/sitemap.xml" and self.synthetic:
                body = body.replace(b"</urlset>", self._synthetic_sitemap_entries() + b"</urlset>")
        content_type = _CONTENT_TYPES.get(target.suffix, "application/octet-stream")
        return 200, {"Content-Type": content_type}, body

    def _huge_page(self) -> bytes:
        filler = "<p>" + "padding text of a very large page " * 30 + "</p>\n"
        head = "<html><head><title>Huge page</title></head><body><main>"
        body = filler * (self.huge_bytes // len(filler) + 1)
        return (head + body + "</main></body></html>").encode()

    def _template_page(self) -> str:
        if self._template is None:
            gold = load_gold(self.site_dir)
            first = next(g for g in gold if g["layout"] == LAYOUT_2020S)
            self._template = (self.site_dir / first["page"].lstrip("/") / "index.html").read_text("utf-8")
            self._template_url = first["news_url"]
            self._template_path = first["page"]
        return self._template

    def _synthetic(self, path: str) -> bytes | None:
        match = re.fullmatch(r"/fact-check/synthetic-(\d+)/", path)
        if match and int(match.group(1)) < self.synthetic:
            number = int(match.group(1))
            page = self._template_page()
            url = f"{HOSTILE_HOST}/fact-check/synthetic-{number}/"
            page = page.replace(self._template_url, url).replace(self._template_path, path)
            return page.replace("<h1>", f"<h1>Synthetic page {number}: ", 1).encode()
        match = re.fullmatch(r"/synthetic/(?:page/(\d+)/)?", path)
        if match:
            number = int(match.group(1) or 1)
            items = [
                f"/fact-check/synthetic-{i}/"
                for i in range((number - 1) * 50, min(number * 50, self.synthetic))
            ]
            if not items:
                return None
            rows = "".join(
                f'<article class="article_wrapper"><a class="outer_article_link_wrapper" href="{p}">'
                f'<h3 class="article_title">Synthetic {p}</h3></a></article>'
                for p in items
            )
            nxt = (
                f'<a class="next-button" href="/synthetic/page/{number + 1}/">Next</a>'
                if number * 50 < self.synthetic
                else ""
            )
            return f"<html><body><div class='article_list'>{rows}</div>{nxt}</body></html>".encode()
        return None

    def _synthetic_sitemap_entries(self) -> bytes:
        return b"".join(
            f"<url><loc>{self.base_url}/fact-check/synthetic-{i}/</loc></url>\n".encode()
            for i in range(self.synthetic)
        )


def serve_site(site_dir: Path, port: int = 8000, synthetic: int = 0) -> None:
    """Serve the sample site on 127.0.0.1 until interrupted."""
    server = SampleServer(site_dir, port=port, synthetic=synthetic)
    print(f"serving {server.site_dir} on {server.base_url}/ (Ctrl-C to stop)", flush=True)
    server.serve_forever()
