"""JSON Schemas of the records, generated from the pydantic models so the two never drift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rwpost.io import write_text
from rwpost.records import ALL_MODELS, SCHEMA_VERSION


def record_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every record type, keyed by file stem."""
    out = {}
    for name, model in ALL_MODELS.items():
        schema = model.model_json_schema()
        schema["$id"] = f"https://rwpost.dev/schemas/{SCHEMA_VERSION}/{name}.schema.json"
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    """Stable text of a schema file."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def stale_schema_files(directory: Path) -> list[str]:
    """Names of schema files in ``directory`` that differ from (or are missing for) the models."""
    stale = []
    for name, schema in record_schemas().items():
        path = directory / f"{name}.schema.json"
        if not path.exists() or path.read_text(encoding="utf-8") != render(schema):
            stale.append(path.name)
    return stale


def write_schema_files(directory: Path) -> list[Path]:
    """Write every record schema into ``directory``; returns the paths written."""
    paths = []
    for name, schema in record_schemas().items():
        path = directory / f"{name}.schema.json"
        write_text(path, render(schema))
        paths.append(path)
    return paths
