"""The loopback services a user needs to try the papers' detectors offline (``rwpost testing serve``).

:class:`OfflineServices` starts, on 127.0.0.1 only:

- an OpenAI-compatible model server (:class:`~rwpost.testing.llm.FakeLLMServer`) answering every request
  with a valid instance of the JSON schema it sends (:class:`~rwpost.testing.schema.SchemaResponder`);
- one search twin (:class:`~rwpost.testing.search.SearchServer`) speaking Serper's web search, Cloud
  Vision's web detection and the MediaWiki API: three dated news results per query on example.org, one
  page holding a matching image, one Wikipedia lead per query.

:meth:`OfflineServices.environment` is what to export (``OPENAI_BASE_URL`` and placeholder keys) and
:meth:`OfflineServices.options` the ``--set`` options that point each detector's search plug-ins at the
twin. Answers and results are valid, not informed: the scores of such a run are a smoke test.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Self

from rwpost.testing.llm import FakeLLMServer
from rwpost.testing.schema import SchemaResponder
from rwpost.testing.search import SearchServer, page, result, wiki_page

MODEL = "test-model"
"""The model name to give (``--model``): the server answers any name, and lists this one."""

RESULT_DATE = "Jan 1, 2010"
"""The date of every search result: before every RW-Post claim, so the leakage guard's date cut keeps it."""


def _slug(text: str) -> str:
    return re.sub(r"\W+", "-", text.lower()).strip("-")[:60] or "query"


def news_results(query: str) -> list[dict[str, Any]]:
    """Three Serper results for ``query`` on example.org, dated :data:`RESULT_DATE`."""
    slug = _slug(query)
    return [
        result(
            f"https://example.org/news/{slug}/{i}", f"{query} ({i})", f"A report about {query}.", RESULT_DATE
        )
        for i in range(1, 4)
    ]


def matching_pages(_image: bytes) -> list[dict[str, Any]]:
    """One Cloud Vision page holding a matching image, whatever the image."""
    return [
        page("https://example.org/photos/1", "A page with this photo", "https://example.org/photos/1.jpg")
    ]


def wiki_leads(query: str) -> list[dict[str, Any]]:
    """One MediaWiki lead for ``query``."""
    return [wiki_page(query.title()[:80] or "Query", f"An encyclopedia lead about {query}.")]


PLUGINS: dict[str, tuple[str, ...]] = {
    "vlm": (),
    "agentfact": ("search", "image_search"),
    "t2agent": ("search", "image_search", "wikipedia"),
    "agentm3d": ("wikipedia",),
    "factguard": ("search",),
}
"""The search plug-ins each API detector takes, each an option ``NAME`` (the backend) and ``NAME_options``
(its keyword arguments, e.g. ``{"base_url": ...}``)."""


class OfflineServices:
    """The model server and the search twin, on loopback ports (0: free ones); a context manager."""

    def __init__(self, *, llm_port: int = 0, search_port: int = 0) -> None:
        self.llm = FakeLLMServer(SchemaResponder(), models=(MODEL,), port=llm_port)
        try:
            self.search = SearchServer(news_results, matching_pages, wiki=wiki_leads, port=search_port)
        except BaseException:
            self.llm.stop()
            raise

    def environment(self) -> dict[str, str]:
        """The environment of a run against these servers (the keys are placeholders, never sent on)."""
        return {
            "OPENAI_BASE_URL": self.llm.base_url,
            "OPENAI_API_KEY": "offline",
            "SERPER_API_KEY": "offline",
            "GOOGLE_VISION_API_KEY": "offline",
        }

    def options(self, detector: str) -> list[str]:
        """The ``rwpost evaluate`` options of ``detector`` pointing each of its search plug-ins at the twin
        (:data:`PLUGINS`), after ``--model``."""
        where = '{"base_url": "%s"}' % self.search.base_url  # noqa: UP031 (JSON braces)
        names = {"search": "loopback", "image_search": "loopback-image", "wikipedia": "loopback-wikipedia"}
        sets = []
        for plugin in PLUGINS.get(detector, ()):
            sets += [f"{plugin}={names[plugin]}", f"{plugin}_options={where}"]
        return ["--model", MODEL, *(f"--set {shlex.quote(value)}" for value in sets)]

    def start(self) -> Self:
        self.llm.start()
        self.search.start()
        return self

    def stop(self) -> None:
        self.search.stop()
        self.llm.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
