"""Detectors by name: the built-ins, third-party entry points (group ``rwpost.detectors``), or
``module:attribute`` for a class not installed as a package.

A third-party package adds a detector with, in its ``pyproject.toml``::

    [project.entry-points."rwpost.detectors"]
    my-agent = "my_package.detector:MyAgent"

The named object is a :class:`~rwpost.evaluate.contract.Detector` subclass; its ``Config`` validates the
options the run gives it.
"""

from __future__ import annotations

from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Detector, options_text
from rwpost.evaluate.plugins import Plugins

ENTRY_POINT_GROUP = "rwpost.detectors"

BUILTIN: dict[str, str] = {
    "agentfact": "rwpost.evaluate.detectors.agentfact:AgentFactDetector",
    "agentm3d": "rwpost.evaluate.detectors.agentm3d:AgentM3DDetector",
    "majority": "rwpost.evaluate.detectors.baselines:MajorityClass",
    "stratified": "rwpost.evaluate.detectors.baselines:StratifiedRandom",
    "category-prior": "rwpost.evaluate.detectors.baselines:CategoryPrior",
    "embedding": "rwpost.evaluate.detectors.embedding:EmbeddingDetector",
    "factguard": "rwpost.evaluate.detectors.factguard:FactGuardDetector",
    "local-vlm": "rwpost.evaluate.detectors.vlm:LocalVLMDetector",
    "predictions": "rwpost.evaluate.formats.flat:PredictionsFileDetector",
    "vlm": "rwpost.evaluate.detectors.vlm:VLMDetector",
    "t2agent": "rwpost.evaluate.detectors.t2agent:T2AgentDetector",
}
"""Built-in detectors, by name, as ``module:attribute`` (imported only when used)."""


PLUGINS = Plugins("detector", ENTRY_POINT_GROUP, BUILTIN)


def available_detectors() -> dict[str, str]:
    """Every detector name that resolves without a ``module:attribute`` spec, with its target."""
    return PLUGINS.available()


def resolve_detector(name: str) -> type[Detector]:
    """The class of detector ``name`` (built-in, entry point, or ``module:attribute``)."""
    found = PLUGINS.resolve(name)
    if not (isinstance(found, type) and issubclass(found, Detector)):
        raise ConfigError(
            f"detector {name!r} does not follow the protocol: "
            "it must subclass rwpost.evaluate.contract.Detector"
        )
    return found


def make_detector(name: str, options: dict[str, Any] | None = None) -> Detector:
    """Detector ``name`` built with ``options``, validated by its ``Config``."""
    return resolve_detector(name).build(options)


def detector_help(name: str) -> str:
    """``rwpost evaluate --detector NAME --help-options``: every option of ``name``'s ``Config`` (name,
    type, default, description), as ``--set NAME=VALUE`` takes it."""
    return options_text(name, resolve_detector(name).Config)
