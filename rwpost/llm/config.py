"""LLM connection settings, read from the environment at the edges only (CLI and pipeline stages).

Library code receives an :class:`LLMSettings` (or plain arguments); it never reads the environment
itself. The API key is never printed: it is excluded from ``repr`` and from :meth:`LLMSettings.public`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from rwpost.errors import ConfigError


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call an OpenAI-compatible server."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 6

    @property
    def has_key(self) -> bool:
        return bool(self.api_key)

    def public(self) -> dict[str, object]:
        """The settings safe to write into reports (no key)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
        }


def settings_from_env(
    environ: Mapping[str, str] | None = None,
    *,
    model: str | None = None,
    concurrency: int | None = None,
    default_model: str = "gpt-4o-mini",
) -> LLMSettings:
    """Settings from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and ``RWPOST_LLM_MODEL`` /
    ``RWPOST_LLM_CONCURRENCY`` / ``RWPOST_LLM_TIMEOUT`` / ``RWPOST_LLM_MAX_RETRIES``; explicit
    arguments win over the environment. Call this at an edge (CLI, ``pipelines/``), nowhere else."""
    env = os.environ if environ is None else environ
    try:
        return LLMSettings(
            model=model or env.get("RWPOST_LLM_MODEL") or default_model,
            base_url=env.get("OPENAI_BASE_URL") or None,
            api_key=env.get("OPENAI_API_KEY") or None,
            concurrency=concurrency or int(env.get("RWPOST_LLM_CONCURRENCY", "8")),
            timeout_s=float(env.get("RWPOST_LLM_TIMEOUT", "60")),
            max_retries=int(env.get("RWPOST_LLM_MAX_RETRIES", "6")),
        )
    except ValueError as exc:
        raise ConfigError(f"bad RWPOST_LLM_* setting in the environment: {exc}") from exc


DEFAULT_ANSWER_CACHE = "data/cache/llm.sqlite"
"""The project's one LLM answer cache (params.yaml's ``extract.cache`` and ``filter.cache``)."""

ANSWER_CACHE_OFF = ("", "none")
"""Values of ``RWPOST_LLM_CACHE`` that turn the default answer cache off."""


def answer_cache_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The default answer cache of an API detector's run, as an absolute path: ``RWPOST_LLM_CACHE``, else
    :data:`DEFAULT_ANSWER_CACHE` under the working directory; None when ``RWPOST_LLM_CACHE`` is empty or
    ``none``. Call this at an edge only."""
    env = os.environ if environ is None else environ
    path = env.get("RWPOST_LLM_CACHE", DEFAULT_ANSWER_CACHE)
    if path.strip().lower() in ANSWER_CACHE_OFF:
        return None
    return os.path.abspath(os.path.expanduser(path))


def connection_from_env(config: dict, environ: Mapping[str, str] | None = None) -> dict:
    """The connection of a detector whose options are typed model settings, from the environment.

    Fills ``model`` and ``base_url`` into ``config`` where it leaves them unset and returns the run's
    secrets to pass separately, so they never enter a run's recorded configuration: the API key, and
    the default answer cache (``answer_cache``, :func:`answer_cache_from_env`) that
    :meth:`rwpost.evaluate.contract.RunContext.model` gives an API model whose settings name no
    ``cache_path``, so a rerun after a kill pays for no answer twice (as extraction's cache). Which
    detectors get one is decided by the type of their options (:func:`rwpost.evaluate.plan.wants_connection`),
    never by their name: a plug-in gets its connection as a built-in does.
    """
    settings = settings_from_env(environ, model=config.get("model"))
    config.setdefault("model", settings.model)
    if settings.base_url:
        config.setdefault("base_url", settings.base_url)
    secrets: dict[str, str] = {"api_key": settings.api_key} if settings.api_key else {}
    cache = answer_cache_from_env(environ)
    return secrets | ({"answer_cache": cache} if cache else {})
