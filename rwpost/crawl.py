"""Launch the Scrapy crawl (``crawlers/``) in a subprocess and follow its progress.

Twisted's reactor cannot be restarted within a process, so every crawl runs as
``python -m snopes_crawler.run`` with ``crawlers/`` as its working directory. ``rwpost`` never imports
the crawler; it passes a JSON config and reads JSON progress lines from the child's stdout.
The output folder layout is documented in ``crawlers/README.md``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rwpost.errors import ConfigError, RwpostError
from rwpost.images import MAX_IMAGE_BYTES

DEFAULT_SINCE = "2017-01-01"
"""Start of the default date window (the paper's Snopes crawl covers 2017 onwards)."""


@dataclass
class CrawlOptions:
    """Everything one crawl run needs; the CLI and the DVC stage fill it from their own inputs."""

    start_url: str
    out_dir: str
    since: str | None = DEFAULT_SINCE
    until: str | None = None
    max_articles: int = 0
    user_agent: str | None = None
    contact: str | None = None
    throttle: bool = True
    allow_loopback: bool = False
    download_images: bool = True
    max_image_bytes: int = MAX_IMAGE_BYTES
    resume: bool = True
    retry_failed: bool = False
    progress_interval: float = 2.0
    sitemaps: bool = False
    """Discover from the site's sitemaps only (no listing walk): ``sitemap_urls``, else the live site's."""
    sitemap_urls: list[str] | None = None


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is a loopback address or ``localhost``."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_day(name: str, value: str | None) -> str | None:
    if value is None or str(value).lower() in ("", "any", "none", "null"):
        return None
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError as exc:
        raise ConfigError(f"--{name}: expected a date like 2017-01-01 (or 'any'), got {value!r}") from exc


def validate_options(options: CrawlOptions) -> CrawlOptions:
    """Check the options before starting anything; raises :class:`ConfigError` naming the option."""
    parts = urlsplit(options.start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--start-url: expected an http(s) URL, got {options.start_url!r}")
    if is_loopback_url(options.start_url) and not options.allow_loopback:
        raise ConfigError(f"--start-url {options.start_url} is a loopback address: pass --allow-loopback")
    if not is_loopback_url(options.start_url) and not options.contact:
        raise ConfigError("--contact is required for a crawl of the real web (site operators must reach you)")
    if not options.throttle and not is_loopback_url(options.start_url):
        raise ConfigError(
            "--no-throttle is only for loopback sites; a real site is crawled with AutoThrottle"
        )
    options.since = _check_day("since", options.since)
    options.until = _check_day("until", options.until)
    if options.max_articles < 0:
        raise ConfigError(f"--max-articles: expected 0 (no limit) or more, got {options.max_articles}")
    return options


def find_crawlers_dir(explicit: Path | None = None) -> Path:
    """The Scrapy project folder: ``explicit``, else ``./crawlers``, else the one beside the package."""
    candidates = (
        [explicit]
        if explicit
        else [Path.cwd() / "crawlers", Path(__file__).resolve().parents[1] / "crawlers"]
    )
    for candidate in candidates:
        if candidate and (candidate / "snopes_crawler" / "run.py").is_file():
            return candidate.resolve()
    raise ConfigError(
        "cannot find the Scrapy project (crawlers/snopes_crawler); run from the repository root "
        "or pass --crawlers-dir"
    )


def crawl_command(options: CrawlOptions) -> list[str]:
    """The subprocess command line of one crawl."""
    config = asdict(options)
    config["out_dir"] = str(Path(options.out_dir).resolve())
    return [sys.executable, "-m", "snopes_crawler.run", "--config", json.dumps(config)]


def crawl_env(crawlers_dir: Path) -> dict[str, str]:
    """The child's environment: ours, with the crawler project and this rwpost importable."""
    env = dict(os.environ)
    rwpost_root = str(Path(__file__).resolve().parents[1])
    paths = [str(crawlers_dir), rwpost_root, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_crawl(
    options: CrawlOptions,
    *,
    crawlers_dir: Path | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run one crawl to the end; returns ``report.json`` (raises :class:`RwpostError` if the crawl failed)."""
    validate_options(options)
    project = find_crawlers_dir(crawlers_dir)
    out_dir = Path(options.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stderr_path = out_dir / "crawl.stderr.log"
    report_path = out_dir / "report.json"
    report_path.unlink(missing_ok=True)
    with open(stderr_path, "ab") as stderr:
        process = subprocess.Popen(
            crawl_command(options),
            cwd=project,
            env=crawl_env(project),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if on_event:
                on_event(event)
        code = process.wait()
    if code != 0 or not report_path.exists():
        tail = stderr_path.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise RwpostError(f"crawl into {out_dir} failed (exit code {code}); see {out_dir}/crawl.log\n{tail}")
    return json.loads(report_path.read_text(encoding="utf-8"))


def import_html_command(folder: Path, out_dir: Path) -> list[str]:
    """The subprocess command line of one import of saved pages (``snopes_crawler.saved``)."""
    return [
        sys.executable,
        "-m",
        "snopes_crawler.saved",
        "--from",
        str(Path(folder).resolve()),
        "--out",
        str(Path(out_dir).resolve()),
    ]


def run_import_html(folder: Path, out_dir: Path, *, crawlers_dir: Path | None = None) -> dict[str, Any]:
    """Read saved pages (``.html``, ``.html.gz``, Wayback captures) under ``folder`` into the crawl store
    ``out_dir``, with the crawl's parsing, ids and rejects; returns the counts."""
    if not Path(folder).is_dir():
        raise ConfigError(f"--from-html {folder}: not a folder")
    project = find_crawlers_dir(crawlers_dir)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        import_html_command(folder, out_dir),
        cwd=project,
        env=crawl_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not events:
        raise RwpostError(
            f"import of {folder} into {out_dir} failed (exit code {done.returncode})\n{done.stderr[-2000:]}"
        )
    return {k: v for k, v in events[-1].items() if k != "event"}
