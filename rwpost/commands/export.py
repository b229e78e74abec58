"""``rwpost export-run``: a run folder (or a grid of them) in another system's own output layout."""

from __future__ import annotations

from pathlib import Path

import typer


def export_run(
    run: Path = typer.Argument(
        ..., help="a run folder of rwpost evaluate, or a folder of run folders (a grid)"
    ),
    fmt: str = typer.Option("agentfact", "--format", help="the layout to write: agentfact"),
    out: Path = typer.Option(
        ..., "--out", help="folder to write (output.jsonl, or <model>/<T|TI|TE|TIE>[_kK]/)"
    ),
    data: Path | None = typer.Option(
        None, "--data", help="the evaluated samples (default: the data file the run's manifest names)"
    ),
    image_root: Path | None = typer.Option(None, "--image-root", help="prefix of the exported image paths"),
) -> None:
    """Write a run in the AgentFact authors' layout, so their analysis scripts read it.

    Example: rwpost export-run reports/evaluate/grid --format agentfact --out results
    """
    from rwpost.evaluate.export import export_run as export

    samples = None
    if data is not None:
        from rwpost.dataset import read_samples

        samples = list(read_samples(data))
    for folder, counts in export(run, out, fmt, samples, image_root).items():
        typer.echo(f"{counts['rows']} rows, {counts['failed']} failed -> {folder}")


def register(app: typer.Typer) -> None:
    app.command("export-run")(export_run)
