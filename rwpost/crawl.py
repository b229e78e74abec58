"""Launch the Scrapy crawl (the ``snopes_crawler`` package) in a subprocess and follow its progress.

Twisted's reactor cannot be restarted within a process, so every crawl runs as
``python -m snopes_crawler.run``: from the repository's ``crawlers/`` in a checkout, else the
``snopes_crawler`` package installed with rwpost's wheel. ``rwpost`` never imports the crawler; it
passes a JSON config and reads JSON progress lines from the child's stdout.
The output folder layout is documented in ``crawlers/README.md``.

The child lives and dies with its parent: it runs in its own process group, the parent forwards
SIGINT/SIGTERM to it (Scrapy then stops gracefully, keeping its JOBDIR queue) and, on Linux, the
kernel kills it if the parent dies (``PR_SET_PDEATHSIG``): a graceful stop would go on fetching for no
one (from a sample site that died with the parent: every page and image "connection refused"), and the
next run discards the killed run's queue. A stopped crawl raises :class:`CrawlStopped` (exit 130 or 143,
"rerun to resume").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from rwpost.errors import ConfigError, RwpostError
from rwpost.images import FETCH_DELAY, MAX_IMAGE_BYTES
from rwpost.snopes.listing import SITEMAP_HOSTS
from rwpost.urls import ip_host, url_host, url_parts

NO_BOUND = ("", "any", "none", "null")

READERS = ("snopes", "sites")
"""The page readers a crawl or an import can use: the Snopes page model, or the multi-site reader."""

MAX_VIDEO_BYTES = 200 * 1024 * 1024
"""Largest video file a crawl keeps (200 MiB): a news clip a page embeds is a few to tens of MB."""
"""Spellings of "no bound" for a day of the date window (``--since any``, ``-a since=any``)."""


def parse_day(value: str | date | None) -> date | None:
    """A day of the date window from its ISO text; None (no bound) for None or any of :data:`NO_BOUND`."""
    if value is None or isinstance(value, date):
        return value
    if str(value).strip().lower() in NO_BOUND:
        return None
    return date.fromisoformat(str(value).strip())


def _day(value: Any) -> date | None:
    try:
        return parse_day(value)
    except ValueError:
        raise PydanticCustomError(
            "day", "expected a date like 2017-01-01 (or 'any'), got {value}", {"value": repr(value)}
        ) from None


def _delay(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        raise PydanticCustomError("delay", "expected 0 or more seconds, got {value}", {"value": value})
    return value


def _count(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        raise PydanticCustomError("count", "expected 0 (no limit) or more, got {value}", {"value": value})
    return value


Day = Annotated[date | None, BeforeValidator(_day)]


class CrawlConfig(BaseModel):
    """Everything one crawl run needs: the ``crawl`` stage's ``Params`` extends it (the one typed config of
    a crawl, for ``dvc repro`` and ``rwpost crawl``), and the crawler subprocess reads it back from JSON."""

    model_config = ConfigDict(extra="forbid")

    start_url: str | None = None
    """The listing page to start from; None: the stage serves the bundled sample site."""
    out: Path = Path("data/work/crawl")
    since: Day = None
    """None: no lower bound (the live site's RW-Post window starts 2017-01-01)."""
    until: Day = None
    """None: today."""
    max_articles: Annotated[int, BeforeValidator(_count)] = 0
    """0: no limit."""
    user_agent: str | None = None
    """None: the spider's ``rwpost-crawler/<version> (research crawler for the RW-Post fact-checking
    dataset)``; a feed is fetched as ``rwpost-crawler``. Either with `` contact: <contact>`` after it."""
    contact: str | None = None
    """Required for a live crawl; appended to the User-Agent."""
    throttle: bool = True
    """AutoThrottle and delays; false only for loopback sites."""
    delay: Annotated[float, BeforeValidator(_delay)] = FETCH_DELAY
    """Seconds between two requests to a site (jittered +-50%), and AutoThrottle's start delay (it then
    adapts to the site's latency, never below this); no effect with ``throttle: false``."""
    allow_loopback: bool = False
    download_images: bool = True
    max_image_bytes: PositiveInt = MAX_IMAGE_BYTES
    """Images over this size are refused (stored with the reason)."""
    download_videos: bool = True
    """Store the video files a page embeds directly (``<video src=...mp4>``; never a platform's player)."""
    max_video_bytes: PositiveInt = MAX_VIDEO_BYTES
    """Videos over this size are refused (stored with the reason)."""
    resume: bool = True
    """Continue the Scrapy queue of a stopped run (stored pages are skipped)."""
    retry_failed: bool = False
    """Fetch again pages stored with 5xx errors, redirect loops or oversized responses (pages that failed
    before any response came are fetched again by every run)."""
    progress_interval: float = 2.0
    sitemaps: bool = False
    """Discover from the site's sitemaps only (no listing walk): ``sitemap_urls``, else the live site's."""
    sitemap_urls: list[str] | None = None
    sitemap_base: str | None = None
    """With ``sitemaps``: where the site's sitemaps live (default ``https://media.snopes.com/sitemaps/``);
    a run reads ``sitemap-latest.xml``, ``sitemap-news.xml`` and ``sitemap-articles-YYYY-MM.xml`` there."""
    sitemap_hosts: list[str] | None = None
    """Hosts besides the start URL's and ``media.snopes.com`` allowed to serve sitemaps."""
    site_origin: str | None = None
    """The site's fixed origin (e.g. ``https://sample.rwpost.invalid``) when ``start_url`` is a mirror of it
    (the sample site on a random loopback port): URLs are stored under it and ``fetched_at`` is pinned, so
    two crawls of the same site give byte-identical stores. None: store what was fetched."""
    reader: Literal["snopes", "sites"] = "snopes"
    """The page reader: the Snopes page model, or ``sites`` for any other fact-checker (rwpost.sites):
    discovery from a ClaimReview feed and the sites' sitemaps, no Snopes listing walk."""
    feed: str | None = None
    """A ClaimReview feed (a file, or an http(s) URL fetched to ``<out>/feed.json`` first) whose review
    pages are crawled, the feed's fields kept as the fallback of each page's own; implies ``sites``."""
    preflight_timeout: float = 10.0
    """Seconds to wait for a TCP connection to the start URL's host before starting Scrapy."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Scrapy settings over the project's (e.g. a slower crawl in a test)."""

    @model_validator(mode="after")
    def _window_in_order(self) -> Self:
        if self.since and self.until and self.until < self.since:
            raise ValueError(f"--until {self.until} is before --since {self.since}: nothing to crawl")
        if self.feed and self.reader != "sites":
            self.reader = "sites"
        return self


class CrawlStopped(RwpostError):
    """The crawl was stopped by a signal; its queue is kept and a rerun resumes it."""

    def __init__(self, out_dir: Path, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        name = signal.Signals(signum).name
        super().__init__(f"crawl into {out_dir} stopped ({name}); rerun to resume")


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is a loopback address or ``localhost``."""
    host = url_host(url)
    if host == "localhost":
        return True
    address = ip_host(host)
    return address is not None and address.is_loopback


def check_feed(config: CrawlConfig) -> None:
    """A feed crawl's feed: a readable file, or an http(s) URL (loopback only with --allow-loopback); a
    crawl of the real web's review pages needs --contact and throttling."""
    feed = config.feed or ""
    if feed.startswith(("http://", "https://")):
        if is_loopback_url(feed) and not config.allow_loopback:
            raise ConfigError(f"--feed {feed} is a loopback address: pass --allow-loopback")
    elif not Path(feed).is_file():
        raise ConfigError(f"--feed {feed}: no such file (a ClaimReview feed file or an http(s) URL)")
    if not config.allow_loopback and not config.contact:
        raise ConfigError("--contact is required for a crawl of the real web (site operators must reach you)")
    if not config.throttle and not config.allow_loopback:
        raise ConfigError(
            "--no-throttle is only for loopback sites; a real site is crawled with AutoThrottle"
        )


def check_config(config: CrawlConfig) -> None:
    """Check a crawl's start URL and sitemaps before starting anything; raises :class:`ConfigError` naming
    the option."""
    if config.feed:
        check_feed(config)
        if not config.start_url:
            return
    start_url = config.start_url or ""
    parts = url_parts(start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--start-url: expected an http(s) URL, got {config.start_url!r}")
    if is_loopback_url(start_url) and not config.allow_loopback:
        raise ConfigError(f"--start-url {start_url} is a loopback address: pass --allow-loopback")
    if not is_loopback_url(start_url) and not config.contact:
        raise ConfigError("--contact is required for a crawl of the real web (site operators must reach you)")
    if not config.throttle and not is_loopback_url(start_url):
        raise ConfigError(
            "--no-throttle is only for loopback sites; a real site is crawled with AutoThrottle"
        )
    allowed = {parts.hostname.lower(), *SITEMAP_HOSTS, *(h.lower() for h in config.sitemap_hosts or [])}
    named = [("sitemap-url", u) for u in config.sitemap_urls or []]
    named += [("sitemap-base", config.sitemap_base)] if config.sitemap_base else []
    for option, url in named:
        where = url_parts(url)
        if where.scheme not in ("http", "https") or not where.hostname:
            raise ConfigError(f"--{option}: expected an http(s) URL, got {url!r}")
        if where.hostname.lower() not in allowed:
            raise ConfigError(
                f"--{option} {url}: {where.hostname} is not an allowed sitemap host "
                f"(the start URL's, {', '.join(SITEMAP_HOSTS)}; add it with --sitemap-host)"
            )


def find_crawlers_dir(explicit: Path | None = None) -> Path | None:
    """The folder holding the ``snopes_crawler`` package to run: ``explicit``, else the repository's
    ``crawlers/`` beside this package (a checkout), else None when ``snopes_crawler`` is installed (a
    wheel: nothing to add to the child's path). Nothing is imported."""
    if explicit is not None:
        if (Path(explicit) / "snopes_crawler" / "run.py").is_file():
            return Path(explicit).resolve()
        raise ConfigError(f"--crawlers-dir {explicit}: no snopes_crawler/run.py in it")
    checkout = Path(__file__).resolve().parents[1] / "crawlers"
    if (checkout / "snopes_crawler" / "run.py").is_file():
        return checkout
    if importlib.util.find_spec("snopes_crawler") is not None:
        return None
    raise ConfigError(
        "cannot find the crawler (the snopes_crawler package): reinstall rwpost or pass --crawlers-dir"
    )


def crawl_command(config: CrawlConfig) -> list[str]:
    """The subprocess command line of one crawl: the config as JSON (the out folder made absolute)."""
    config = CrawlConfig.model_validate(config.model_dump(include=set(CrawlConfig.model_fields)))
    config.out = config.out.resolve()
    return [sys.executable, "-m", "snopes_crawler.run", "--config", config.model_dump_json()]


def crawl_env(crawlers_dir: Path | None) -> dict[str, str]:
    """The child's environment: ours, with the crawler project and this rwpost importable."""
    env = dict(os.environ)
    rwpost_root = str(Path(__file__).resolve().parents[1])
    paths = [str(crawlers_dir) if crawlers_dir else "", rwpost_root, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def check_reachable(url: str, timeout: float) -> None:
    """Fail fast, before Scrapy starts, when the start URL's host does not accept connections."""
    parts = url_parts(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        where = f"{parts.hostname}:{port}"
        raise RwpostError(f"--start-url {url}: cannot connect to {where} ({reason})") from None


_PR_SET_PDEATHSIG = 1
_LIBC = (
    ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform.startswith("linux") else None
)


def _child_preexec(parent: int) -> Callable[[], None]:
    """Run in the child between fork and exec: own process group, SIGKILL when the parent dies."""

    def setup() -> None:
        os.setpgid(0, 0)
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: stop now
            os.kill(os.getpid(), signal.SIGKILL)

    return setup


@contextmanager
def forwarding_signals(process: subprocess.Popen) -> Iterator[list[int]]:
    """While the block runs, SIGINT/SIGTERM to this process go to the child's process group (the first
    stops Scrapy gracefully, a second one forces it); yields the signals received."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            pass

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def json_events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON event objects a crawler subprocess prints, one per line; its other output is skipped."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def run_crawl(
    config: CrawlConfig,
    *,
    crawlers_dir: Path | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run one crawl to the end; returns ``report.json``. Raises :class:`CrawlStopped` when a signal
    stopped it, :class:`RwpostError` (one line) when it failed, another crawl holds ``out_dir`` or the
    start URL cannot be reached."""
    check_config(config)
    project = find_crawlers_dir(crawlers_dir)
    if config.start_url:
        check_reachable(config.start_url, config.preflight_timeout)
    out_dir = config.out
    out_dir.mkdir(parents=True, exist_ok=True)
    if config.feed and config.feed.startswith(("http://", "https://")):
        config = config.model_copy(update={"feed": str(fetch_feed(config, out_dir / FEED_FILE))})
    stderr_path = out_dir / "crawl.stderr.log"
    report_path = out_dir / "report.json"
    errors: list[str] = []
    started = False
    with open(stderr_path, "ab") as stderr:
        process = subprocess.Popen(
            crawl_command(config),
            cwd=project or out_dir,
            env=crawl_env(project),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            preexec_fn=_child_preexec(os.getpid()),  # noqa: PLW1509 (no threads run Python here)
        )
        assert process.stdout is not None
        with forwarding_signals(process) as received:
            for event in json_events(process.stdout):
                if event.get("event") == "error":
                    errors.append(str(event.get("message")))
                    continue
                if event.get("event") == "started":
                    started = True
                    report_path.unlink(missing_ok=True)
                if on_event:
                    on_event(event)
            code = process.wait()
    if errors:
        raise RwpostError(errors[-1])
    report = json.loads(report_path.read_text(encoding="utf-8")) if started and report_path.exists() else None
    if received or code < 0 or (report and report.get("finish_reason") == "shutdown"):
        signum = received[0] if received else (-code if code < 0 else signal.SIGTERM)
        raise CrawlStopped(out_dir, signum)
    if code != 0 or report is None:
        last = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        raise RwpostError(
            f"crawl into {out_dir} failed (exit code {code}): {last[0][:300]} (see {stderr_path})"
        )
    if report.get("start_error") and not report["this_run"].get("listing_pages"):
        raise RwpostError(f"--start-url {config.start_url}: {report['start_error']} (nothing crawled)")
    return report


FEED_FILE = "feed.json"
"""Where a crawl keeps the feed it fetched from a URL (streamed to disk, read from there as a stream)."""


def fetch_feed(config: CrawlConfig, target: Path) -> Path:
    """Stream the feed at ``config.feed`` to ``target`` (atomically; never whole in memory), sending the
    crawl's User-Agent; a failure is one line naming the URL."""
    import httpx

    from rwpost.io import atomic_open

    agent = config.user_agent or "rwpost-crawler"
    agent = f"{agent} contact: {config.contact}" if config.contact else agent
    try:
        with httpx.stream(
            "GET", str(config.feed), headers={"User-Agent": agent}, timeout=60, follow_redirects=True
        ) as reply:
            if reply.status_code != 200:
                raise RwpostError(f"--feed {config.feed}: HTTP {reply.status_code}")
            with atomic_open(target, "wb") as handle:
                for chunk in reply.iter_bytes(1 << 16):
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        raise RwpostError(f"--feed {config.feed}: {type(exc).__name__}: {exc}") from None
    return target


def import_html_command(folder: Path, out_dir: Path, reader: str = "snopes") -> list[str]:
    """The subprocess command line of one import of saved pages (``snopes_crawler.saved``)."""
    return [
        sys.executable,
        "-m",
        "snopes_crawler.saved",
        "--from",
        str(Path(folder).resolve()),
        "--out",
        str(Path(out_dir).resolve()),
        *(["--reader", reader] if reader != "snopes" else []),
    ]


def run_import_html(
    folder: Path,
    out_dir: Path,
    *,
    crawlers_dir: Path | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    reader: str = "snopes",
) -> dict[str, Any]:
    """Read saved pages (``.html``, ``.html.gz``, Wayback captures) under ``folder`` into the crawl store
    ``out_dir``, with the crawl's parsing, ids and rejects; returns the counts. ``on_event`` gets the
    import's ``progress`` events (``files`` read of ``total``) as it goes. ``reader`` is ``snopes`` (the
    Snopes page model) or ``sites`` (any other fact-checker: :mod:`rwpost.sites`)."""
    if reader not in READERS:
        raise ConfigError(f"--reader {reader}: expected one of {', '.join(READERS)}")
    if not Path(folder).is_dir():
        raise ConfigError(f"--from-html {folder}: not a folder")
    project = find_crawlers_dir(crawlers_dir)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    events: list[dict[str, Any]] = []
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            import_html_command(folder, out_dir, reader),
            cwd=project or out_dir,
            env=crawl_env(project),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert process.stdout is not None
        for event in json_events(process.stdout):
            if event.get("event") == "progress":
                if on_event:
                    on_event(event)
                continue
            events.append(event)
        code = process.wait()
        stderr.seek(0)
        stderr_text = stderr.read()
    errors = [e for e in events if e.get("event") == "error"]
    if errors:
        raise RwpostError(str(errors[-1].get("message")))
    if code != 0 or not events:
        failure = f"import of {folder} into {out_dir} failed (exit code {code})"
        raise RwpostError(f"{failure}\n{stderr_text[-2000:]}")
    return {k: v for k, v in events[-1].items() if k != "event"}
