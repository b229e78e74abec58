"""Reverse image search with Google Cloud Vision web detection, as in the paper (section IV-B3), and its
loopback twin.

``POST /v1/images:annotate`` with the image as base64 and feature ``WEB_DETECTION`` (key in the
``X-Goog-Api-Key`` header, never in the URL) answers ``webDetection.pagesWithMatchingImages``: pages
with ``url``, ``pageTitle`` and their ``fullMatchingImages`` / ``partialMatchingImages``.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Mapping
from typing import Any

from rwpost.evaluate.search import ImageMatch
from rwpost.evaluate.search.http import ApiBackend
from rwpost.images import FETCH_DELAY, ImageFetcher, ImageRefused

VISION_URL = "https://vision.googleapis.com"
KEY_VARIABLE = "GOOGLE_VISION_API_KEY"


def matches_of(data: Mapping[str, Any], limit: int) -> list[ImageMatch]:
    """The pages with matching images of a web detection answer."""
    responses = data.get("responses") or [{}]
    detection = (responses[0] or {}).get("webDetection") or {}
    out = []
    for page in detection.get("pagesWithMatchingImages") or []:
        if not isinstance(page, dict) or not page.get("url"):
            continue
        full, partial = page.get("fullMatchingImages") or [], page.get("partialMatchingImages") or []
        image = (full or partial or [{}])[0].get("url")
        kind = "full" if full else "partial" if partial else "similar"
        title = str(page.get("pageTitle") or "").replace("<b>", "").replace("</b>", "")
        out.append(ImageMatch(page_url=str(page["url"]), page_title=title, image_url=image, match=kind))
    return out[:limit]


class VisionWebDetection(ApiBackend):
    """Reverse image search through Cloud Vision; the key comes from ``GOOGLE_VISION_API_KEY`` only."""

    name = "google-vision"
    key_variable = KEY_VARIABLE
    key_header = "X-Goog-Api-Key"
    path = "/v1/images:annotate"

    def __init__(
        self,
        base_url: str = VISION_URL,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        environ: Mapping[str, str] | None = None,
        image_max_bytes: int = 5_000_000,
        allow_loopback: bool = False,
        image_delay_s: float = FETCH_DELAY,
    ) -> None:
        self._connect(
            base_url, timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s, environ=environ
        )
        self.images = ImageFetcher(
            allow_loopback=allow_loopback, delay=image_delay_s, max_bytes=image_max_bytes, timeout=timeout_s
        )
        self._one_fetch = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"backend": self.name, "base_url": self.base_url}

    async def similar(self, image: bytes, *, limit: int = 10) -> list[ImageMatch]:
        payload = {
            "requests": [
                {
                    "image": {"content": base64.b64encode(image).decode("ascii")},
                    "features": [{"type": "WEB_DETECTION", "maxResults": limit}],
                }
            ]
        }
        return matches_of(await self.api.post(payload), limit)

    async def fetch_image(self, url: str) -> bytes | None:
        """The bytes of a matched image (to compare with the post image), or None when the
        :class:`~rwpost.images.ImageFetcher` refuses it (private address, robots.txt, size cap, HTTP error).
        One download at a time, so the fetcher's per-host delay holds."""
        return await asyncio.to_thread(self._download, url)

    def _download(self, url: str) -> bytes | None:
        with self._one_fetch:
            try:
                return self.images.download(url)
            except ImageRefused:
                return None

    async def aclose(self) -> None:
        await super().aclose()
        self.images.close()


class LoopbackImageSearch(VisionWebDetection):
    """Cloud Vision's wire format against a local scripted server: no key, short timeouts."""

    name = "loopback-image"
    key_required = False

    def __init__(self, base_url: str, timeout_s: float = 5.0, max_retries: int = 1, backoff_s: float = 0.01):
        super().__init__(
            base_url,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            allow_loopback=True,
            image_delay_s=0.0,
        )
