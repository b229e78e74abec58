"""JSON Schemas of the records and of the evaluation run log's files, generated from the pydantic models
so the two never drift (``schemas/<name>.schema.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rwpost.errors import ConfigError
from rwpost.io import write_text
from rwpost.records import ALL_MODELS, SCHEMA_VERSION


def _schemas(models: dict[str, type[BaseModel]], base: str) -> dict[str, dict[str, Any]]:
    out = {}
    for name, model in models.items():
        schema = model.model_json_schema()
        schema["$id"] = f"{base}/{name}.schema.json"
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = schema
    return out


def record_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every record type, keyed by file stem."""
    return _schemas(ALL_MODELS, f"https://rwpost.dev/schemas/{SCHEMA_VERSION}")


def log_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every file of an evaluation run log (``rwpost.evaluate.log``), by file stem."""
    from rwpost.evaluate.log import LOG_MODELS, LOG_VERSION

    return _schemas(LOG_MODELS, f"https://rwpost.dev/schemas/run/{LOG_VERSION}")


def render(schema: dict[str, Any]) -> str:
    """Stable text of a schema file."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _schema_files(directory: Path) -> dict[Path, str]:
    """Each schema's file in ``directory`` and the text it should hold."""
    schemas = record_schemas() | log_schemas()
    return {directory / f"{name}.schema.json": render(schema) for name, schema in schemas.items()}


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == text.encode("utf-8")
    except FileNotFoundError:
        return False
    except OSError as exc:  # a folder under the name, unreadable
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def stale_schema_files(directory: Path) -> list[str]:
    """Names of schema files in ``directory`` that differ from (or are missing for) the models."""
    return [path.name for path, text in _schema_files(directory).items() if not _holds(path, text)]


def write_schema_files(directory: Path, *, overwrite: bool = False) -> list[Path]:
    """Write every record and run-log schema into ``directory``; returns the paths written.

    A file that already holds its schema is left as it is; a file that holds anything else is replaced
    only with ``overwrite`` (no command overwrites an existing output unasked), and then nothing is written.
    """
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory}: is a file, expected a folder for the schema files")
    files = {path: text for path, text in _schema_files(directory).items() if not _holds(path, text)}
    differing = [path.name for path in files if path.exists() or path.is_symlink()]
    if differing and not overwrite:
        raise ConfigError(
            f"{directory}: {len(differing)} existing schema file(s) differ from the models "
            f"({', '.join(differing)}); pass --overwrite to replace them"
        )
    for path, text in files.items():
        write_text(path, text)
    return list(files)
