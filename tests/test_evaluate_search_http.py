"""The shared HTTP helpers: the search backends' retries and the reverse image search's image downloads,
against real loopback servers."""

from __future__ import annotations

import asyncio
import time

import pytest

from rwpost.evaluate.search.http import SearchError
from rwpost.evaluate.search.serper import LoopbackSearch
from rwpost.evaluate.search.vision import LoopbackImageSearch, VisionWebDetection
from rwpost.testing.search import SearchServer, result
from tests.evaluate_helpers import image_bytes


def search_once(search: LoopbackSearch, query: str):
    async def main():
        try:
            return await search.search(query)
        finally:
            await search.aclose()

    return asyncio.run(main())


def test_search_retries_wait_the_servers_retry_after_not_the_backoff():
    with SearchServer({"q": [result("https://example.org/a", "A")]}) as server:
        server.failures, server.retry_after = 2, "0"
        started = time.monotonic()
        found = search_once(LoopbackSearch(server.base_url, max_retries=2, backoff_s=30.0), "q")
        assert time.monotonic() - started < 10  # a 30 s backoff was never waited
    assert [r.url for r in found] == ["https://example.org/a"]
    assert len(server.requests) == 3


def test_search_gives_up_after_its_retries_naming_the_last_problem():
    with SearchServer({}) as server:
        server.failures = 10
        with pytest.raises(SearchError, match=r"HTTP 503 after 2 attempt\(s\)"):
            search_once(LoopbackSearch(server.base_url, max_retries=1), "q")
        assert len(server.requests) == 2


def test_matched_images_are_fetched_with_the_address_refusal_and_the_size_cap():
    png = image_bytes()
    with SearchServer(images={"a": png}) as server:
        url = server.image_url("a")

        async def fetch(backend: VisionWebDetection) -> bytes | None:
            try:
                return await backend.fetch_image(url)
            finally:
                await backend.aclose()

        assert asyncio.run(fetch(LoopbackImageSearch(server.base_url))) == png
        # the real backend refuses loopback and private addresses, and images over its cap
        real = VisionWebDetection(server.base_url, environ={"GOOGLE_VISION_API_KEY": "k"})
        assert asyncio.run(fetch(real)) is None
        small = VisionWebDetection(
            server.base_url, environ={"GOOGLE_VISION_API_KEY": "k"}, allow_loopback=True, image_delay_s=0,
            image_max_bytes=len(png) - 1,
        )  # fmt: skip
        assert asyncio.run(fetch(small)) is None


def test_the_readme_says_which_service_each_open_web_detector_calls_and_how_to_mirror_it():
    """Issue 39 (new-user D10): the README listed only the OpenAI and Serper keys, so it was not obvious
    that T+I+W reaches en.wikipedia.org by default or that ``wikipedia_options`` points it at a mirror.
    Each row of its table is read back against the code: the detectors that have the option, its default
    backend, the backend's default host and that ``base_url`` is what moves it."""
    import inspect
    import re
    from pathlib import Path

    from rwpost.evaluate.registry import resolve_detector
    from rwpost.evaluate.search import BUILTIN
    from rwpost.evaluate.search.serper import SERPER_URL
    from rwpost.evaluate.search.vision import VISION_URL
    from rwpost.evaluate.search.wikipedia import WIKIPEDIA_URL

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = {
        "search": ("serper", SERPER_URL, ["agentfact", "t2agent", "factguard"]),
        "image_search": ("google-vision", VISION_URL, ["agentfact", "t2agent"]),
        "wikipedia": ("wikipedia", WIKIPEDIA_URL, ["t2agent", "agentm3d"]),
    }
    for option, (backend, url, detectors) in rows.items():
        host = url.removeprefix("https://")
        [row] = [line for line in readme.splitlines() if line.startswith("| ") and f"({host})" in line]
        assert f'`{option}_options={{"base_url": URL}}`' in row and f"`{option}=loopback" in row, row
        assert f"`{option}={backend}" in row, row
        for name in detectors:
            fields = resolve_detector(name).Config.model_fields
            assert option in fields and f"{option}_options" in fields, (name, option)
            default = fields[option].default
            assert default in (backend, None), (name, option, default)  # image search: off unless set
        backend_class = BUILTIN[backend].split(":")
        module = __import__(backend_class[0], fromlist=[backend_class[1]])
        init = inspect.signature(getattr(module, backend_class[1]).__init__).parameters
        assert init["base_url"].default == url
    assert re.search(r"`wikipedia=wikipedia` \(the default\)", readme)
    for name in ("agentm3d", "t2agent"):
        assert resolve_detector(name).Config.model_fields["wikipedia"].default == "wikipedia"
