"""Readers of other systems' prediction files, as those systems write them (no conversion step).

``flat``: rwpost's own JSONL/CSV (read by ``rwpost.evaluate.formats.flat``); ``agentfact``:
the AgentFact main workflow's output folders; ``agentfact-baselines``: its ``baseline_lvlms/results``
folders (one set per model x setting x k); ``defame``: DEFAME's ``predictions.csv``; ``generic``: any
JSONL/JSON/CSV with ``--id-field``, ``--label-field`` (dotted) and ``--label-map``; ``mmdagent``:
MMFakeBench's output files (MMD-Agent, standard prompt); ``t2agent-port``: the T2Agent port's (Apache-2.0)
``details/<index>_<id>.json`` files.
:func:`detect_format` guesses the format of a file or folder; :func:`read_sets` returns its
:class:`PredictionSet` values.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.formats.agentfact import looks_like_baselines, read_baselines, read_main
from rwpost.evaluate.formats.common import PredictionSet, iter_json_rows, parse_label_map
from rwpost.evaluate.formats.defame import read_defame
from rwpost.evaluate.formats.generic import read_generic
from rwpost.evaluate.formats.mmdagent import FILES as MMDAGENT_FILES
from rwpost.evaluate.formats.mmdagent import is_mmdagent_file, read_mmdagent
from rwpost.evaluate.formats.t2agent_port import detail_folders, read_t2agent_port
from rwpost.io import read_text, sha256_file, sha256_hex

FORMATS = ("flat", "agentfact", "agentfact-baselines", "defame", "generic", "mmdagent", "t2agent-port")

__all__ = [
    "FORMATS",
    "PredictionSet",
    "content_sha256",
    "detect_format",
    "gold_of_predictions",
    "parse_label_map",
    "read_sets",
]


def _first_object(path: Path) -> Any:
    """The first line's object of a JSONL file; None when it does not read (the reader then says why)."""
    for _, value, _problem in iter_json_rows(path):
        return value
    return None


def detect_format(path: str | Path, *, generic: bool = False) -> str:
    """The format of a predictions file or folder (``generic`` when id/label fields are given)."""
    source = Path(path)
    if not source.exists():
        raise ConfigError(f"predictions not found: {source}")
    if generic:
        return "generic"
    if source.is_dir():
        found = {}
        if (source / "predictions.csv").is_file():
            found["defame"] = "predictions.csv"
        agentfact = next(source.rglob("output.jsonl"), None) or next(source.rglob("*failed*.jsonl"), None)
        if agentfact is not None:
            kind = "agentfact-baselines" if looks_like_baselines(source) else "agentfact"
            found[kind] = str(agentfact.relative_to(source))
        mmdagent = next((p for p in source.rglob(MMDAGENT_FILES) if is_mmdagent_file(p)), None)
        if mmdagent is not None:
            found["mmdagent"] = str(mmdagent.relative_to(source))
        port = detail_folders(source)
        if port:
            found["t2agent-port"] = str(port[0].relative_to(source))
        if len(found) > 1:  # reading one would silently ignore the other
            held = ", ".join(f"{kind} ({where})" for kind, where in found.items())
            raise ConfigError(f"{source}: holds predictions of {len(found)} formats: {held}; give --format")
        if not found:
            raise ConfigError(
                f"{source}: no predictions.csv, output.jsonl, {MMDAGENT_FILES} or details/ below; "
                "give a file or --format"
            )
        return next(iter(found))
    if source.suffix.lower() == ".csv":
        header = next(csv.reader(read_text(source).splitlines()[:1]), [])
        return "defame" if {"sample_index", "predicted"} <= set(header) else "flat"
    if source.suffix.lower() == ".json" and is_mmdagent_file(source):
        return "mmdagent"
    first = _first_object(source)
    if isinstance(first, dict) and "final_answer" in first:
        return "agentfact-baselines" if looks_like_baselines(source) else "agentfact"
    return "flat"


def gold_of_predictions(predictions: str | Path, format: str | None = None) -> str | None:
    """The ``--data`` a predictions file or folder carries its own gold for, when no ``--data`` is given:
    a T2-Agent port run (``ground_truth_verdict`` in its detail files) -> ``t2agent-port:RUN``; else None."""
    path = Path(predictions)
    return f"t2agent-port:{path}" if (format or detect_format(path)) == "t2agent-port" else None


def read_sets(
    path: str | Path,
    format: str | None = None,
    *,
    id_field: str | None = None,
    label_field: str | None = None,
    label_map: str | dict[str, str] | None = None,
    id_map: str | Path | None = None,
) -> list[PredictionSet]:
    """Every prediction set of ``path`` in ``format`` (detected when None)."""
    chosen = format or detect_format(path, generic=bool(id_field or label_field or label_map))
    source = Path(path)
    if chosen not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {chosen!r}")
    if chosen == "agentfact":
        sets = read_main(source.parent if source.is_file() else source)
    elif chosen == "agentfact-baselines":
        sets = read_baselines(source.parent.parent if source.is_file() else source)
    elif chosen == "defame":
        sets = [read_defame(source, id_map)]
    elif chosen == "mmdagent":
        sets = read_mmdagent(source, id_map)
    elif chosen == "t2agent-port":
        sets = read_t2agent_port(source)
    elif chosen == "generic":
        sets = [
            read_generic(
                source,
                id_field=id_field or "id",
                label_field=label_field or "label",
                label_map=parse_label_map(label_map),
            )
        ]
    else:
        raise ConfigError(f"{source}: rwpost's flat format is read by PredictionsFileDetector, not read_sets")
    if not sets or all(not s.rows and not s.failures for s in sets):
        files = ", ".join(f for s in sets for f in (s.files or [s.source])) or source
        raise ConfigError(f"{files}: no prediction could be read as {chosen} (bad rows: {_bad(sets)})")
    return sets


def _bad(sets: list[PredictionSet]) -> str:
    rows = [r for s in sets for r in s.bad_rows]
    return f"{len(rows)}, e.g. {rows[0]['reason']}" if rows else "none"


def content_sha256(path: str | Path) -> str:
    """The checksum of a predictions file, or of every file below a folder (paths and contents)."""
    source = Path(path)
    if source.is_file():
        return sha256_file(source)
    files = sorted(p for p in source.rglob("*") if p.is_file())
    return sha256_hex("".join(f"{p.relative_to(source)}\t{sha256_file(p)}\n" for p in files))
