"""The JSON Schemas of every LLM answer, kept as language-neutral files in ``schemas/llm/``."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError

LLM_SCHEMA_DIR = Path(__file__).resolve().parent / "answer_schemas"
"""Where ``<name>.schema.json`` files live (the repository's ``schemas/llm/``)."""


@lru_cache(maxsize=32)
def _load(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def load_llm_schema(name: str, directory: Path | None = None) -> dict[str, Any]:
    """The schema ``schemas/llm/<name>.schema.json`` as a dict (checked to be valid Draft 2020-12)."""
    path = (directory or LLM_SCHEMA_DIR) / f"{name}.schema.json"
    try:
        schema = json.loads(_load(str(path)))
    except FileNotFoundError as exc:
        raise ConfigError(f"LLM output schema not found: {path}") from exc
    import jsonschema  # here, not at import: it is a tenth of a second of every command's start-up

    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def for_response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without the annotation keys (``$schema``, ``$id``) that some servers refuse."""
    return {k: v for k, v in schema.items() if k not in ("$schema", "$id", "title")}


Check = Callable[[Any], bool]
"""Whether a JSON value (as ``json.loads`` gives it) satisfies a schema."""


def _refuse_fetch(uri: str) -> Any:
    raise ValueError(f"not fetched: {uri}")


_NO_FETCH = {"http": _refuse_fetch, "https": _refuse_fetch, "file": _refuse_fetch}


def _compile(schema: dict[str, Any]) -> Check | None:
    """The schema compiled to Python by fastjsonschema, or None where it cannot compile it (jsonschema alone
    checks such a schema)."""
    import fastjsonschema

    try:  # a $ref to a URL is not fetched: the handlers refuse every scheme
        validate = fastjsonschema.compile(schema, handlers=_NO_FETCH)
    except Exception:  # noqa: BLE001 - whatever it cannot compile, jsonschema checks
        return None
    invalid = fastjsonschema.JsonSchemaValueException

    def check(value: Any) -> bool:
        try:
            validate(value)
        except invalid:
            return False
        return True

    return check


_checks: dict[int, tuple[dict[str, Any], Check | None]] = {}


def answer_check(schema: dict[str, Any]) -> Check | None:
    """A fast check of answers against ``schema`` (fastjsonschema's compiled validator), accepting and
    refusing what jsonschema does on the answer schemas (tests/test_llm_answer_check.py), or None for a
    schema it cannot compile. Compiled once per schema object: the extractors load each schema once."""
    found = _checks.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    if len(_checks) >= 256:
        _checks.clear()
    check = _compile(schema)
    _checks[id(schema)] = (schema, check)  # the reference keeps the id from being reused
    return check
