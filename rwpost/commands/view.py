"""``rwpost view``: look at a dataset and at every run in a browser."""

from __future__ import annotations

from pathlib import Path

import typer

from rwpost.commands import LazyConsole

err_console = LazyConsole(stderr=True)


def view(
    folders: list[Path] = typer.Argument(
        None, help="Version folders, work folders, run folders, leaderboards (default: the current folder)."
    ),
    port: int = typer.Option(8765, "--port", help="Port to listen on."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface to listen on; anything but loopback shows the view to others."
    ),
) -> None:
    """Serve a read-only web view of datasets, work folders, runs and leaderboards on this machine.

    Example: rwpost view data/rwpost/v0.1.0 data/work reports/evaluate
    """
    from rwpost.view.folders import discover
    from rwpost.view.serve import is_loopback, serve

    given = [str(f) for f in folders] if folders else ["."]
    found, problems = discover(given)
    for line in problems:
        err_console.print(f"rwpost view: {line}", markup=False, highlight=False)
    if not found:
        raise typer.Exit(2)
    if not is_loopback(host):
        err_console.print(
            f"warning: --host {host}: the view (every file of these folders it shows) is reachable from "
            "other machines on that interface; it has no login",
            markup=False,
            highlight=False,
        )

    def ready(url: str) -> None:
        kinds = ", ".join(f"{s.kind} {s.label}" for s in found[:6]) + (" ..." if len(found) > 6 else "")
        err_console.print(f"rwpost view: {url} ({kinds}); Ctrl-C stops it", markup=False, highlight=False)

    try:
        serve(given, host=host, port=port, on_ready=ready)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    app.command("view")(view)
