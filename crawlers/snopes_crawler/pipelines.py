"""Item pipelines: download an article's images, then validate and store the article record.

Items are plain dicts from the spider (``kind`` = ``article`` or ``failure``). The image pipeline runs
first so an article's line is written only once its images are on disk: a killed crawl never leaves a
record that points at missing files.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy.exceptions import DropItem

from rwpost.ids import record_id
from rwpost.io import sha256_hex
from rwpost.records import CrawledArticle, ImageFile
from snopes_crawler.images import DEFAULT_MAX_PIXELS, ImageRefused, address_refusal, inspect_image
from snopes_crawler.store import ArticleStore, path_key

logger = logging.getLogger(__name__)


class ImagesPipeline:
    """Fetch each article image once, through Scrapy's downloader (robots, throttling and retries apply)."""

    def __init__(self, crawler: scrapy.crawler.Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.enabled = settings.getbool("RWPOST_DOWNLOAD_IMAGES", True)
        self.allow_loopback = settings.getbool("RWPOST_ALLOW_LOOPBACK", False)
        self.max_bytes = settings.getint("RWPOST_MAX_IMAGE_BYTES", 10_000_000)
        self.max_pixels = settings.getint("RWPOST_MAX_IMAGE_PIXELS", DEFAULT_MAX_PIXELS)
        self.done: dict[str, ImageFile] = {}
        self.pending: dict[str, asyncio.Future[ImageFile]] = {}

    @classmethod
    def from_crawler(cls, crawler: scrapy.crawler.Crawler) -> ImagesPipeline:
        return cls(crawler)

    async def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
        if item.get("kind") != "article":
            return item
        urls = item["parsed"].get("image_urls") or []
        if not self.enabled:
            item["images"] = []
            return item
        item["images"] = [await self.fetch(url) for url in urls]
        return item

    async def fetch(self, url: str) -> ImageFile:
        """The ImageFile for ``url``: downloaded and checked once per crawl, shared by every article."""
        if url in self.done:
            return self.done[url]
        if url in self.pending:
            return await asyncio.shield(self.pending[url])
        future: asyncio.Future[ImageFile] = asyncio.get_running_loop().create_future()
        self.pending[url] = future
        try:
            result = await self._download(url)
        except Exception as exc:  # noqa: BLE001 (any failure becomes the image's stored error)
            result = ImageFile(url=url, error=f"{type(exc).__name__}: {exc}")
        self.done[url] = result
        future.set_result(result)
        del self.pending[url]
        stats = self.crawler.stats
        stats.inc_value("rwpost/images_failed" if result.error else "rwpost/images_ok")
        return result

    async def _download(self, url: str) -> ImageFile:
        refusal = await asyncio.to_thread(address_refusal, url, allow_loopback=self.allow_loopback)
        if refusal:
            return ImageFile(url=url, error=refusal)
        request = scrapy.Request(
            url,
            meta={"download_maxsize": self.max_bytes, "download_warnsize": 0},
            dont_filter=True,
            priority=5,
        )
        try:
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001
            message = f"{type(exc).__name__}: {exc}"
            if "max size" in message:
                message = f"refused: larger than the image size cap ({self.max_bytes} bytes)"
            return ImageFile(url=url, error=message)
        if response.status != 200:
            return ImageFile(url=url, error=f"HTTP {response.status}")
        data = response.body
        digest = sha256_hex(data)
        try:
            info = await asyncio.to_thread(inspect_image, data, max_pixels=self.max_pixels)
        except ImageRefused as exc:
            return ImageFile(url=url, sha256=digest, size_bytes=len(data), error=str(exc))
        store: ArticleStore = self.crawler.spider.store  # type: ignore[union-attr]
        path = store.save_image(data, digest, info.extension)
        return ImageFile(
            url=url,
            sha256=digest,
            path=path,
            width=info.width,
            height=info.height,
            format=info.format,
            size_bytes=len(data),
        )


class StorePipeline:
    """Turn items into CrawledArticle records, drop duplicates by canonical id, append to the store."""

    def __init__(self, crawler: scrapy.crawler.Crawler) -> None:
        self.crawler = crawler
        self.written: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: scrapy.crawler.Crawler) -> StorePipeline:
        return cls(crawler)

    def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
        store: ArticleStore = self.crawler.spider.store  # type: ignore[union-attr]
        stats = self.crawler.stats
        record = self.to_record(item, store)
        if record.id in self.written or (record.id in store.records and not item.get("refetch")):
            # Another URL of an article already stored: remember the URL so no run fetches it again.
            stats.inc_value("rwpost/duplicates")
            store.add_alias(item["requested_url"], record.id)
            raise DropItem(f"duplicate of {record.id} (canonical {record.url}) at {record.fetched_url}")
        store.add(record)
        self.written.add(record.id)
        if path_key(item["requested_url"]) != path_key(item["fetched_url"]):
            store.add_alias(item["requested_url"], record.id)  # a redirect: the listed URL is known too
        if item["kind"] == "failure":
            stats.inc_value("rwpost/stored_http_failures")
        elif record.parse_error:
            stats.inc_value("rwpost/stored_parse_errors")
        else:
            stats.inc_value("rwpost/stored_ok")
        return {"id": record.id, "url": record.url, "parse_error": record.parse_error}

    @staticmethod
    def to_record(item: dict[str, Any], store: ArticleStore) -> CrawledArticle:
        fetched_at = datetime.now(UTC)
        if item["kind"] == "failure":
            url = item["fetched_url"]
            return CrawledArticle(
                id=record_id(url),
                url=url,
                fetched_url=url,
                http_status=item["http_status"],
                fetched_at=fetched_at,
                parse_error=item["reason"],
            )
        parsed = item["parsed"]
        canonical = parsed.get("canonical_url") or item["fetched_url"]
        html_sha, html_path = store.save_html(item["body"])
        return CrawledArticle(
            id=record_id(canonical),
            url=canonical,
            fetched_url=item["fetched_url"],
            http_status=item["http_status"],
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
            images=item.get("images") or [],
            parse_error=parsed.get("parse_error"),
        )
