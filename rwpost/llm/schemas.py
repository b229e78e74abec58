"""The JSON Schemas of every LLM answer, kept as language-neutral files in ``schemas/llm/``."""

from __future__ import annotations

import json
import re
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

_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment", "examples", "default"})
_TYPES: dict[str, Callable[[Any], bool]] = {  # Draft 2020-12, as jsonschema checks them
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
}


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _compile(schema: Any) -> Check | None:  # noqa: C901 - one branch per keyword
    """The schema as nested closures, or None where it uses a keyword (or form) not compiled here."""
    if isinstance(schema, bool):
        return lambda v: schema
    if not isinstance(schema, dict) or not set(schema) <= _ANNOTATIONS | {
        "type", "properties", "required", "additionalProperties", "items", "enum", "anyOf",
        "minimum", "maximum", "pattern", "minItems", "maxItems",
    }:  # fmt: skip
        return None
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not all(isinstance(name, str) and name in _TYPES for name in names):
            return None
        of_type = [_TYPES[name] for name in names]
        checks.append(lambda v: any(t(v) for t in of_type))
    if "enum" in schema:
        allowed = schema["enum"]
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            return None
        values = frozenset(allowed)
        checks.append(lambda v: isinstance(v, str) and v in values)
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        properties = {name: _compile(sub) for name, sub in schema.get("properties", {}).items()}
        extra = _compile(schema.get("additionalProperties", True))
        required = schema.get("required", [])
        if None in properties.values() or extra is None or not all(isinstance(r, str) for r in required):
            return None
        no_extra = schema.get("additionalProperties", True) is True

        def object_check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for name, value in v.items():
                check = properties.get(name)
                if check is not None:
                    if not check(value):
                        return False
                elif not no_extra and not extra(value):  # type: ignore[misc]
                    return False
            return all(name in v for name in required)

        checks.append(object_check)
    if "items" in schema:
        item = _compile(schema["items"]) if not isinstance(schema["items"], list) else None
        if item is None:
            return None
        checks.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))  # type: ignore[misc]
    if "minItems" in schema or "maxItems" in schema:
        fewest, most = schema.get("minItems", 0), schema.get("maxItems")
        if not isinstance(fewest, int) or not (most is None or isinstance(most, int)):
            return None
        checks.append(
            lambda v: not isinstance(v, list) or (len(v) >= fewest and (most is None or len(v) <= most))
        )
    if "minimum" in schema or "maximum" in schema:
        low, high = schema.get("minimum"), schema.get("maximum")
        if not all(bound is None or _number(bound) for bound in (low, high)):
            return None
        checks.append(  # as jsonschema compares (a NaN passes both bounds)
            lambda v: not _number(v) or not ((low is not None and v < low) or (high is not None and v > high))
        )
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
    if "anyOf" in schema:
        options = [_compile(sub) for sub in schema["anyOf"]]
        if not options or None in options:
            return None
        checks.append(lambda v: any(option(v) for option in options))  # type: ignore[misc]
    return lambda v: all(check(v) for check in checks)


_checks: dict[int, tuple[dict[str, Any], Check | None]] = {}


def answer_check(schema: dict[str, Any]) -> Check | None:
    """A fast check of answers against ``schema`` with jsonschema's accept/reject (Draft 2020-12) for the
    keywords the answer schemas use, or None for a schema with others (jsonschema alone checks those).
    Compiled once per schema object: the extractors load each schema once and pass the same dict."""
    found = _checks.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    if len(_checks) >= 256:
        _checks.clear()
    check = _compile(schema)
    _checks[id(schema)] = (schema, check)  # the reference keeps the id from being reused
    return check
