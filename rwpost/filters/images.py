"""Image access for the filters: probe a stored image, decode it to RGB.

Decoding and its guards (decompression bombs, truncated files) are :func:`rwpost.images.open_image`'s,
the same the crawler applies. Every failure becomes a status string (``missing``, ``unavailable``,
``bomb``, ``truncated``, ``unreadable``) that a filter turns into a decision with a reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwpost.images import ImageRefused, open_image

if TYPE_CHECKING:
    from PIL import Image


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
        image = open_image(file)
    except ImageRefused as exc:
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
    """Decode an image to 8-bit RGB (CMYK, palette, alpha and 16-bit handled); raises ImageRefused."""
    from PIL import Image

    image = open_image(Path(path))
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
