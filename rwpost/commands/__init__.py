"""CLI subcommand modules; each exposes ``register(app)``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


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
