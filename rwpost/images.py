"""One image fetcher and validator: the limits, formats, decompression-bomb guard and address refusal
that the crawler (``crawlers/snopes_crawler/pipelines.py``) and the filters (``rwpost/filters/``) share.

Article images come from third parties, so an image is kept only when its URL is http(s) on a public
address (loopback only when allowed, for the local sample site: server-side request forgery), its
response is under :data:`MAX_IMAGE_BYTES`, its bytes are one of :data:`FORMATS` and it fully decodes
within :data:`MAX_IMAGE_PIXELS`. A kept image is stored once under its content address,
``<folder>/<sha256>.<ext>`` (the crawl store's ``images/`` folder; the filter's fetch cache).
"""

from __future__ import annotations

import re
import socket
import time
import urllib.robotparser
import warnings
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from rwpost.errors import ConfigError, RwpostError
from rwpost.io import sha256_hex, write_bytes
from rwpost.records import ImageFile
from rwpost.urls import ip_host, origin, split_url

if TYPE_CHECKING:  # Pillow and httpx are imported where an image is decoded or fetched (start-up time)
    import httpx
    from PIL import Image

MAX_IMAGE_BYTES = 10 * 1024 * 1024
"""Largest image response kept (10 MiB): news photos are well under 2 MB, so a larger body is a video,
an archive or a hostile server; the cap also bounds the memory of one download."""

MAX_IMAGE_PIXELS = 50_000_000
"""Largest width x height decoded (50 megapixels, 150 MB as RGB). An 8K photo is 33 Mpx; a 1-bit
16000x16000 PNG of 30 kB is 256 Mpx. Stricter than Pillow's desktop default (89.5 Mpx), whose warning
and error still fire first above it."""

FORMATS: dict[str, str] = {"JPEG": "jpg", "PNG": "png", "GIF": "gif", "WEBP": "webp", "BMP": "bmp"}
"""Image formats kept, with the file extension each is stored under."""

IMAGES_DIR = "images"
"""The crawl store's folder of images, ``images/<sha256>.<ext>``."""

FETCH_DELAY = 1.0
"""Seconds between two requests to one host outside Scrapy (the crawler's ``DOWNLOAD_DELAY``)."""

FETCH_USER_AGENT = "rwpost-filter"
"""User-Agent of downloads outside Scrapy, also the name robots.txt rules are matched against."""


class ImageRefused(RwpostError):
    """An image URL or payload that is not kept; the message is the stored reason.

    ``status`` is the reason code the filters decide on: ``bomb``, ``truncated``, ``unreadable``
    (bytes that are no image, or no supported one) or ``refused`` (the URL or the response).
    """

    def __init__(self, message: str, *, status: str = "unreadable") -> None:
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class ImageInfo:
    """What is recorded about an accepted image."""

    format: str
    extension: str
    width: int
    height: int


def address_refusal(url: str, *, allow_loopback: bool, resolve: bool = True) -> str | None:
    """Why ``url`` must not be fetched, or None when it may (checks scheme and resolved addresses)."""
    parts = split_url(url)
    if parts is None:
        return "refused: not a URL"
    if parts.scheme not in ("http", "https"):
        return f"refused: not an http(s) URL (scheme {parts.scheme or 'none'!r})"
    host = parts.hostname
    if not host:
        return "refused: URL has no host"
    literal = ip_host(host)
    if literal is not None:
        addresses = [literal]
    else:
        if not resolve:
            return None
        try:
            infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
        except OSError as exc:
            return f"refused: cannot resolve host {host!r} ({exc})"
        addresses = [a for a in (ip_host(str(info[4][0])) for info in infos) if a is not None]
    for address in addresses:
        if address.is_loopback:
            if not allow_loopback:
                return f"refused: {host} is a loopback address (allow_loopback is off)"
            continue
        if address.is_private or address.is_link_local or address.is_reserved or address.is_multicast:
            return f"refused: {host} resolves to a private, link-local or reserved address ({address})"
        if address.is_unspecified:
            return f"refused: {host} resolves to an unspecified address"
    return None


def size_refusal(max_bytes: int) -> str:
    """The stored reason of a response over the size cap."""
    return f"refused: larger than the image size cap ({max_bytes} bytes)"


