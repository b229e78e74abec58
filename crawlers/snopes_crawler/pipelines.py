"""Item pipelines: download an article's images and its direct video files, then validate and store the
article record.

Items are plain dicts from the spider (``kind`` = ``article`` or ``failure``). The media pipelines run
first so an article's line is written only once its images and videos are on disk: a killed crawl never
leaves a record that points at missing files. Videos are only files a page embeds directly (``<video
src=...mp4>`` or its ``<source>``); a platform's player (YouTube, TikTok, Facebook) is never downloaded.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from io import BytesIO
from os import PathLike
from typing import Any, NoReturn

import scrapy
from scrapy.exceptions import DropItem
from scrapy.http.request import NO_CALLBACK
from scrapy.pipelines.files import FilesPipeline, FSFilesStore
from scrapy.pipelines.media import FileInfoOrError, MediaPipeline
from scrapy.utils.defer import deferred_from_coro
from twisted.python.failure import Failure

from rwpost.crawl import MAX_VIDEO_BYTES
from rwpost.errors import RwpostError
from rwpost.ids import record_id
from rwpost.images import (
    IMAGES_DIR,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    ImageRefused,
    address_refusal,
    image_extension,
    image_name,
    inspect_image,
    size_refusal,
    write_once,
)
from rwpost.io import disk_full, sha256_hex
from rwpost.records import CrawledArticle, ImageFile, VideoFile
from rwpost.snopes.links import VIDEO_EXTENSIONS, embed_url, link_kind, resolve_link
from rwpost.urls import path_key
from snopes_crawler.store import ArticleStore, article_record

logger = logging.getLogger(__name__)


def stop_when_disk_full(crawler: scrapy.crawler.Crawler, exc: BaseException) -> None:
    """A write that failed for want of space stops the crawl at once with one error line (``rwpost crawl``
    prints it): every later page would fail the same way, and the log cannot take them either. What is
    stored stays whole (appends are undone when they fail, other writes are atomic); a rerun resumes."""
    if not disk_full(exc) or getattr(crawler, "rwpost_disk_full", False):
        return
    crawler.rwpost_disk_full = True  # type: ignore[attr-defined]
    message = f"{exc}; the crawl stopped: free space and rerun to resume"
    print(json.dumps({"event": "error", "message": message}), flush=True)
    if crawler.engine is not None:
        deferred_from_coro(crawler.engine.close_spider_async(reason="disk full"))


class ContentAddressedStore(FSFilesStore):
    """Scrapy's file-system store, writing each file atomically and once: its name is its content."""

    def persist_file(
        self,
        path: str | PathLike[str],
        buf: BytesIO,
        info: MediaPipeline.SpiderInfo,
        meta: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        write_once(self._get_filesystem_path(path), buf.getvalue())


class ArticleImagesPipeline(FilesPipeline):
    """Scrapy's FilesPipeline over the article images, each fetched once per crawl through the downloader
    (robots.txt, throttling and retries apply), checked by :mod:`rwpost.images` and kept verbatim as
    ``images/<sha256>.<ext>`` in the crawl store.

    Unlike Scrapy's, a refused or failed image is a result too: ``item["images"]`` gets one
    :class:`ImageFile` per image URL, in order, with the reason in ``error`` (sha256 and size when bytes
    came). Scrapy's ImagesPipeline is not the base: it re-encodes every image to JPEG.
    """

    MEDIA_NAME = "image"
    FILE: type[ImageFile] | type[VideoFile] = ImageFile
    """The record of one downloaded (or refused) file; ``item[MEDIA_NAME + "s"]`` gets one per URL."""
    LOG_FAILED_RESULTS = False  # every failure is stored, with its reason, in the article's record
    STORE_SCHEMES = {"": ContentAddressedStore, "file": ContentAddressedStore}

    def __init__(self, store_uri: str, *, crawler: scrapy.crawler.Crawler) -> None:
        super().__init__(store_uri, crawler=crawler)
        settings = crawler.settings
        self.enabled = settings.getbool("RWPOST_DOWNLOAD_IMAGES", True)
        self.allow_loopback = settings.getbool("RWPOST_ALLOW_LOOPBACK", False)
        self.max_bytes = settings.getint("RWPOST_MAX_IMAGE_BYTES", MAX_IMAGE_BYTES)
        self.max_pixels = settings.getint("RWPOST_MAX_IMAGE_PIXELS", MAX_IMAGE_PIXELS)
        self.unrequestable: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: scrapy.crawler.Crawler) -> ArticleImagesPipeline:
        store: ArticleStore = crawler.spider.store  # type: ignore[union-attr]
        return cls(str(store.out_dir.resolve()), crawler=crawler)

    def _count(self, error: str | None) -> None:
        """Count one distinct image URL (the parent caches each request's result for the crawl)."""
        kind = f"rwpost/{self.MEDIA_NAME}s"
        self.crawler.stats.inc_value(f"{kind}_failed" if error else f"{kind}_ok")

    def media_urls(self, item: dict[str, Any]) -> list[str]:
        """The article's image URLs, as the page parser found them."""
        return item["parsed"].get("image_urls") or []

    def size_refusal(self) -> str:
        return size_refusal(self.max_bytes)

    def _requests(self, item: dict[str, Any]) -> list[tuple[str, scrapy.Request | str]]:
        """Each media URL of an article with its request, or the reason it cannot be one."""
        if item.get("kind") != "article" or not self.enabled:
            return []
        planned: list[tuple[str, scrapy.Request | str]] = []
        for url in self.media_urls(item):
            try:
                request = scrapy.Request(
                    url,
                    callback=NO_CALLBACK,
                    meta={"download_maxsize": self.max_bytes, "download_warnsize": 0},
                    dont_filter=True,
                    priority=5,
                )
            except ValueError as exc:  # not a URL Scrapy can request (e.g. no scheme)
                refusal = address_refusal(url, allow_loopback=self.allow_loopback, resolve=False)
                planned.append((url, refusal or f"refused: {exc}"))
            else:
                planned.append((url, request))
        return planned

    def get_media_requests(self, item: Any, info: MediaPipeline.SpiderInfo) -> list[scrapy.Request]:
        return [r for _url, r in self._requests(item) if isinstance(r, scrapy.Request)]

    async def media_to_download(
        self, request: scrapy.Request, info: MediaPipeline.SpiderInfo, *, item: Any = None
    ) -> dict[str, Any] | None:
        """Refuse a URL before any byte is fetched (scheme, private or loopback address); else download."""
        refusal = await asyncio.to_thread(address_refusal, request.url, allow_loopback=self.allow_loopback)
        if refusal:
            return self._result(request, self.FILE(url=request.url, error=refusal))
        return None

    def media_failed(
        self, failure: Failure, request: scrapy.Request, info: MediaPipeline.SpiderInfo
    ) -> NoReturn:
        """A download that raised (robots.txt, size cap, network): the reason becomes the stored error."""
        exc = failure.value
        stop_when_disk_full(self.crawler, exc)
        message = f"{type(exc).__name__}: {exc}"
        if "max size" in message:
            message = self.size_refusal()
        self._count(message)
        raise ImageRefused(message, status="refused") from exc

    async def media_downloaded(
        self,
        response: scrapy.http.Response,
        request: scrapy.Request,
        info: MediaPipeline.SpiderInfo,
        *,
        item: Any = None,
    ) -> dict[str, Any]:
        """The validation hook: check the bytes with :func:`rwpost.images.inspect_image`, then store them."""
        if response.status != 200:
            return self._result(request, ImageFile(url=request.url, error=f"HTTP {response.status}"))
        data = response.body
        digest = sha256_hex(data)
        try:
            image = await asyncio.to_thread(inspect_image, data, max_pixels=self.max_pixels)
        except ImageRefused as exc:
            refused = ImageFile(url=request.url, sha256=digest, size_bytes=len(data), error=str(exc))
            return self._result(request, refused)
        path = self.file_path(request, response=response, info=info, item=item)
        self.store.persist_file(path, BytesIO(data), info)
        stored = ImageFile(
            url=request.url,
            sha256=digest,
            path=path,
            width=image.width,
            height=image.height,
            format=image.format,
            size_bytes=len(data),
        )
        return self._result(request, stored)

    def _result(self, request: scrapy.Request, image: ImageFile | VideoFile) -> dict[str, Any]:
        """Scrapy's FileInfo of one media URL, carrying the record that the article stores."""
        self._count(image.error)
        status = "refused" if image.error else "downloaded"
        return {
            "url": request.url,
            "path": image.path,
            "checksum": image.sha256,
            "status": status,
            "image": image,
        }

    def file_path(
        self,
        request: scrapy.Request,
        response: scrapy.http.Response | None = None,
        info: MediaPipeline.SpiderInfo | None = None,
        *,
        item: Any = None,
    ) -> str:
        """``images/<sha256>.<ext>``: the content address, so each distinct image is stored once."""
        if response is None:  # FilesPipeline asks before downloading; media_to_download no longer does
            raise RwpostError(
                f"{request.url}: an image's path is its content's hash, known only from the response"
            )
        return f"{IMAGES_DIR}/{image_name(sha256_hex(response.body), image_extension(response.body))}"

    def item_completed(
        self, results: list[FileInfoOrError], item: Any, info: MediaPipeline.SpiderInfo
    ) -> Any:
        """Put one record per media URL on the article (``item["images"]``, ``item["videos"]``), in the
        page's order."""
        if item.get("kind") != "article":
            return item
        downloads = iter(results)
        images: list[Any] = []
        for url, request in self._requests(item):
            if not isinstance(request, scrapy.Request):
                if url not in self.unrequestable:
                    self.unrequestable.add(url)
                    self._count(request)
                images.append(self.FILE(url=url, error=request))
                continue
            ok, value = next(downloads)
            if ok:
                images.append(value["image"].model_copy(update={"url": url}))  # type: ignore[index]
            else:
                images.append(self.FILE(url=url, error=str(value.value)))  # type: ignore[union-attr]
        item[f"{self.MEDIA_NAME}s"] = images
        return item


