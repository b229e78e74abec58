"""Saved pages into the crawl store, without Scrapy: ``rwpost crawl --from-html DIR``.

Every ``.html`` / ``.htm`` / ``.html.gz`` file under a folder (a browser's "save page", a wget mirror, a
Wayback Machine capture) is read by the same page model as a crawl (``rwpost.snopes.page.read_article``)
and stored the same way (:func:`snopes_crawler.store.article_record`): same ids (from the canonical URL),
``html/<sha256>.html.gz``, parse errors kept as records with ``parse_error`` (the reformat stage's
rejects). A Wayback capture is stored as the page it captured: the archive's toolbar and scripts are cut
out and its rewritten URLs (``web.archive.org/web/<stamp>im_/https://...``) put back.

Pages of other fact-checkers are read by the multi-site reader instead (``--reader sites``,
:mod:`rwpost.sites`): ClaimReview, language and the rest go into the record's multi-site fields.

Run as ``python -m snopes_crawler.saved --from DIR --out OUT`` (what ``rwpost crawl --from-html`` does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rwpost.io import MAX_PAGE_BYTES, TooLarge, read_bounded, write_json
from rwpost.snopes.page import SnopesArticle, page_url_problem, read_article
from snopes_crawler.store import HTML_DIR, ArticleStore, StoreBusy, article_record, store_lock

SAVED_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")

_TOOLBAR = re.compile(
    r"<!--\s*BEGIN WAYBACK TOOLBAR INSERT\s*-->.*?<!--\s*END WAYBACK TOOLBAR INSERT\s*-->", re.S | re.I
)
_REWRITE_JS = re.compile(
    r"<script[^>]*>[^<]*__wm\.[^<]*</script>|<!--\s*End Wayback Rewrite JS Include\s*-->", re.I
)
_ARCHIVE_INCLUDES = re.compile(
    r"<(?:script|link)[^>]*(?:web-static\.archive\.org|archive\.org/_static|/_static/)[^>]*>(?:\s*</script>)?",
    re.I,
)
_ARCHIVE_PREFIX = re.compile(
    r"(?:(?:https?:)?//web\.archive\.org)?/web/\d{1,14}(?:[a-z]{2}_)?/(?=https?:|//)"
    r"((?:https?:)?//web\.archive\.org/web/\d{1,14}(?:[a-z]{2}_)?/)?",
    re.I,
)
"""The archive's rewrite of one URL; a link the page itself made to an archived copy (Snopes cites
``web.archive.org`` copies of its sources) comes right after it and is kept (group 1)."""
_CAPTURED_URL = re.compile(r"__wm\.wombat\(\s*[\"'](https?://[^\"']+)[\"']")
"""The URL a capture's rewrite script says the page was captured from."""
_ARCHIVED_PAGE = re.compile(r"web\.archive\.org/web/\d{1,14}/(https?://[^\s\"'<>]+)", re.I)
"""An archived page (no ``im_``/``cs_``/``js_`` mode: not an image, stylesheet or script)."""
_FOOTER_COMMENT = re.compile(r"<!--\s*FILE ARCHIVED ON .*?-->", re.S | re.I)


def is_wayback_capture(html: str) -> bool:
    """A page saved from the Wayback Machine: the archive's own marks (toolbar, rewrite scripts, its
    static includes, the closing "FILE ARCHIVED ON" comment). Links to ``web.archive.org`` alone are not
    one: a Snopes page cites archived copies of its sources, and those links are the article's evidence."""
    return bool(
        _TOOLBAR.search(html)
        or "__wm." in html
        or _FOOTER_COMMENT.search(html)
        or re.search(r"<(?:script|link)[^>]*(?:web-static\.archive\.org|archive\.org/_static)", html, re.I)
    )


def unwrap_wayback(html: str) -> tuple[str, str | None]:
    """The captured page without the archive's additions, and the URL it captured (when it says)."""
    found = _CAPTURED_URL.search(html) or _ARCHIVED_PAGE.search(_TOOLBAR.sub("", html))
    original = found.group(1) if found else None
    html = _TOOLBAR.sub("", html)
    html = _FOOTER_COMMENT.sub("", html)
    html = _REWRITE_JS.sub("", html)
    html = _ARCHIVE_INCLUDES.sub("", html)
    return _ARCHIVE_PREFIX.sub(lambda m: m.group(1) or "", html), original


