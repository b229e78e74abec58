"""The crawl store: ``articles.jsonl`` (one CrawledArticle per id), gzip HTML and images by sha256
(``images/<sha256>.<ext>``, written by ``pipelines.ArticleImagesPipeline``).

Records are appended one whole line at a time (and fsynced) as they are crawled, so a killed crawl
loses at most the line being written. The store is never rewritten from memory: :meth:`ArticleStore.compact`
re-reads the files from disk and rewrites them with one line per id (the last one wins, so a re-fetched
updated article replaces the old record), sorted by id, and only a process holding the store's lock
(:func:`store_lock`, one writer per folder) opens, appends or compacts. The store is what makes a crawl
resumable and incremental: the spider asks it which article paths it already holds (``aliases.jsonl``
remembers pages that turned out to be another URL of a stored article).

Nothing run-specific goes into the files DVC hashes (``articles.jsonl``, ``aliases.jsonl``, ``html/``,
``images/``) when the crawl names the site's origin (``site_origin``): URLs fetched from a mirror (the
sample site on a random loopback port) are recorded under the site's fixed origin, and ``fetched_at``
is pinned (fetch times are in ``crawl.log``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rwpost.errors import RwpostError
from rwpost.ids import record_id
from rwpost.images import IMAGES_DIR
from rwpost.io import FolderBusy, append_jsonl, folder_lock, sha256_hex, write_bytes, write_jsonl
from rwpost.records import CrawledArticle, ImageFile
from rwpost.urls import origin, path_key

logger = logging.getLogger(__name__)

ARTICLES_FILE = "articles.jsonl"
ALIASES_FILE = "aliases.jsonl"
HTML_DIR = "html"
REPORT_FILE = "report.json"
JOB_DIR = ".jobdir"
LOCK_FILE = ".crawl.lock"
PINNED_FETCHED_AT = datetime(1970, 1, 1, tzinfo=UTC)
"""``fetched_at`` of a crawl that names its site's origin (a reproducible build of a fixed site)."""


class StoreBusy(RwpostError):
    """Another live process holds the store's lock."""


@contextlib.contextmanager
def store_lock(out_dir: Path) -> Iterator[Path]:
    """Hold ``out_dir``'s lock (:func:`rwpost.io.folder_lock` on ``.crawl.lock``, which names the holder's
    PID): the lock of a killed crawl is taken over, a live holder raises :class:`StoreBusy` naming it."""
    try:
        with folder_lock(out_dir, LOCK_FILE, doing="crawled", runs="crawls") as path:
            yield path
    except FolderBusy as exc:
        raise StoreBusy(str(exc)) from None


class SiteOrigin:
    """Maps URLs fetched from a mirror (``served``, e.g. ``http://127.0.0.1:41231``) to the site's fixed
    origin (``site``), so a store does not depend on the port a mirror was served on."""

    def __init__(self, served: str | None = None, site: str | None = None) -> None:
        self.served = _origin(served) if served and site else None
        self.site = _origin(site) if served and site else None

    def __bool__(self) -> bool:
        return self.served is not None

    def url(self, url: str) -> str:
        if self.served and self.site and url.startswith(self.served):
            rest = url[len(self.served) :]
            if not rest or rest[0] in "/?#":
                return self.site + rest
        return url

    def text(self, text: str | None) -> str | None:
        """Free text (an error message) with the mirror's origin replaced."""
        if text is None or not self.served or not self.site:
            return text
        return text.replace(self.served, self.site)

    def record(self, record: CrawledArticle) -> CrawledArticle:
        """``record`` as fetched from the site itself: URLs, id (when it derives from the fetched URL),
        error texts, and a pinned ``fetched_at``."""
        if not self:
            return record
        url = self.url(record.url)
        return record.model_copy(
            update={
                "id": record_id(url) if url != record.url else record.id,
                "url": url,
                "fetched_url": self.url(record.fetched_url) if record.fetched_url else None,
                "fetched_at": PINNED_FETCHED_AT,
                "image_urls": [self.url(u) for u in record.image_urls],
                "images": [
                    image.model_copy(update={"url": self.url(image.url), "error": self.text(image.error)})
                    for image in record.images
                ],
                "videos": [
                    video.model_copy(update={"url": self.url(video.url), "error": self.text(video.error)})
                    for video in record.videos
                ],
                "parse_error": self.text(record.parse_error),
                # a feed's review names the page as the feed gave it (the mirror's address)
                "claim_reviews": [
                    review.model_copy(update={"url": self.url(review.url)}) if review.url else review
                    for review in record.claim_reviews
                ],
            }
        )


def _origin(url: str) -> str:
    return origin(url)


def article_record(
    parsed: dict[str, Any],
    *,
    fetched_url: str,
    http_status: int,
    fetched_at: datetime,
    html: tuple[str, str],
    images: list[ImageFile] | None = None,
) -> CrawledArticle:
    """The store record of one parsed page (``parsed``: ``asdict`` of a ``rwpost.snopes.page.SnopesArticle``;
    ``html``: the (sha256, relative path) :meth:`ArticleStore.save_html` gave); its id is the canonical
    URL's, so a crawled and an imported copy of one article are one record."""
    canonical = parsed.get("canonical_url") or fetched_url
    html_sha, html_path = html
    return CrawledArticle(
        id=record_id(canonical),
        url=canonical,
        fetched_url=fetched_url,
        http_status=http_status,
        fetched_at=fetched_at,
        layout=parsed.get("layout"),
        category=parsed.get("category"),
        headline=parsed.get("headline"),
        claim=parsed.get("claim"),
        rating=parsed.get("rating"),
        date_published=parsed.get("date_published"),
        date_modified=parsed.get("date_modified"),
        author=parsed.get("author"),
        html_sha256=html_sha,
        html_path=html_path,
        image_urls=parsed.get("image_urls") or [],
        images=images or [],
        parse_error=parsed.get("parse_error"),
        # the multi-site reader's fields (rwpost.sites.reader.crawl_fields); a Snopes page has none
        **{name: parsed[name] for name in MULTISITE_FIELDS if parsed.get(name) is not None},
    )


