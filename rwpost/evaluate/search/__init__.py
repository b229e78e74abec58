"""Web search as a plug-in for detectors that retrieve (``open-web``): text search and reverse image search.

A backend is found by name among the built-ins, the entry points of group ``rwpost.search``, or as
``module:attribute``; it is called with its options as keyword arguments. A third-party package adds one
with, in its ``pyproject.toml``::

    [project.entry-points."rwpost.search"]
    my-search = "my_package.search:MySearch"

Two kinds of backend:

- :class:`TextSearch`: ``await search(query, limit=, before=)`` returns
  :class:`~rwpost.evaluate.leakage.SearchResult` items (URL, title, snippet, date when the engine gives one);
- :class:`ReverseImageSearch`: ``await similar(image_bytes, limit=)`` returns :class:`ImageMatch` items
  (the page holding a matching image, its title and the image's own URL).

Built-ins: ``serper`` (Google results through serper.dev, key ``SERPER_API_KEY``), ``google-vision``
(Google Cloud Vision web detection, key ``GOOGLE_VISION_API_KEY``), ``wikipedia`` (the MediaWiki API's
lead paragraphs, no key), and ``loopback`` / ``loopback-image`` / ``loopback-wikipedia``, the same wire
formats against a local scripted server (:mod:`rwpost.testing.search`), for tests.
Keys are read from the environment by the backend itself, held privately and never logged or recorded.
Results are not leakage-safe: the detector passes every one through the run's
:class:`~rwpost.evaluate.leakage.LeakageGuard` (``RunContext.guard``) before any agent sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol, runtime_checkable

from rwpost.errors import ConfigError
from rwpost.evaluate.leakage import SearchResult
from rwpost.evaluate.plugins import Plugins

ENTRY_POINT_GROUP = "rwpost.search"

BUILTIN: dict[str, str] = {
    "serper": "rwpost.evaluate.search.serper:SerperSearch",
    "google-vision": "rwpost.evaluate.search.vision:VisionWebDetection",
    "loopback": "rwpost.evaluate.search.serper:LoopbackSearch",
    "loopback-image": "rwpost.evaluate.search.vision:LoopbackImageSearch",
    "wikipedia": "rwpost.evaluate.search.wikipedia:WikipediaSearch",
    "loopback-wikipedia": "rwpost.evaluate.search.wikipedia:LoopbackWikipedia",
}
"""The backends shipped with rwpost (also declared as entry points in ``pyproject.toml``)."""


@dataclass(frozen=True)
class ImageMatch:
    """A web page holding an image like the query image (reverse image search)."""

    page_url: str
    page_title: str = ""
    image_url: str | None = None
    match: str = "similar"
    """``full`` (the same image), ``partial`` (a crop or edit) or ``similar`` (visually alike)."""


@runtime_checkable
class TextSearch(Protocol):
    """A web text search engine."""

    name: str

    async def search(self, query: str, *, limit: int = 10, before: date | None = None) -> list[SearchResult]:
        """Results of ``query``; ``before`` asks the engine for pages up to that day where it can."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ReverseImageSearch(Protocol):
    """A reverse image search engine."""

    name: str

    async def similar(self, image: bytes, *, limit: int = 10) -> list[ImageMatch]:
        """Pages holding an image like ``image``."""
        ...

    async def aclose(self) -> None: ...


PLUGINS = Plugins("search backend", ENTRY_POINT_GROUP, BUILTIN)


def available_backends() -> dict[str, str]:
    """Every backend name that resolves without a ``module:attribute`` spec, with its target."""
    return PLUGINS.available()


def make_backend(name: str, options: dict[str, Any] | None = None) -> Any:
    """The search backend ``name`` (built-in, entry point or ``module:attribute``) built with ``options``."""
    factory = PLUGINS.resolve(name)
    try:
        return factory(**(options or {}))
    except TypeError as exc:
        given = ", ".join(sorted(options or {})) or "none"  # names only: options may hold a key
        raise ConfigError(f"search backend {name!r}: bad options ({exc}); options given: {given}") from exc


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "ImageMatch",
    "ReverseImageSearch",
    "SearchResult",
    "TextSearch",
    "available_backends",
    "make_backend",
]