def saved_files(folder: Path, store: Path | None = None) -> list[Path]:
    """The saved pages under ``folder``, sorted by path (so an import is reproducible); the verbatim HTML
    of the crawl store ``store`` is not one, when the store lies inside ``folder``."""
    own = (Path(store) / HTML_DIR).resolve() if store is not None else None
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name.lower().endswith(SAVED_SUFFIXES)
        and (own is None or own not in p.resolve().parents)
    )


class UnreadableSavedPage(Exception):
    """A saved page whose bytes cannot be read as a page (a cut-short or corrupt ``.gz``, no permission)."""


def read_saved(path: Path) -> str:
    """A saved page's text (gzip undone; UTF-8, undecodable bytes replaced); :class:`UnreadableSavedPage`
    with the reason when the file cannot be read."""
    try:  # bounded: a gzip bomb or a huge file is set aside, never read into memory whole
        data = read_bounded(path, MAX_PAGE_BYTES, gunzip=path.name.lower().endswith(".gz"))
    except (OSError, EOFError, zlib.error, TooLarge) as exc:  # gzip raises the first three when damaged
        raise UnreadableSavedPage(f"unreadable saved page: {type(exc).__name__}: {exc}") from exc
    return data.decode("utf-8", errors="replace")


PROGRESS_EVERY_S = 0.5
"""How often an import reports how far it is (a ``progress`` event on stdout)."""

NO_URL_HOST = "saved-page.invalid"
"""Host of the stand-in URL of a saved page that names no URL of its own (its record has a parse error)."""


def known_urls(folder: Path, problems: list[str] | None = None) -> dict[str, str]:
    """Page URLs given beside the saved pages: every ``index.json`` (a list of ``{"file", "url"}``, file
    relative to ``folder`` or to the index) as ``resolved file path -> url``. What cannot be used (an
    index that is not such a list, an entry without ``file`` and ``url``, a file that is not there) is
    appended to ``problems``, one line each naming the index and the entry."""
    problems = problems if problems is not None else []
    urls: dict[str, str] = {}
    for index in sorted(folder.rglob("index.json")):
        shown = index.relative_to(folder).as_posix()
        try:
            entries = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            problems.append(f"{shown}: not a readable JSON index ({type(exc).__name__}: {exc})")
            continue
        if not isinstance(entries, list):
            problems.append(f'{shown}: not a list of {{"file", "url"}} entries')
            continue
        for number, entry in enumerate(entries, start=1):
            if not (isinstance(entry, dict) and entry.get("url") and entry.get("file")):
                problems.append(f'{shown}: entry {number} has no "file" and "url"')
                continue
            if problem := page_url_problem(str(entry["url"])):  # its page's id would come from it
                problems.append(f"{shown}: entry {number}: url {str(entry['url'])[:200]!r}: {problem}")
                continue
            for base in (folder, index.parent):
                candidate = (base / entry["file"]).resolve()
                if candidate.is_file():
                    urls[str(candidate)] = entry["url"]
                    break
            else:
                problems.append(f"{shown}: entry {number}: no such file {entry['file']}")
    return urls


def read_snopes(html: str, url: str) -> dict[str, Any]:
    """A Snopes page's crawl fields, by the Snopes page model."""
    return asdict(read_article(html, url))


def read_any_site(html: str, url: str) -> dict[str, Any]:
    """Any fact-checker's page's crawl fields, by the multi-site reader (``rwpost.sites``)."""
    from rwpost.sites.reader import crawl_fields, read_page

    return crawl_fields(read_page(html, url))


READERS: dict[str, Callable[[str, str], dict[str, Any]]] = {"snopes": read_snopes, "sites": read_any_site}
"""The page readers by name (``--reader``): Snopes' page model, or the multi-site reader."""


