"""The JSON Schemas of every LLM answer, kept as language-neutral files in ``schemas/llm/``."""

from __future__ import annotations

import json
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
