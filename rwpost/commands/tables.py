"""Score tables on the console that no width cuts: a Rich table where it fits, one line per row where not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], console: Console | None = None
) -> None:
    """``rows`` under ``headers`` as a table when its widest form fits the console (a terminal's width;
    80 columns in a log or under ``COLUMNS=80``); otherwise the title, then each row on its own line as
    ``first cell: header value, ...`` (soft-wrapped, so a narrow terminal or a log never shows ``0.…``)."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    console = console or Console()
    table = Table(*headers, title=title)
    for row in rows:
        table.add_row(*row)
    if Measurement.get(console, console.options.update_width(10_000), table).maximum <= console.width:
        console.print(table)
        return
    console.print(title, markup=False, highlight=False, soft_wrap=True)
    for first, *rest in rows:
        cells = ", ".join(f"{h} {c}" for h, c in zip(headers[1:], rest, strict=True))
        console.print(f"  {first}: {cells}", markup=False, highlight=False, soft_wrap=True)