RETRIED_IMAGE_STATUSES = frozenset({408, 429, *range(500, 600)})
"""HTTP statuses of an image that are an outage (timeout, rate limit, server error), not the site's answer."""


def transient_image_error(error: str | None) -> bool:
    """Whether an image's stored error is an outage that the next crawl asks again: HTTP 408, 429 or 5xx
    (after the run's own retries), a download that raised before any response (connection refused or
    reset, timeout: stored as ``ExceptionName: message``) or a host that did not resolve. A 404 or other
    status, a refusal (address, size cap, robots.txt) and bytes that are no image are the site's answer and
    stay final, as a page's failure does (``snopes_crawler.spiders.snopes.is_transport_failure``)."""
    if not error:
        return False
    status = re.fullmatch(r"HTTP (\d{3})", error)
    if status:
        return int(status.group(1)) in RETRIED_IMAGE_STATUSES
    if error.startswith("refused: cannot resolve host"):
        return True
    name, sep, _ = error.partition(":")
    return bool(sep) and name.isidentifier() and name not in ("refused", "IgnoreRequest")


def open_image(
    source: bytes | str | Path,
    *,
    max_pixels: int = MAX_IMAGE_PIXELS,
    formats: dict[str, str] | None = None,
) -> Image.Image:
    """Open and fully decode image bytes or a file, refusing bombs, broken files and, when ``formats``
    is given, other formats; raises :class:`ImageRefused`. Never changes Pillow's global flags."""
    from PIL import Image, UnidentifiedImageError
    from PIL import ImageFile as PilImageFile

    if isinstance(source, bytes) and not source:
        raise ImageRefused("not an image: empty response")
    if PilImageFile.LOAD_TRUNCATED_IMAGES:  # someone flipped the global; we still want to know
        raise ImageRefused("PIL.ImageFile.LOAD_TRUNCATED_IMAGES is set; refusing to guess")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(BytesIO(source) if isinstance(source, bytes) else source)
            width, height = image.size
            if width * height > max_pixels:
                raise ImageRefused(
                    f"decompression bomb: {width}x{height} = {width * height} pixels > {max_pixels}",
                    status="bomb",
                )
            if formats is not None and image.format not in formats:
                raise ImageRefused(f"unsupported image format {image.format or ''!r}")
            image.load()
        except ImageRefused:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageRefused(f"decompression bomb: {exc}", status="bomb") from exc
        except UnidentifiedImageError as exc:
            raise ImageRefused("not an image: the bytes are no known image format") from exc
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            status = "truncated" if "truncated" in str(exc).lower() else "unreadable"
            raise ImageRefused(f"broken image: {exc}", status=status) from exc
    return image


def inspect_image(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS) -> ImageInfo:
    """Identify ``data`` as an image of a kept format that fully decodes; raises :class:`ImageRefused`."""
    with open_image(data, max_pixels=max_pixels, formats=FORMATS) as image:
        fmt = image.format or ""
        return ImageInfo(format=fmt, extension=FORMATS[fmt], width=image.width, height=image.height)


def image_extension(data: bytes) -> str:
    """The extension that checked image bytes are stored under (reads the header only)."""
    from PIL import Image

    with Image.open(BytesIO(data)) as image:
        return FORMATS[image.format or ""]


def image_name(digest: str, extension: str) -> str:
    """The file name of an image in a store folder: its content address."""
    return f"{digest}.{extension}"


def write_once(target: str | Path, data: bytes) -> None:
    """Write a content-addressed file atomically unless it is there (same name, same bytes)."""
    if not Path(target).exists():
        write_bytes(target, data)


def _host_key(url: str) -> str:
    return origin(url)