VIDEO_FILE_EXTENSIONS = VIDEO_EXTENSIONS - {"m3u8", "gifv"}
"""Extensions of a direct video file (a playlist or an image host's page is not one)."""

VIDEOS_DIR = "videos"
"""The crawl store's folder of videos, ``videos/<sha256>.<ext>``."""

_VIDEO_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (4, b"ftyp", "mp4"),  # MP4, MOV, M4V, 3GP
    (0, b"\x1a\x45\xdf\xa3", "webm"),  # Matroska, WebM
    (0, b"OggS", "ogv"),
    (0, b"FLV", "flv"),
    (0, b"\x00\x00\x01\xba", "mpg"),
    (0, b"\x00\x00\x01\xb3", "mpg"),
    (0, b"\x30\x26\xb2\x75", "wmv"),
)


def video_format(data: bytes) -> str | None:
    """The container of a video file by its first bytes (``mp4``, ``webm``, ``avi``...); None if none."""
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "avi"
    for offset, magic, name in _VIDEO_SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            return name
    return None


def direct_video_urls(body: bytes, base_url: str) -> list[str]:
    """The video files a page embeds directly: each ``<video>``'s ``src`` or first ``<source>``, when it
    names a video file (by extension, or a ``<source type="video/...">``), absolute, in page order."""
    from bs4 import BeautifulSoup

    if b"<video" not in body.lower():  # most pages: no parse at all
        return []
    soup = BeautifulSoup(body, "html.parser")
    urls: list[str] = []
    for node in soup.find_all("video"):
        url = resolve_link(embed_url(node), base_url)
        source = node.find("source")
        typed = bool(source and str(source.get("type") or "").startswith("video/"))
        extension = url.rsplit("?", 1)[0].rsplit(".", 1)[-1].lower() if url else ""
        if url and link_kind(url) == "video" and extension in VIDEO_FILE_EXTENSIONS or url and typed:
            urls.append(url)
    return list(dict.fromkeys(urls))


