"""Detectors by name: the built-ins, third-party entry points (group ``rwpost.detectors``), or
``module:attribute`` for a class not installed as a package.

A third-party package adds a detector with, in its ``pyproject.toml``::

    [project.entry-points."rwpost.detectors"]
    my-agent = "my_package.detector:MyAgent"

The named object is called with the detector's configuration as keyword arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.plugins import Plugins
from rwpost.evaluate.protocol import Detector, task_labels
from rwpost.records import Sample

ENTRY_POINT_GROUP = "rwpost.detectors"

BUILTIN: dict[str, str] = {
    "agentfact": "rwpost.evaluate.detectors.agentfact:AgentFactDetector",
    "majority": "rwpost.evaluate.detectors.baselines:MajorityClass",
    "stratified": "rwpost.evaluate.detectors.baselines:StratifiedRandom",
    "category-prior": "rwpost.evaluate.detectors.baselines:CategoryPrior",
    "embedding": "rwpost.evaluate.detectors.embedding:EmbeddingDetector",
    "local-vlm": "rwpost.evaluate.detectors.local_vlm:LocalVLMDetector",
    "predictions": "rwpost.evaluate.formats.flat:PredictionsFileDetector",
    "vlm": "rwpost.evaluate.detectors.vlm:VLMDetector",
}
"""Built-in detectors, by name, as ``module:attribute`` (imported only when used)."""


PLUGINS = Plugins("detector", ENTRY_POINT_GROUP, BUILTIN)


def available_detectors() -> dict[str, str]:
    """Every detector name that resolves without a ``module:attribute`` spec, with its target."""
    return PLUGINS.available()


def resolve_detector(name: str) -> Callable[..., Detector]:
    """The factory of detector ``name``: built-in, entry point, or ``module:attribute``."""
    return PLUGINS.resolve(name)


def make_detector(name: str, config: dict[str, Any] | None = None) -> Detector:
    """Build detector ``name`` with ``config`` as keyword arguments; check it follows the protocol."""
    factory = resolve_detector(name)
    try:
        detector = factory(**(config or {}))
    except TypeError as exc:
        # option names only: the arguments hold the secrets and the run's block list
        given = ", ".join(sorted(config or {})) or "none"
        raise ConfigError(f"detector {name!r}: bad configuration ({exc}); options given: {given}") from exc
    if not isinstance(detector, Detector):
        raise ConfigError(f"detector {name!r} does not follow the protocol (needs name, config(), predict())")
    return detector


def with_task_labels(name: str, config: dict[str, Any], samples: Sequence[Sample]) -> dict[str, Any]:
    """``config`` plus ``labels``: the task's label space (:func:`task_labels` of the evaluated samples),
    for a detector that takes a ``labels`` argument and was not given one."""
    if "labels" in config:
        return config
    try:
        takes = "labels" in inspect.signature(resolve_detector(name)).parameters
    except (TypeError, ValueError):
        takes = False
    return {**config, "labels": [str(x) for x in task_labels(samples)]} if takes else config
