"""A loopback web of fact-check pages: files under a folder served by path on 127.0.0.1, for crawls of
other fact-checkers than Snopes in tests and demos (the multi-site sample, the real saved pages).

``robots.txt`` is served from the folder when it has one; every path in ``busy`` answers its first
request with 503 and ``Retry-After: 1`` (the crawler must wait and come back); ``placeholder`` in a
feed, sitemap or robots.txt (``.json``, ``.xml``, ``.txt``) is served as the server's own address.
``requests`` records ``(path, status)`` of every request, in arrival order.
"""

from __future__ import annotations

import mimetypes
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rwpost.testing.server import LoopbackHandler, LoopbackServer


class _FolderHandler(LoopbackHandler):
    def do_GET(self) -> None:
        owner: FolderServer = self.owner
        path = urlsplit(self.path).path
        status, headers, body = owner.answer(path)
        with owner.lock:
            owner.requests.append((path, status))
        self.reply(status, headers, body)


class FolderServer(LoopbackServer):
    """Serve ``root``'s files by path (``/a/b/`` serves ``a/b/index.html``)."""

    handler = _FolderHandler
    thread_name = "folder-server"

    def __init__(
        self, root: Path, *, busy: tuple[str, ...] = (), placeholder: str | None = None, port: int = 0
    ) -> None:
        super().__init__(port)
        self.root = Path(root).resolve()
        self.placeholder = placeholder.encode() if placeholder else None
        self.busy = set(busy)
        self.lock = threading.Lock()
        self.requests: list[tuple[str, int]] = []

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            if path in self.busy:
                self.busy.discard(path)
                return 503, {"Retry-After": "1", "Content-Type": "text/plain"}, b"busy, come back"
        relative = unquote(path).lstrip("/")
        target = (self.root / relative).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(self.root) or not target.is_file():
            return 404, {"Content-Type": "text/plain"}, b"not found"
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/json", "application/xml"):
            kind += "; charset=utf-8"
        body = target.read_bytes()
        if self.placeholder and target.suffix in (".xml", ".txt", ".json"):
            body = body.replace(self.placeholder, self.base_url.encode())
        return 200, {"Content-Type": kind}, body