def import_saved_pages(
    folder: Path,
    out_dir: Path,
    *,
    on_progress: Callable[[dict[str, int]], None] | None = None,
    reader: str = "snopes",
) -> dict[str, Any]:
    """Read every saved page under ``folder`` into the crawl store ``out_dir``; returns the counts.

    A page's URL is its canonical link (``link[rel=canonical]`` / JSON-LD), else the URL a Wayback capture
    names, else the one an ``index.json`` beside it gives (:func:`known_urls`); a page with none is stored
    with a parse error under a stand-in URL. Its fetch time is the file's modification time (UTC).
    ``reader`` names the page reader (:data:`READERS`): ``sites`` for other fact-checkers than Snopes.
    """
    read = READERS[reader]
    folder = Path(folder)
    store = ArticleStore(out_dir)
    index_problems: list[str] = []
    given = known_urls(folder, index_problems)
    counts = {
        "files": 0, "stored_ok": 0, "stored_parse_errors": 0, "unreadable": 0, "wayback": 0, "duplicates": 0,
    }  # fmt: skip
    seen: set[str] = set()
    files = saved_files(Path(folder), out_dir)
    shown = time.monotonic()
    for path in files:
        counts["files"] += 1
        if on_progress is not None and (time.monotonic() - shown >= PROGRESS_EVERY_S or counts["files"] == 1):
            shown = time.monotonic()
            on_progress({"files": counts["files"] - 1, "total": len(files), "stored_ok": counts["stored_ok"]})
        stand_in = f"https://{NO_URL_HOST}/{path.relative_to(folder).as_posix()}"
        outside = not path.resolve().is_relative_to(folder.resolve())  # a symbolic link out of the folder
        try:
            if outside:
                raise UnreadableSavedPage("a symbolic link out of the folder: not followed")
            html = read_saved(path)
        except UnreadableSavedPage as exc:  # set aside with its reason, never dropped
            counts["unreadable"] += 1
            url = given.get(str(path.resolve()))
            parsed = asdict(SnopesArticle(url or stand_in, parse_error=str(exc)))
            try:  # kept as found, to look at (not one that is too large to read)
                readable = os.access(path, os.R_OK) and not outside
                body = read_bounded(path, MAX_PAGE_BYTES) if readable else b""
            except TooLarge:
                body = b""
        else:
            original = None
            if is_wayback_capture(html):
                html, original = unwrap_wayback(html)
                counts["wayback"] += 1
                original = None if original is None or page_url_problem(original) else original
            url = original or given.get(str(path.resolve()))
            try:
                parsed = read(html, url or stand_in)
            except Exception as exc:  # noqa: BLE001 (a page that breaks the parser is stored with the reason)
                crash = f"parser crashed: {type(exc).__name__}: {exc}"
                parsed = asdict(SnopesArticle(url or stand_in, parse_error=crash))
            if url is None and parsed["canonical_url"] == stand_in:
                why = "no URL: the saved page has no canonical link; give it in an index.json beside it"
                if index_problems:
                    why += f" (an index.json here could not be used: {index_problems[0]})"
                parsed["parse_error"] = "; ".join(filter(None, [why, parsed["parse_error"]]))
            body = html.encode("utf-8")
        record = article_record(
            parsed,
            fetched_url=url or parsed["canonical_url"],
            http_status=200,
            fetched_at=datetime.fromtimestamp(path.stat().st_mtime, UTC),
            html=store.save_html(body),
        )
        if record.id in seen:
            counts["duplicates"] += 1
            continue
        seen.add(record.id)
        store.add(record)
        counts["stored_parse_errors" if record.parse_error else "stored_ok"] += 1
    store.compact()
    counts["store_articles"] = len(store.records)
    counts["index_problems"] = len(index_problems)
    return {**counts, "index_problem_lines": index_problems}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Saved Snopes pages into a crawl store.")
    parser.add_argument("--from", dest="source", required=True, type=Path, help="folder of saved pages")
    parser.add_argument("--out", required=True, type=Path, help="the crawl store folder")
    parser.add_argument("--reader", choices=sorted(READERS), default="snopes", help="the page reader")
    args = parser.parse_args(argv)
    try:
        with store_lock(args.out):
            counts = import_saved_pages(
                args.source,
                args.out,
                on_progress=lambda done: print(json.dumps({"event": "progress", **done}), flush=True),
                reader=args.reader,
            )
    except StoreBusy as exc:
        print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
        return 75
    write_json(args.out / "report.json", {"from_html": str(args.source), **counts})
    print(json.dumps({"event": "done", **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
