"""What every stage shares: reading params.yaml, and one-line errors instead of tracebacks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from rwpost.errors import ConfigError, RwpostError


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    """The whole params.yaml as a dict."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: params file not found") from exc


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """One section of params.yaml; a missing section is a configuration error."""
    if name not in params or not isinstance(params[name], dict):
        raise ConfigError(f"params.yaml has no '{name}:' section")
    return params[name]


def stage_main(run: Callable[[dict[str, Any]], None], description: str) -> None:
    """Parse ``--params``, run the stage, and turn rwpost errors into one line and exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    args = parser.parse_args()
    try:
        run(load_params(args.params))
    except RwpostError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
