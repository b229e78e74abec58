"""Every benchmark adapter documents the record fields it reads (issue 39 §3, new-user D12): its module
docstring says them, and the README's adapter table has its row, each field named there being one its
module's code reads (a field the code does not name as a string is not documented as read)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rwpost.evaluate.datasets import ADAPTERS

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"fakett": "fakesv", "t2agent-port": "remmdbench", "averimatec": "averitec"}
"""Adapters read by another adapter's module (by name otherwise)."""
TABLE = "| `--data` | files | record fields read (what each becomes) |"


def _rows() -> dict[str, str]:
    """The README adapter table's rows: the adapter name (the first cell's, before ``/`` or ``[``) -> the
    fields cell."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(TABLE)
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows[re.match(r"`([\w-]+)", cells[0]).group(1)] = cells[2]
    return rows


def _source(name: str) -> tuple[str, str]:
    path = ROOT / "rwpost" / "evaluate" / "datasets" / f"{MODULES.get(name, name)}.py"
    text = path.read_text(encoding="utf-8")
    return text, ast.get_docstring(ast.parse(text)) or ""


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_every_adapter_documents_the_record_fields_it_reads(name):
    rows = _rows()
    assert name in rows, f"README's adapter table has no row for {name}"
    code, docstring = _source(name)
    assert re.search(r"(record )?fields read", docstring, re.IGNORECASE), name
    fields = re.findall(r"`([^`]+)`", rows[name])
    assert fields, rows[name]
    for field in fields:
        for part in field.split("."):  # a nested field (verdict.integrity): each key is read by name
            assert f'"{part}"' in code, f"{name}: the README names {field!r}, which its module does not read"
