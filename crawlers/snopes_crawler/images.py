"""Image safety checks, as pure functions: which URLs may be fetched and which bytes are images.

Article images come from third parties, so the crawler refuses non-http(s) URLs, hosts that resolve
to private, link-local or loopback addresses (server-side request forgery; loopback only when allowed,
for the local sample site), responses over a size cap, files that are not images and decompression
bombs (images whose pixel count would exhaust memory when decoded).
"""

from __future__ import annotations

import ipaddress
import socket
import warnings
from dataclasses import dataclass
from io import BytesIO
from urllib.parse import urlsplit

ALLOWED_FORMATS: dict[str, str] = {"JPEG": "jpg", "PNG": "png", "GIF": "gif", "WEBP": "webp", "BMP": "bmp"}
"""Image formats kept, with the file extension each is stored under."""

DEFAULT_MAX_PIXELS = 50_000_000
"""Largest width x height decoded (a 1-bit 16000x16000 PNG of 30 kB is 256 megapixels)."""


class ImageRefused(Exception):
    """An image URL or payload that the crawler will not keep; the message is the stored reason."""


@dataclass(frozen=True)
class ImageInfo:
    """What the crawler records about an accepted image."""

    format: str
    extension: str
    width: int
    height: int


def address_refusal(url: str, *, allow_loopback: bool, resolve: bool = True) -> str | None:
    """Why ``url`` must not be fetched, or None when it may (checks scheme and resolved addresses)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"refused: not an http(s) URL (scheme {parts.scheme or 'none'!r})"
    host = parts.hostname
    if not host:
        return "refused: URL has no host"
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        if not resolve:
            return None
        try:
            infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
        except OSError as exc:
            return f"refused: cannot resolve host {host!r} ({exc})"
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
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


def inspect_image(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageInfo:
    """Identify ``data`` as an image and check it fully decodes; raises :class:`ImageRefused`."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise ImageRefused("not an image: empty response")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(BytesIO(data)) as image:
                width, height = image.size
                fmt = image.format or ""
                if width * height > max_pixels:
                    raise ImageRefused(
                        f"decompression bomb: {width}x{height} = {width * height} pixels > {max_pixels}"
                    )
                if fmt not in ALLOWED_FORMATS:
                    raise ImageRefused(f"unsupported image format {fmt!r}")
                image.load()
        except ImageRefused:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageRefused(f"decompression bomb: {exc}") from exc
        except UnidentifiedImageError as exc:
            raise ImageRefused("not an image: the bytes are no known image format") from exc
        except (OSError, SyntaxError, ValueError) as exc:
            raise ImageRefused(f"broken image: {exc}") from exc
    return ImageInfo(format=fmt, extension=ALLOWED_FORMATS[fmt], width=width, height=height)
