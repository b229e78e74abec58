"""The view's web app (Starlette): a JSON API over the folders it was given, and the static page.

Read-only: every route is a GET. One page of rows at a time comes from the server (:mod:`rwpost.view.tables`);
a file is served only from inside a folder it was given (:func:`rwpost.view.folders.inside`), and only
an image or a video. Every JSON answer passes through :func:`rwpost.secrets.redact`, and a failure is one
line in the answer and in the terminal, never a traceback. The page loads nothing from elsewhere (its
Content-Security-Policy says so to the browser).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rwpost.errors import RecordError
from rwpost.io import read_json
from rwpost.secrets import redact
from rwpost.view.folders import OutsideFolder, Source, discover, inside
from rwpost.view.readers import Annotations, Run, Version, Work, compare, leaderboard
from rwpost.view.tables import page_bounds

STATIC = Path(__file__).parent / "static"
MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
}
"""What ``/files`` serves: images and videos, nothing else of a folder."""
CSP = (
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self'; connect-src 'self'; "
    "script-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
)
log = logging.getLogger("rwpost.view")


class Secret(JSONResponse):
    """A JSON answer with every secret the process knows redacted."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, default=str)
        return redact(text).encode("utf-8")


def _finite(value: Any) -> Any:
    """NaN and infinities (a run's metrics may hold them) as None, which JSON can carry."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _sniff(data: bytes) -> str:
    for head, kind in ((b"\x89PNG", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"GIF8", "image/gif")):
        if data.startswith(head):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


class Viewer:
    """The folders given, discovered once, and each opened on first use (then kept)."""

    def __init__(self, folders: list[str | os.PathLike[str]]) -> None:
        self.sources, self.problems = discover(folders)
        self.by_key = {s.key: s for s in self.sources}
        self._opened: dict[str, Any] = {}
        self._lock = threading.Lock()

    def source(self, key: str, kind: str) -> Source:
        source = self.by_key.get(key)
        if source is None or source.kind != kind:
            raise HTTPException(404, f"no {kind} {key!r} among the folders given")
        return source

    def opened(self, key: str, kind: str) -> Any:
        source = self.source(key, kind)
        with self._lock:
            value = self._opened.get(key)
            stale = isinstance(value, Run) and value.scored is not None and not value.scored.fresh()
            if value is None or stale:
                opener: Callable[[Source], Any] = {
                    "version": Version.open,
                    "work": Work.open,
                    "run": Run.open,
                    "annotations": Annotations.open,
                }[kind]
                value = self._opened[key] = opener(source)
                # what was opened stays for the server's life: out of the collector's sight, a page never
                # waits for a full collection walking every index (hundreds of ms on a 10k-sample run)
                gc.freeze()
        return value

    def of_kind(self, kind: str) -> list[Any]:
        return [self.opened(s.key, kind) for s in self.sources if s.kind == kind]

    def run_key(self, path: str | None) -> str | None:
        """The key of the run at ``path`` (as a leaderboard names it), when that run is shown."""
        if not path:
            return None
        for source in self.sources:
            if source.kind == "run" and (
                source.path.as_posix().endswith("/" + path.strip("/")) or str(source.path) == path
            ):
                return source.key
        return None


def run_title(source: Source) -> str:
    """A run's name for lists (its metrics' or manifest's ``system``) without opening the whole run."""
    for name in ("metrics.json", "manifest.json"):
        try:
            value = read_json(source.path / name)
        except RecordError:
            continue
        if isinstance(value, dict) and isinstance(value.get("system"), str):
            return value["system"]
    return source.label