class ImageFetcher:
    """Polite image downloads outside Scrapy (the filter's ``fetch_missing``, the reverse image search's
    matched images), with the crawler's rules: robots.txt (``urllib.robotparser``), :data:`FETCH_DELAY`
    between requests to a host, the address refusal on every hop of a redirect, the size cap and
    :func:`inspect_image`.

    :meth:`fetch` never raises for a bad image: the returned record carries the reason in ``error``; it
    stores images in ``folder``, which :meth:`download` (bytes only) does not need.
    ``transport`` replaces the network (``httpx.MockTransport`` in tests).
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        allow_loopback: bool = False,
        delay: float = FETCH_DELAY,
        max_bytes: int = MAX_IMAGE_BYTES,
        max_pixels: int = MAX_IMAGE_PIXELS,
        timeout: float = 20.0,
        user_agent: str = FETCH_USER_AGENT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        self.folder = None if folder is None else Path(folder)
        self.allow_loopback = allow_loopback
        self.delay = delay
        self.max_bytes = max_bytes
        self.max_pixels = max_pixels
        self.user_agent = user_agent
        self.robots: dict[str, urllib.robotparser.RobotFileParser] = {}
        self.last_request: dict[str, float] = {}
        self.client = httpx.Client(
            timeout=timeout,
            follow_redirects=True,
            headers={"User-Agent": user_agent},
            event_hooks={"request": [self._before_request]},
            transport=transport,
        )

    def __enter__(self) -> ImageFetcher:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    def _before_request(self, request: httpx.Request) -> None:
        """Every request, redirects included: refuse private addresses, then wait for the host's turn."""
        url = str(request.url)
        refusal = address_refusal(url, allow_loopback=self.allow_loopback)
        if refusal:
            raise ImageRefused(refusal, status="refused")
        host = _host_key(url)
        wait = self.last_request.get(host, float("-inf")) + self.delay - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self.last_request[host] = time.monotonic()

    def allowed_by_robots(self, url: str) -> bool:
        """Whether the host's robots.txt lets :data:`FETCH_USER_AGENT` fetch ``url`` (read once per host).

        As ``urllib.robotparser`` reads it: 401 and 403 forbid everything, another 4xx allows everything;
        a robots.txt that cannot be fetched at all allows, as Scrapy's robots.txt middleware does.
        """
        import httpx

        host = _host_key(url)
        if host not in self.robots:
            parser = urllib.robotparser.RobotFileParser(f"{host}/robots.txt")
            try:
                response = self.client.get(f"{host}/robots.txt")
            except (httpx.HTTPError, ImageRefused):
                response = None
            if response is None or response.status_code >= 500:
                parser.allow_all = True
            elif response.status_code in (401, 403):
                parser.disallow_all = True
            elif response.status_code >= 400:
                parser.allow_all = True
            else:
                parser.parse(response.text.splitlines())
            self.robots[host] = parser
        return self.robots[host].can_fetch(self.user_agent, url)

    def download(self, url: str) -> bytes:
        """The body of ``url`` under the rules above (no image check, nothing stored); raises
        :class:`ImageRefused` with the stored reason."""
        import httpx

        refusal = address_refusal(url, allow_loopback=self.allow_loopback)
        if refusal:
            raise ImageRefused(refusal, status="refused")
        if not self.allowed_by_robots(url):
            raise ImageRefused("refused: forbidden by robots.txt", status="refused")
        try:
            with self.client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise ImageRefused(f"http {response.status_code}", status="refused")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body.extend(chunk)
                    if len(body) > self.max_bytes:
                        raise ImageRefused(size_refusal(self.max_bytes), status="refused")
        except httpx.HTTPError as exc:
            raise ImageRefused(f"{type(exc).__name__}: {exc}", status="refused") from exc
        return bytes(body)

    def fetch(self, url: str) -> ImageFile:
        """Download, check and store one image: ``path`` (in ``folder``) and ``sha256``, or ``error``."""
        if self.folder is None:
            raise ConfigError("ImageFetcher.fetch stores images: give the fetcher a folder")
        try:
            data = self.download(url)
        except ImageRefused as exc:
            return ImageFile(url=url, error=str(exc))
        digest = sha256_hex(data)
        try:
            info = inspect_image(data, max_pixels=self.max_pixels)
        except ImageRefused as exc:
            return ImageFile(url=url, sha256=digest, size_bytes=len(data), error=str(exc))
        target = self.folder / image_name(digest, info.extension)
        write_once(target, data)
        return ImageFile(
            url=url,
            sha256=digest,
            path=str(target),
            width=info.width,
            height=info.height,
            format=info.format,
            size_bytes=len(data),
        )
