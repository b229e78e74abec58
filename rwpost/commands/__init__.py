"""CLI subcommand modules; each exposes ``register(app)``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


STAGE_DEFAULTS: dict[str, dict[str, str]] = {
    "crawl": {
        "out": "data/work/crawl",
        "sample_site": "data/sample/site",
        "max_articles": "0",
        "throttle": "True",
        "delay": "1.0",
        "resume": "True",
        "download_images": "True",
        "max_image_bytes": "10485760",
    },
    "reformat": {"crawl": "data/work/crawl", "out": "data/work/tagged", "min_words": "50"},
    "extract": {
        "input": "data/work/tagged/articles.jsonl",
        "out": "data/work/extract",
        "backend": "auto",
        "cache": "data/cache/llm.sqlite",
    },
    "filter": {
        "tagged": "data/work/tagged/articles.jsonl",
        "extractions": "data/work/extract/extractions.jsonl",
        "crawl": "data/work/crawl",
        "out": "data/work/filter",
    },
}
"""The defaults a stage command's ``--help`` shows, as plain text: stage -> field of its ``Params`` -> the
field's :meth:`~rwpost.stages.base.StageParams.default_text`. Text, so that ``rwpost CMD --help`` imports
neither the stage nor pydantic; the ``Params`` models stay the defaults' home, and a test holds this table
equal to them (``tests/test_cli_start.py``)."""


def stage_default(stage: str, name: str) -> str:
    """``rwpost.stages.<stage>.Params.<name>``'s default as ``--help`` shows it (:data:`STAGE_DEFAULTS`)."""
    return STAGE_DEFAULTS[stage][name]


def bundled_sample(path: Path | None) -> Path | None:
    """Typer callback of a path argument: a ``data/sample/...`` path that this folder lacks is read from the
    bundled sample (:func:`rwpost.sample.build.bundled`), so the README's examples work from any folder."""
    if path is None:
        return None
    from rwpost.sample.build import bundled

    return bundled(path)


class LazyConsole:
    """A Rich console made on first use: importing Rich is most of a command module's import, and
    ``rwpost CMD --help`` prints nothing through it. Attributes are the console's; :meth:`get` is the
    console itself (for Rich objects that take one)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def get(self) -> Console:
        """The console (made now if it is not yet)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)