def build_app(folders: list[str | os.PathLike[str]], *, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over ``folders`` (``allowed_hosts``: Host headers answered; others get 400, so a page of
    another site cannot reach the view through a rebound DNS name)."""
    viewer = Viewer(folders)
    hosts = allowed_hosts

    def answer(content: Any, status: int = 200) -> Response:
        return Secret(_finite(content), status_code=status)

    def q(request: Request, name: str) -> str:
        return request.query_params.get(name, "").strip()

    def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    def sources(request: Request) -> Response:
        listed = []
        for source in viewer.sources:
            entry = source.describe()
            if source.kind == "run":
                entry["title"] = run_title(source)
            listed.append(entry)
        return answer({"sources": listed, "problems": viewer.problems})

    def version(request: Request) -> Response:
        return answer(viewer.opened(request.path_params["key"], "version").summary())

    def version_samples(request: Request) -> Response:
        data: Version = viewer.opened(request.path_params["key"], "version")
        start, size = page_bounds(q(request, "offset") or 0, q(request, "limit") or 50)
        filters = {k: v for k, v in request.query_params.items() if k not in ("offset", "limit", "q")}
        return answer(data.page(filters, q(request, "q"), start, size))

    def sample(request: Request) -> Response:
        sample_id = request.path_params["id"]
        out: dict[str, Any] = {"id": sample_id, "in": []}
        for data in viewer.of_kind("version"):
            found = data.sample(sample_id)
            if found is not None:
                out.setdefault("sample", found)
                out.setdefault("version", data.source.key)
                out["in"].append(data.source.label)
        out["work"] = [w.sample(sample_id) for w in viewer.of_kind("work")]
        verdicts = []
        for export in viewer.of_kind("annotations"):
            verdicts.extend(export.sample(sample_id))
        out["annotations"] = verdicts
        if "sample" not in out and not any(w.get("tagged") or w.get("decisions") for w in out["work"]):
            return answer({"error": f"no sample {sample_id!r} in the folders given"}, 404)
        return answer(out)

    def sample_runs(request: Request) -> Response:
        """The runs that scored a sample (asked after the sample page shows: it opens every run)."""
        sample_id, found = request.path_params["id"], []
        for source in viewer.sources:
            if source.kind == "run":
                run: Run = viewer.opened(source.key, "run")
                if run.scored is not None and sample_id in run.scored.offsets:
                    found.append({"key": source.key, "title": run.title()})
        return answer({"id": sample_id, "runs": found})

    def image(request: Request) -> Response:
        key, sample_id = request.path_params["key"], request.path_params["id"]
        kind = viewer.by_key[key].kind if key in viewer.by_key else ""
        if kind not in ("version", "run"):
            raise HTTPException(404, f"no version or run {key!r}")
        data = viewer.opened(key, kind).image(sample_id)
        if not data:
            raise HTTPException(404, f"no image for {sample_id!r}")
        return Response(data, media_type=_sniff(data), headers={"Cache-Control": "max-age=3600"})

    def work(request: Request) -> Response:
        return answer(viewer.opened(request.path_params["key"], "work").funnel())

    def work_rejects(request: Request) -> Response:
        data: Work = viewer.opened(request.path_params["key"], "work")
        start, size = page_bounds(q(request, "offset") or 0, q(request, "limit") or 50)
        return answer(
            data.reject_page(q(request, "stage"), q(request, "reason"), q(request, "q"), start, size)
        )

    def run(request: Request) -> Response:
        return answer(viewer.opened(request.path_params["key"], "run").summary())

    def run_samples(request: Request) -> Response:
        data: Run = viewer.opened(request.path_params["key"], "run")
        start, size = page_bounds(q(request, "offset") or 0, q(request, "limit") or 50)
        rows = data.select(dict(request.query_params), q(request, "q"))
        return answer({"total": len(rows), "offset": start, "rows": data.page(rows[start : start + size])})

    def run_sample(request: Request) -> Response:
        data: Run = viewer.opened(request.path_params["key"], "run")
        found = data.sample(request.path_params["id"])
        if found is None:
            return answer({"error": f"no sample {request.path_params['id']!r} in this run"}, 404)
        return answer(found)

    def compare_runs(request: Request) -> Response:
        a: Run = viewer.opened(request.path_params["a"], "run")
        b: Run = viewer.opened(request.path_params["b"], "run")
        start, size = page_bounds(q(request, "offset") or 0, q(request, "limit") or 50)
        return answer(compare(a, b, q(request, "only") or "disagree", start, size))

    def board(request: Request) -> Response:
        out = leaderboard(viewer.source(request.path_params["key"], "leaderboard"))
        for row in out["rows"]:
            row["run_key"] = viewer.run_key(row.get("run"))
        return answer(out)

    def files(request: Request) -> Response:
        key = request.path_params["key"]
        source = viewer.by_key.get(key)
        if source is None:
            raise HTTPException(404, f"no folder {key!r}")
        try:
            target = inside(source.path, request.path_params["path"])
        except OutsideFolder as exc:
            raise HTTPException(403, str(exc)) from None
        media = MEDIA_TYPES.get(target.suffix.lower())
        if media is None:
            raise HTTPException(404, "only images and videos are served")
        if not target.is_file():
            raise HTTPException(404, "not found")
        return FileResponse(target, media_type=media)

    async def not_found(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith(("/api/", "/files/")):
            return answer({"error": str(exc.detail)}, exc.status_code)
        return Response(str(exc.detail), status_code=exc.status_code, media_type="text/plain")

    async def failed(request: Request, exc: Exception) -> Response:
        line = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        log.error("rwpost view: %s %s: %s", request.method, request.url.path, redact(line))
        return answer({"error": line}, 500)

    routes = [
        Route("/", index),
        Route("/api/sources", sources),
        Route("/api/version/{key}", version),
        Route("/api/version/{key}/samples", version_samples),
        Route("/api/sample/{id}", sample),
        Route("/api/sample/{id}/runs", sample_runs),
        Route("/api/image/{key}/{id}", image),
        Route("/api/work/{key}", work),
        Route("/api/work/{key}/rejects", work_rejects),
        Route("/api/run/{key}", run),
        Route("/api/run/{key}/samples", run_samples),
        Route("/api/run/{key}/sample/{id}", run_sample),
        Route("/api/compare/{a}/{b}", compare_runs),
        Route("/api/leaderboard/{key}", board),
        Route("/files/{key}/{path:path}", files),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def guard(request: Request, call_next: Callable[[Request], Any]) -> Response:
        if request.method not in ("GET", "HEAD"):
            return Response("read-only: only GET", status_code=405, media_type="text/plain")
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if hosts is not None and host not in hosts:
            return Response(f"unexpected Host header {host!r}", status_code=400, media_type="text/plain")
        try:
            response = await call_next(request)
        except Exception as exc:  # one line in the page and the terminal, never a traceback
            response = await failed(request, exc)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found},
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
    )

    app.state.viewer = viewer
    return app
