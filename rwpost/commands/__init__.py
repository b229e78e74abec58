"""CLI subcommand modules; each exposes ``register(app)``."""

from __future__ import annotations

from pathlib import Path


def bundled_sample(path: Path | None) -> Path | None:
    """Typer callback of a path argument: a ``data/sample/...`` path that this folder lacks is read from the
    bundled sample (:func:`rwpost.sample.build.bundled`), so the README's examples work from any folder."""
    if path is None:
        return None
    from rwpost.sample.build import bundled

    return bundled(path)