class ArticleVideosPipeline(ArticleImagesPipeline):
    """The image pipeline for the direct video files a page embeds (:func:`direct_video_urls`): fetched
    through the downloader, capped at ``RWPOST_MAX_VIDEO_BYTES``, checked to be a video container
    (:func:`video_format`) and kept verbatim as ``videos/<sha256>.<ext>``; ``item["videos"]`` gets one
    :class:`VideoFile` per URL, refused ones with their reason. ``RWPOST_DOWNLOAD_VIDEOS`` off skips it."""

    MEDIA_NAME = "video"
    FILE = VideoFile

    def __init__(self, store_uri: str, *, crawler: scrapy.crawler.Crawler) -> None:
        super().__init__(store_uri, crawler=crawler)
        self.enabled = crawler.settings.getbool("RWPOST_DOWNLOAD_VIDEOS", True)
        self.max_bytes = crawler.settings.getint("RWPOST_MAX_VIDEO_BYTES", MAX_VIDEO_BYTES)

    def media_urls(self, item: dict[str, Any]) -> list[str]:
        return direct_video_urls(item.get("body") or b"", item["fetched_url"])

    def size_refusal(self) -> str:
        return f"refused: larger than the video size cap ({self.max_bytes} bytes)"

    async def media_downloaded(
        self,
        response: scrapy.http.Response,
        request: scrapy.Request,
        info: MediaPipeline.SpiderInfo,
        *,
        item: Any = None,
    ) -> dict[str, Any]:
        """Keep the bytes when they are a video container; else the reason."""
        if response.status != 200:
            return self._result(request, VideoFile(url=request.url, error=f"HTTP {response.status}"))
        data = response.body
        digest, container = sha256_hex(data), video_format(data)
        if container is None:
            error = "not a video: the bytes are no known video container"
            return self._result(
                request, VideoFile(url=request.url, sha256=digest, size_bytes=len(data), error=error)
            )
        path = self.file_path(request, response=response, info=info, item=item)
        self.store.persist_file(path, BytesIO(data), info)
        stored = VideoFile(url=request.url, sha256=digest, path=path, format=container, size_bytes=len(data))
        return self._result(request, stored)

    def file_path(
        self,
        request: scrapy.Request,
        response: scrapy.http.Response | None = None,
        info: MediaPipeline.SpiderInfo | None = None,
        *,
        item: Any = None,
    ) -> str:
        """``videos/<sha256>.<ext>``: the content address, so each distinct video is stored once."""
        if response is None:
            raise RwpostError(
                f"{request.url}: a video's path is its content's hash, known only from the response"
            )
        return f"{VIDEOS_DIR}/{sha256_hex(response.body)}.{video_format(response.body) or 'bin'}"


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
        try:
            if record.id in self.written or (record.id in store.records and not item.get("refetch")):
                # Another URL of an article already stored: remember the URL so no run fetches it again.
                stats.inc_value("rwpost/duplicates")
                store.add_alias(item["requested_url"], record.id)
                raise DropItem(f"duplicate of {record.id} (canonical {record.url}) at {record.fetched_url}")
            store.add(record)
            self.written.add(record.id)
            if path_key(item["requested_url"]) != path_key(item["fetched_url"]):
                store.add_alias(item["requested_url"], record.id)  # a redirect: the listed URL is known too
        except RwpostError as exc:
            stop_when_disk_full(self.crawler, exc)
            raise
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
        url, status = item["fetched_url"], item["http_status"]
        logger.info("fetched %s at %s (HTTP %s)", url, fetched_at.isoformat(), status)
        if item["kind"] == "failure":
            url = item["fetched_url"]
            record = CrawledArticle(
                id=record_id(url),
                url=url,
                fetched_url=url,
                http_status=item["http_status"],
                fetched_at=fetched_at,
                parse_error=item["reason"],
            )
        else:
            record = article_record(
                item["parsed"],
                fetched_url=item["fetched_url"],
                http_status=item["http_status"],
                fetched_at=fetched_at,
                html=store.save_html(item["body"]),
                images=item.get("images") or [],
            )
            if item.get("videos"):
                record = record.model_copy(update={"videos": item["videos"]})
        return store.origin.record(record)
