"""Named plug-ins: the built-ins, third-party entry points, or ``module:attribute``.

Detectors (group ``rwpost.detectors``) and search backends (group ``rwpost.search``) are both found this
way. A third-party package adds one with, in its ``pyproject.toml``::

    [project.entry-points."rwpost.detectors"]
    my-agent = "my_package.detector:MyAgent"
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from rwpost.errors import ConfigError


@dataclass(frozen=True)
class Plugins:
    """One kind of plug-in: ``kind`` names it in errors, ``group`` is its entry-point group and
    ``builtin`` maps the names shipped with rwpost to ``module:attribute`` (imported only when used)."""

    kind: str
    group: str
    builtin: Mapping[str, str]

    def available(self) -> dict[str, str]:
        """Every name that resolves without a ``module:attribute`` spec, with its target."""
        found = dict(self.builtin)
        for point in entry_points(group=self.group):
            found.setdefault(point.name, point.value)
        return found

    def resolve(self, name: str) -> Callable[..., Any]:
        """The factory of ``name``: built-in, entry point, or ``module:attribute``."""
        if name in self.builtin:
            return self._import(self.builtin[name], name)
        for point in entry_points(group=self.group):
            if point.name == name:
                try:
                    return point.load()
                except Exception as exc:  # a broken third-party package: say which one
                    why = f"entry point {point.value!r} failed: {exc}"
                    raise ConfigError(f"{self.kind} {name!r}: {why}") from exc
        if ":" in name:
            return self._import(name, name)
        known = ", ".join(sorted(self.available()))
        raise ConfigError(f"unknown {self.kind} {name!r}; known: {known} (or give module:Class)")

    def _import(self, target: str, name: str) -> Callable[..., Any]:
        module_name, _, attribute = target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{self.kind} {name!r}: cannot import {target!r} ({exc})") from exc


__all__ = ["Plugins"]
