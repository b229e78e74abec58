"""Markdown tables: the one helper every report, card and summary builds its tables with.

The tables are compact GitHub pipe tables (``| a | b |`` over ``|---|---:|``) rather than tabulate's padded
ones, so the published dataset card stays byte-identical across versions of any table library.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """The lines of a pipe table: ``header``, the rule, then one line per row.

    ``align`` has one letter per column, ``l`` or ``r`` (``---`` or ``---:``); missing letters mean ``l``.
    Cells are written with ``str()``; the caller formats numbers.
    """
    rule = "".join("---:|" if align[i : i + 1] == "r" else "---|" for i in range(len(header)))
    lines = [_row(header), "|" + rule]
    lines += [_row(row) for row in rows]
    return lines


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"
