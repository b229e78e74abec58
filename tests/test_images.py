"""rwpost.images: the one image check, the fetcher outside Scrapy (robots.txt, per-host delay, private-
address refusal with redirects, size cap) and the crawler's subclass of Scrapy's FilesPipeline.

Images are generated in the test; the network is an ``httpx.MockTransport``.
"""

from __future__ import annotations

import asyncio
import io
import time
from itertools import pairwise
from pathlib import Path

import httpx
import pytest
from PIL import Image
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from snopes_crawler.pipelines import ArticleImagesPipeline
from twisted.python.failure import Failure

from rwpost.errors import RwpostError
from rwpost.images import (
    MAX_IMAGE_BYTES,
    ImageFetcher,
    ImageRefused,
    address_refusal,
    image_extension,
    inspect_image,
    size_refusal,
)
from rwpost.io import sha256_hex
from rwpost.records import ImageFile
from rwpost.sample.images import draw_decompression_bomb


def _png(side: int = 40) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (side, side), (10, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


HOST = (
    "http://93.184.216.34"  # a public address given literally: nothing is resolved, the transport is mocked
)
ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/robots.txt": (200, {}, b"User-agent: *\nDisallow: /private/\n"),
    "/a.png": (200, {}, _png()),
    "/b.png": (200, {}, _png(50)),
    "/private/c.png": (200, {}, _png()),
    "/page.jpg": (200, {"Content-Type": "image/jpeg"}, b"<html>not an image</html>"),
    "/big.png": (200, {}, b"\x89PNG" + b"\x00" * 5000),
    "/to-private": (302, {"Location": "http://10.0.0.5/a.png"}, b""),
}


