"""``rwpost testing``: what a user needs to try the papers' detectors offline, with no key and no model.

``serve`` starts the loopback model server and search twin (:mod:`rwpost.testing.offline`) and prints
what to set; ``tiny-models`` builds the tiny random models for ``local-vlm`` and AgentM3D's local path
(:mod:`rwpost.testing.models`).
"""

from __future__ import annotations

from pathlib import Path

import typer

testing_app = typer.Typer(
    help="Offline stand-ins: loopback model and search servers, tiny random models.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@testing_app.command("serve")
def serve(
    llm_port: int = typer.Option(0, "--llm-port", min=0, max=65535, help="model server port (0: a free one)"),
    search_port: int = typer.Option(0, "--search-port", min=0, max=65535, help="search twin port (0: free)"),
) -> None:
    """Serve an OpenAI-compatible model (answers from each request's JSON schema) and the search, image
    search and Wikipedia twins on 127.0.0.1 until Ctrl-C; print the environment and options to use.

    Example: rwpost testing serve --llm-port 19300 --search-port 19310
    """
    import threading

    from rwpost.errors import sigterm_interrupts
    from rwpost.testing.offline import PLUGINS, OfflineServices

    with OfflineServices(llm_port=llm_port, search_port=search_port) as services:
        typer.echo("# rwpost testing serve: loopback stand-ins (answers valid, not informed); Ctrl-C stops")
        for name, value in services.environment().items():
            typer.echo(f"export {name}={value}")
        for detector in PLUGINS:
            typer.echo(
                f"# {detector}: rwpost evaluate --detector {detector} {' '.join(services.options(detector))}"
            )
        try:
            with sigterm_interrupts():
                threading.Event().wait()
        except KeyboardInterrupt:
            typer.echo("# stopped")


@testing_app.command("tiny-models")
def tiny_models(
    out: Path = typer.Option(..., "--out", help="folder to write vlm/, vlm-random/ and reward/ into"),
) -> None:
    """Build tiny random models from a config (no download): a scripted VLM for local-vlm and AgentM3D's
    backbone (out/vlm), one as initialised (out/vlm-random) and AgentM3D's reward model (out/reward).

    Example: rwpost testing tiny-models --out models/tiny
    """
    from rwpost.io import check_outputs
    from rwpost.testing.models import build_tiny_models

    check_outputs([out / name for name in ("vlm", "vlm-random", "reward")])
    for name, folder in build_tiny_models(out).items():
        typer.echo(f"{name}: {folder}")


def register(app: typer.Typer) -> None:
    app.add_typer(testing_app, name="testing")
