"""The ``rwpost`` command line: one subcommand per task (STYLE.md 7).

Each area of the toolkit registers its own subcommands from a small ``register(app)`` function in its
own module (listed in ``COMMAND_MODULES``), so this file stays a table of contents. Errors of the
:class:`RwpostError` family become one clear line and an exit code; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer
from rich.console import Console

from rwpost.errors import RwpostError

COMMAND_MODULES: tuple[str, ...] = (
    "rwpost.commands.core",
    "rwpost.commands.data",
    "rwpost.commands.crawl",
    "rwpost.commands.extract",
    "rwpost.commands.filter",
    "rwpost.commands.evaluate",
)
"""Modules whose ``register(app)`` adds subcommands, in the order ``--help`` lists them."""

app = typer.Typer(
    name="rwpost",
    help=(
        "Build, validate, version and benchmark RW-Post, a real-world multimodal fact-checking dataset.\n\n"
        "Example: rwpost stats data/sample/released/rwpost_dev_main.head.jsonl"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors.")) -> None:
    if debug:
        os.environ["RWPOST_DEBUG"] = "1"


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn rwpost errors into one line on stderr and a non-zero exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or os.environ.get("RWPOST_DEBUG") == "1"
    try:
        app(args=args, prog_name="rwpost")  # standalone: click prints usage errors and exits itself
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except RwpostError as exc:
        if debug:
            raise
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("aborted")
        return 130
    except Exception as exc:
        if debug:
            raise
        err_console.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc} (rerun with --debug)")
        return 70
    return 0


if __name__ == "__main__":
    sys.exit(main())