@pytest.fixture()
def site():
    """A mocked public site: ``requests`` records (time, URL) of every request that reached it."""
    requests: list[tuple[float, str]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        requests.append((time.monotonic(), str(request.url)))
        status, headers, body = ROUTES.get(request.url.path, (404, {}, b"not found"))
        return httpx.Response(status, headers=headers, content=body)

    return httpx.MockTransport(respond), requests


def test_refusals_are_rwpost_errors_with_a_status():
    with pytest.raises(ImageRefused) as caught:
        inspect_image(b"")
    assert isinstance(caught.value, RwpostError) and caught.value.status == "unreadable"
    assert MAX_IMAGE_BYTES == 10 * 1024 * 1024
    assert image_extension(_png()) == "png"


def test_fetched_image_is_stored_by_content_address(tmp_path: Path, site) -> None:
    transport, _ = site
    with ImageFetcher(tmp_path, delay=0, transport=transport) as fetcher:
        got = fetcher.fetch(f"{HOST}/a.png")
    assert got.error is None and (got.format, got.width, got.height) == ("PNG", 40, 40)
    assert Path(got.path) == tmp_path / f"{sha256_hex(ROUTES['/a.png'][2])}.png"
    assert Path(got.path).read_bytes() == ROUTES["/a.png"][2] and got.size_bytes == len(ROUTES["/a.png"][2])


def test_loopback_and_private_addresses_are_refused_unless_allowed(tmp_path: Path, site) -> None:
    transport, requests = site
    with ImageFetcher(tmp_path, delay=0, transport=transport) as fetcher:
        loopback = fetcher.fetch("http://127.0.0.1:8000/a.png")
        redirected = fetcher.fetch(f"{HOST}/to-private")
    assert loopback.error == "refused: 127.0.0.1 is a loopback address (allow_loopback is off)"
    assert redirected.error.startswith("refused: 10.0.0.5 resolves to a private")
    assert [url for _, url in requests] == [f"{HOST}/robots.txt", f"{HOST}/to-private"]  # never 10.0.0.5
    with ImageFetcher(tmp_path, delay=0, allow_loopback=True, transport=transport) as fetcher:
        assert fetcher.fetch("http://127.0.0.1:8000/a.png").error is None


def test_robots_txt_is_read_once_per_host_and_obeyed(tmp_path: Path, site) -> None:
    transport, requests = site
    with ImageFetcher(tmp_path, delay=0, transport=transport) as fetcher:
        assert fetcher.fetch(f"{HOST}/private/c.png").error == "refused: forbidden by robots.txt"
        assert fetcher.fetch(f"{HOST}/a.png").error is None
    assert [url for _, url in requests] == [f"{HOST}/robots.txt", f"{HOST}/a.png"]


def test_requests_to_one_host_wait_for_the_delay(tmp_path: Path, site) -> None:
    transport, requests = site
    with ImageFetcher(tmp_path, delay=0.3, transport=transport) as fetcher:
        fetcher.fetch(f"{HOST}/a.png")
        fetcher.fetch(f"{HOST}/b.png")
        fetcher.fetch("http://93.184.216.35/a.png")  # another host does not wait
    times = [t for t, _ in requests]
    assert len(times) == 5 and all(later - earlier >= 0.29 for earlier, later in pairwise(times[:3]))
    assert times[3] - times[2] < 0.25


def test_oversized_and_non_image_responses_are_refused(tmp_path: Path, site) -> None:
    transport, _ = site
    with ImageFetcher(tmp_path, delay=0, max_bytes=1000, transport=transport) as fetcher:
        assert fetcher.fetch(f"{HOST}/big.png").error == size_refusal(1000)
        page = fetcher.fetch(f"{HOST}/page.jpg")
        assert fetcher.fetch(f"{HOST}/gone.png").error == "http 404"
    assert page.error == "not an image: the bytes are no known image format" and page.path is None
    assert page.sha256 == sha256_hex(ROUTES["/page.jpg"][2])
    assert list(tmp_path.iterdir()) == []


# --- the crawler's subclass of Scrapy's FilesPipeline, hook by hook (the whole crawl: test_crawl.py) ---


@pytest.fixture()
def pipeline(tmp_path: Path):
    crawler = get_crawler(settings_dict={"RWPOST_ALLOW_LOOPBACK": True, "RWPOST_MAX_IMAGE_BYTES": 1000})
    return ArticleImagesPipeline(str(tmp_path), crawler=crawler)


def test_pipeline_stores_checked_bytes_under_their_content_address(tmp_path: Path, pipeline) -> None:
    data = _png()
    request = Request("http://127.0.0.1:1/a.png")
    ok = asyncio.run(pipeline.media_downloaded(Response(request.url, body=data), request, None))
    image = ok["image"]
    assert image.path == f"images/{sha256_hex(data)}.png" and (tmp_path / image.path).read_bytes() == data
    assert (image.format, image.width, image.height, image.size_bytes) == ("PNG", 40, 40, len(data))
    gone = asyncio.run(pipeline.media_downloaded(Response(request.url, status=404), request, None))
    assert gone["image"].error == "HTTP 404" and gone["image"].path is None
    page = asyncio.run(pipeline.media_downloaded(Response(request.url, body=b"<html>"), request, None))
    assert page["image"].error.startswith("not an image") and page["image"].sha256 == sha256_hex(b"<html>")


def test_pipeline_refusals_and_failures_keep_their_reason(pipeline) -> None:
    private = asyncio.run(pipeline.media_to_download(Request("http://10.0.0.5/a.png"), None))
    assert private["image"].error.startswith("refused: 10.0.0.5 resolves to a private")
    assert asyncio.run(pipeline.media_to_download(Request("http://127.0.0.1:1/a.png"), None)) is None
    request = Request("http://127.0.0.1:1/a.png")
    with pytest.raises(ImageRefused, match="^IgnoreRequest: Forbidden by robots.txt$"):
        pipeline.media_failed(Failure(IgnoreRequest("Forbidden by robots.txt")), request, None)
    too_big = Failure(OSError("Received 5000 bytes which is larger than download max size (1000)"))
    with pytest.raises(ImageRefused, match=r"^refused: larger than the image size cap \(1000 bytes\)$"):
        pipeline.media_failed(too_big, request, None)


def test_pipeline_gives_each_article_url_its_record_in_page_order(pipeline) -> None:
    urls = ["http://127.0.0.1:1/a.png", "javascript:alert(1)", "http://127.0.0.1:1/b.png"]
    item = {"kind": "article", "parsed": {"image_urls": urls}}
    assert [r.url for r in pipeline.get_media_requests(item, None)] == [urls[0], urls[2]]
    stored = ImageFile(url=urls[0], sha256="0" * 64, path="images/x.png")
    failure = ImageRefused("IgnoreRequest: Forbidden by robots.txt")
    results = [(True, {"image": stored}), (False, Failure(failure))]
    images = pipeline.item_completed(results, item, None)["images"]
    assert [i.url for i in images] == urls
    assert [i.error for i in images] == [
        None,
        "refused: not an http(s) URL (scheme 'javascript')",
        "IgnoreRequest: Forbidden by robots.txt",
    ]
    failure_item = {"kind": "failure"}
    assert pipeline.item_completed([], failure_item, None) == {"kind": "failure"}


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("file:///etc/passwd", False),
        ("ftp://example.org/a.jpg", False),
        ("http://127.0.0.1:8000/a.jpg", False),
        ("http://10.0.0.5/a.jpg", False),
        ("http://169.254.169.254/latest/meta-data", False),
        ("http://[::1]/a.jpg", False),
        ("https://93.184.216.34/a.jpg", True),
    ],
)
def test_image_urls_refused_unless_public_http(url, allowed):
    assert (address_refusal(url, allow_loopback=False, resolve=False) is None) is allowed


def test_loopback_images_allowed_only_when_asked():
    assert address_refusal("http://127.0.0.1:8000/a.jpg", allow_loopback=True) is None
    assert address_refusal("http://10.0.0.5/a.jpg", allow_loopback=True) is not None


def test_image_inspection_accepts_images_and_refuses_bombs_and_non_images():
    buffer = io.BytesIO()
    Image.new("RGB", (150, 90), (200, 10, 10)).save(buffer, format="PNG")
    info = inspect_image(buffer.getvalue())
    assert (info.format, info.extension, info.width, info.height) == ("PNG", "png", 150, 90)
    with pytest.raises(ImageRefused, match="decompression bomb"):
        inspect_image(draw_decompression_bomb())
    with pytest.raises(ImageRefused, match="not an image"):
        inspect_image(b"<html><body>not an image</body></html>")
    with pytest.raises(ImageRefused, match="broken image"):
        inspect_image(buffer.getvalue()[:60])
