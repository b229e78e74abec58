"""The crawl store: ``articles.jsonl`` (one CrawledArticle per id), gzip HTML and images by sha256
(``images/<sha256>.<ext>``, written by ``pipelines.ArticleImagesPipeline``).

Records are appended one whole line at a time as they are crawled, so a killed crawl loses at most
the line being written; opening the store drops such a torn last line and rewrites the file with one
line per id (the last one wins, so a re-fetched updated article replaces the old record). The store is
what makes a crawl resumable and incremental: the spider asks it which article paths it already holds
(``aliases.jsonl`` remembers pages that turned out to be another URL of a stored article).
"""

from __future__ import annotations

import gzip
import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rwpost.ids import record_id
from rwpost.io import append_jsonl, sha256_hex, write_bytes, write_jsonl
from rwpost.records import CrawledArticle, ImageFile

logger = logging.getLogger(__name__)

ARTICLES_FILE = "articles.jsonl"
ALIASES_FILE = "aliases.jsonl"
HTML_DIR = "html"
REPORT_FILE = "report.json"
JOB_DIR = ".jobdir"


def path_key(url: str) -> str:
    """The key an article is known by across hosts: its URL path with one trailing slash.

    The sample site is served on a random loopback port while its canonical URLs point at
    www.snopes.com, so the store matches pages by path (a store holds one site).
    """
    path = urlsplit(url.strip().strip('"')).path.replace('"', "") or "/"
    while "//" in path:
        path = path.replace("//", "/")
    return path if path.endswith("/") else path + "/"


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
    )


class ArticleStore:
    """What one crawl output folder holds, loaded once at start and appended to as the crawl runs."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.articles_path = self.out_dir / ARTICLES_FILE
        self.aliases_path = self.out_dir / ALIASES_FILE
        self.records: dict[str, CrawledArticle] = {}
        self.by_path: dict[str, str] = {}
        self.torn_lines = 0
        self._load()

    def _load(self) -> None:
        if self.aliases_path.exists():
            for line in self.aliases_path.read_text(encoding="utf-8").splitlines():
                try:
                    alias = json.loads(line)
                    self.by_path[alias["path"]] = alias["id"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a torn last line: the alias is simply learnt again
        if not self.articles_path.exists():
            return
        lines = self.articles_path.read_text(encoding="utf-8").splitlines()
        duplicates = 0
        for number, line in enumerate(lines, start=1):
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
                duplicates += 1
        if self.torn_lines or duplicates:
            self.compact()

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
        """Append one record; it replaces a stored one with its id, or fetched from the same path."""
        append_jsonl(self.articles_path, record)
        self._index(record)

    def add_alias(self, url: str, record_id: str) -> None:
        """Remember that ``url`` is another address of a stored article (same canonical URL)."""
        key = path_key(url)
        if self.by_path.get(key) != record_id:
            self.by_path[key] = record_id
            append_jsonl(self.aliases_path, {"path": key, "id": record_id})

    def compact(self) -> None:
        """Rewrite ``articles.jsonl`` atomically with exactly one line per id."""
        write_jsonl(self.articles_path, self.records.values())
