"""Every secret the process knows, and the one function that takes them out of text: :func:`redact`.

The secrets are:

- the value of every environment variable named like a credential (:data:`SECRET_NAME`: ``*_KEY``,
  ``*_TOKEN``, ``*_PASSWORD``, ``*_SECRET``...; so ``OPENAI_API_KEY``, ``SERPER_API_KEY``,
  ``LABEL_STUDIO_API_KEY``, ``LABEL_STUDIO_USER_TOKEN``, ``LABEL_STUDIO_PASSWORD``, ``HF_TOKEN``);
- the credentials inside any URL-valued variable (``OPENAI_BASE_URL=http://user:pw@host/v1?api-key=k``):
  its userinfo and the values of credential-named query parameters;
- what the program hands to :func:`register` or :func:`register_config` (a ``--set api_key=...``, a URL
  given as an option, the key an LLM client was built with).

rwpost applies :func:`redact` where text leaves the process: every text writer of :mod:`rwpost.io`
(JSON, JSONL, appended lines) and the command line's stdout and stderr (:func:`redacting_streams`, which
the console, ``print`` and logging to the terminal all write through). A redacted value reads ``***``.
Plain values shorter than :data:`MIN_SECRET_CHARS` are placeholders (``no-key``, ``EMPTY``, ``test``),
not replaced: replacing such a word everywhere would damage text. URL credentials are replaced with their
context (``user:pw@``, ``api-key=k``), which is specific at any length.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

MASK = "***"
"""What a secret reads as once redacted."""

MIN_SECRET_CHARS = 8
"""Shorter plain values are placeholders, not secrets (URL credentials are redacted at any length)."""

SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|PASSWORD|PASSWD|PASS|SECRET|CREDENTIALS?)$", re.IGNORECASE
)
"""Names of environment variables, options and JSON keys whose value is a credential."""

SECRET_PARAM = re.compile(r"key|token|secret|passw|sig|auth|credential", re.IGNORECASE)
"""Names of URL query parameters whose value is a credential (``api-key``, ``sig``, ``access_token``)."""

_registered: dict[str, str] = {}
_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    """Whether a variable, option or key named ``name`` holds a credential (``api_key``, ``X_TOKEN``)."""
    return bool(SECRET_NAME.search(name.replace("-", "_")))


def _url_secrets(url: str) -> dict[str, str]:
    """Literal -> replacement for the credentials written inside ``url`` (userinfo, secret query values)."""
    found: dict[str, str] = {}
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return found
    netloc = parts.netloc
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        if userinfo:
            found[f"{userinfo}@"] = f"{MASK}@"
            # what an HTTP client sends for it (``Authorization: Basic ...``), which a server may echo
            found[base64.b64encode(unquote(userinfo).encode()).decode()] = MASK
            password = userinfo.partition(":")[2]
            if len(password) >= MIN_SECRET_CHARS:
                found[password] = MASK
    for pair in parts.query.split("&"):
        name, sep, value = pair.partition("=")
        if sep and value and SECRET_PARAM.search(name):
            found[f"{name}={value}"] = f"{name}={MASK}"
            if len(value) >= MIN_SECRET_CHARS:
                found[value] = MASK
    return found


def _value_secrets(value: str) -> dict[str, str]:
    """Literal -> replacement for one secret value (a URL: only the credentials inside it)."""
    if "://" in value:
        return _url_secrets(value)
    return {value: MASK} if len(value) >= MIN_SECRET_CHARS else {}


def register(value: object) -> None:
    """Treat ``value`` (a string; a URL: the credentials in it) as a secret from now on."""
    if isinstance(value, str) and value:
        with _lock:
            _registered.update(_value_secrets(value))


def register_config(config: Any) -> None:
    """Register the secrets inside options (nested mappings and lists): the value of every key named like
    a credential (``api_key``, ``token``) and the credentials of every URL."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            if isinstance(key, str) and is_secret_name(key) and isinstance(value, str | int):
                register(str(value))
            else:
                register_config(value)
    elif isinstance(config, list | tuple):
        for value in config:
            register_config(value)
    elif isinstance(config, str) and "://" in config:
        register(config)


def _environment() -> tuple[tuple[str, str], ...]:
    """The environment variables that may hold a secret: credential names and URL values."""
    return tuple(
        (name, value)
        for name, value in os.environ.items()
        if value and (is_secret_name(name) or "://" in value)
    )


@lru_cache(maxsize=32)
def _compiled(pairs: frozenset[tuple[str, str]]) -> Callable[[str], str]:
    """A function replacing each literal of ``pairs`` (and its JSON-escaped spelling) by its replacement."""
    table: dict[str, str] = {}
    for literal, replacement in pairs:
        table[literal] = replacement
        escaped = json.dumps(literal, ensure_ascii=False)[1:-1]
        if escaped != literal:  # the same secret inside a JSON string
            table[escaped] = json.dumps(replacement, ensure_ascii=False)[1:-1]
    if not table:
        return _unchanged
    pattern = re.compile("|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)))
    return lambda text: pattern.sub(lambda m: table[m.group(0)], text) if text else text


def _unchanged(text: str) -> str:
    return text


def redactor() -> Callable[[str], str]:
    """:func:`redact` for the secrets known now, to apply to many strings (the lines of one file)."""
    pairs: dict[str, str] = {}
    for _name, value in _environment():
        pairs.update(_value_secrets(value))
    with _lock:
        pairs.update(_registered)
    return _compiled(frozenset(pairs.items()))


def redact(text: str) -> str:
    """``text`` with every secret the process knows replaced by ``***``."""
    return redactor()(text)


class _RedactingStream:
    """A text stream that redacts what is written to it, otherwise the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes written past the text layer would not be redacted
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextmanager
def redacting_streams() -> Iterator[None]:
    """While the block runs, everything written to ``sys.stdout`` and ``sys.stderr`` is redacted."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _RedactingStream(saved[0]), _RedactingStream(saved[1])  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


__all__ = [
    "MASK",
    "is_secret_name",
    "redact",
    "redacting_streams",
    "redactor",
    "register",
    "register_config",
]