MULTISITE_FIELDS = (
    "site",
    "publisher",
    "language",
    "language_declared",
    "claim_reviews",
    "metadata_only",
    "field_sources",
    "read_problems",
)
"""The crawl record's fields only pages of other fact-checkers than Snopes carry."""


class ArticleStore:
    """What one crawl output folder holds, loaded once at start and appended to as the crawl runs."""

    def __init__(self, out_dir: Path, origin: SiteOrigin | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.origin = origin or SiteOrigin()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.articles_path = self.out_dir / ARTICLES_FILE
        self.aliases_path = self.out_dir / ALIASES_FILE
        self.records: dict[str, CrawledArticle] = {}
        self.by_path: dict[str, str] = {}
        self.torn_lines = 0
        self.aliases: dict[str, str] = {}
        self.removed_temp_files = self._remove_temp_files()
        if self._load():
            self.compact()

    def _remove_temp_files(self) -> int:
        """Delete what a killed atomic write left (``.<name>.<random>.tmp``, ``rwpost.io.atomic_path``)."""
        removed = 0
        for folder in (self.out_dir, self.out_dir / HTML_DIR, self.out_dir / IMAGES_DIR):
            for leftover in folder.glob(".*.tmp") if folder.is_dir() else []:
                leftover.unlink(missing_ok=True)
                removed += 1
        if removed:
            logger.warning("%s: removed %d temporary files of a killed run", self.out_dir, removed)
        return removed

    def _load(self) -> bool:
        """Read both files from disk into a fresh index; True when they need compacting (a torn or
        invalid line, a duplicate id or alias)."""
        self.records, self.by_path, self.aliases, self.torn_lines = {}, {}, {}, 0
        untidy = False
        if self.aliases_path.exists():
            for line in self.aliases_path.read_text(encoding="utf-8").splitlines():
                try:
                    alias = json.loads(line)
                    untidy |= alias["path"] in self.aliases
                    self.aliases[alias["path"]] = self.by_path[alias["path"]] = alias["id"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    untidy = True  # a torn last line: the alias is simply learnt again
        if not self.articles_path.exists():
            return untidy
        data = self.articles_path.read_bytes()
        untidy |= bool(data) and not data.endswith(b"\n")  # a torn last line must not prefix the next
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = CrawledArticle.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValueError) as exc:
                # Only a kill mid-write leaves a bad line, and only as the last one.
                self.torn_lines += 1
                logger.warning("%s:%d: dropped a torn or invalid line (%s)", self.articles_path, number, exc)
                continue
            if self._index(record):
                untidy = True
        return untidy or bool(self.torn_lines)

    def _index(self, record: CrawledArticle) -> bool:
        """Index one record; True when it replaces an earlier one (same id, or same fetched path)."""
        replaced = record.id in self.records
        if record.fetched_url:
            previous = self.by_path.get(path_key(record.fetched_url))
            if previous and previous != record.id and previous in self.records:
                del self.records[previous]
                replaced = True
        self.records[record.id] = record
        self.by_path[path_key(record.url)] = record.id
        if record.fetched_url:
            self.by_path[path_key(record.fetched_url)] = record.id
        return replaced

    def get_by_url(self, url: str) -> CrawledArticle | None:
        """The stored record fetched from, or canonical at, this URL's path."""
        record_id = self.by_path.get(path_key(url))
        return self.records.get(record_id) if record_id else None

    def save_html(self, body: bytes) -> tuple[str, str]:
        """Keep the verbatim HTML gzip-compressed under its sha256; returns (sha256, path relative to out)."""
        digest = sha256_hex(body)
        relative = f"{HTML_DIR}/{digest}.html.gz"
        target = self.out_dir / relative
        if not target.exists():
            write_bytes(target, gzip.compress(body, mtime=0))
        return digest, relative

    def add(self, record: CrawledArticle) -> None:
        """Append one record (fsynced); it replaces a stored one with its id or fetched from its path."""
        append_jsonl(self.articles_path, record)
        self._index(record)

    def add_alias(self, url: str, record_id: str) -> None:
        """Remember that ``url`` is another address of a stored article (same canonical URL)."""
        key = path_key(url)
        if self.by_path.get(key) != record_id:
            self.by_path[key] = self.aliases[key] = record_id
            append_jsonl(self.aliases_path, {"path": key, "id": record_id})

    def compact(self) -> None:
        """Rewrite ``articles.jsonl`` and ``aliases.jsonl`` from what is on disk (never from memory): one
        line per id sorted by id, one alias per path sorted by path. Call it only under :func:`store_lock`."""
        self._load()
        write_jsonl(self.articles_path, sorted(self.records.values(), key=lambda r: r.id))
        if self.aliases_path.exists():
            write_jsonl(self.aliases_path, [{"path": p, "id": i} for p, i in sorted(self.aliases.items())])
