"""Safe image access for the filters: probe, open as RGB, fetch a missing image.

Every failure becomes a status string (``missing``, ``unavailable``, ``bomb``, ``truncated``,
``unreadable``) that a filter turns into a decision with a reason; nothing here raises on a bad file.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, ImageFile, UnidentifiedImageError

from rwpost.io import sha256_hex, write_bytes

MAX_PIXELS = 89_478_485
"""Pillow's default decompression-bomb limit (``Image.MAX_IMAGE_PIXELS``); larger images are refused."""


class ImageUnavailable(Exception):
    """An image that cannot be decoded; ``status`` is the reason code."""

    def __init__(self, status: str, message: str) -> None:
        self.status = status
        super().__init__(message)


def _open_checked(path: Path) -> Image.Image:
    """Open and fully decode an image, refusing bombs and truncated files (never Pillow's global flags)."""
    if ImageFile.LOAD_TRUNCATED_IMAGES:  # someone flipped the global; we still want to know
        raise ImageUnavailable("unreadable", "PIL.ImageFile.LOAD_TRUNCATED_IMAGES is set; refusing to guess")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(path)
            if image.width * image.height > MAX_PIXELS:
                raise ImageUnavailable("bomb", f"{image.width}x{image.height} exceeds {MAX_PIXELS} pixels")
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageUnavailable("bomb", str(exc)) from exc
        except UnidentifiedImageError as exc:
            raise ImageUnavailable("unreadable", "not an image Pillow can identify") from exc
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            status = "truncated" if "truncated" in str(exc).lower() else "unreadable"
            raise ImageUnavailable(status, f"{type(exc).__name__}: {exc}") from exc
    return image


def probe_image(path: str | Path | None, *, error: str | None = None) -> dict[str, Any]:
    """Measure one image file: status, format, mode, size, frames; never raises.

    ``error`` is a fetch error already known for the image (e.g. ``http 404``); it wins over the path.
    """
    if error:
        return {"status": "unavailable", "message": error}
    if not path:
        return {"status": "missing", "message": "no image for this record"}
    file = Path(path)
    if not file.is_file():
        return {"status": "missing", "message": f"file not found: {file}"}
    try:
        image = _open_checked(file)
    except ImageUnavailable as exc:
        return {"status": exc.status, "message": str(exc), "size_bytes": file.stat().st_size}
    return {
        "status": "ok",
        "format": image.format,
        "mode": image.mode,
        "width": image.width,
        "height": image.height,
        "frames": int(getattr(image, "n_frames", 1)),
        "size_bytes": file.stat().st_size,
    }


def open_rgb(path: str | Path) -> Image.Image:
    """Decode an image to 8-bit RGB (CMYK, palette, alpha and 16-bit handled); raises ImageUnavailable."""
    image = _open_checked(Path(path))
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    if image.mode.startswith("I;16") or image.mode == "I":
        return image.point(lambda v: v / 256).convert("L").convert("RGB")
    return image.convert("RGB")


def fetch_image(url: str, store_dir: str | Path, client: httpx.Client) -> dict[str, Any]:
    """Download one image into a content-addressed store; returns ``path``/``sha256`` or ``error``.

    The error strings (``http 404``, ``ConnectError: ...``) become the candidate's ``image_error``.
    """
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    if response.status_code != 200:
        return {"error": f"http {response.status_code}"}
    data = response.content
    if not data:
        return {"error": "empty response"}
    digest = sha256_hex(data)
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    suffix = {"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp"}.get(
        kind, Path(httpx.URL(url).path).suffix.lower()[:6] or ".bin"
    )
    target = Path(store_dir) / digest[:2] / f"{digest}{suffix}"
    if not target.exists():
        write_bytes(target, data)
    return {"path": str(target), "sha256": digest}
