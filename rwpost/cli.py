"""The ``rwpost`` command line: one subcommand per task (STYLE.md 7).

Each area of the toolkit registers its own subcommands from a small ``register(app)`` function in its
own module (``COMMANDS``, imported plainly so that import-linter sees cli above commands), so this file
stays a table of contents. Errors of the :class:`RwpostError` family become one clear line and an exit
code; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console

from rwpost.commands import annotate, core, crawl, data, evaluate, extract
from rwpost.commands import export as export_commands
from rwpost.commands import filter as filters
from rwpost.errors import RwpostError
from rwpost.secrets import redacting_streams

try:  # typer vendors its own click since 0.2x; its exceptions are not click's
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older typer on the real click
    from click import exceptions as click_errors

COMMANDS = (core, data, crawl, extract, filters, evaluate, export_commands, annotate)
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


for _commands in COMMANDS:
    _commands.register(app)


def _one_line(message: object) -> str:
    """A message on one line (a YAML or OS error may carry newlines)."""
    return " ".join(str(message).split())


def _path_problem(exc: OSError) -> str:
    """One line naming the path of an OS error and what is wrong with it."""
    if isinstance(exc, FileExistsError):
        return f"{exc.filename}: exists and is not a folder"
    if isinstance(exc, NotADirectoryError):
        return f"{exc.filename}: a part of this path is a file, not a folder"
    return f"{exc.filename}: {_one_line(exc.strerror or exc)}"


def _internal(exc: BaseException, debug: bool) -> int:
    if debug:
        raise exc
    err_console.print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {_one_line(exc)} (rerun with --debug)",
        highlight=False,
        soft_wrap=True,
    )
    return 70


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn errors into one line on stderr and an exit code.

    1: bad input (an :class:`RwpostError`), 2: bad usage (a :class:`ConfigError` or a usage error),
    130: interrupted, 70: a bug (the traceback with ``--debug``). Everything printed is redacted
    (:func:`rwpost.secrets.redacting_streams`): no secret the process knows reaches the terminal or a log.
    """
    with redacting_streams():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or os.environ.get("RWPOST_DEBUG") == "1"
    try:
        code = app(args=args, prog_name="rwpost", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except RwpostError as exc:
        if debug:
            raise
        err_console.print(f"[bold red]error:[/] {_one_line(exc)}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except click_errors.ClickException as exc:  # usage errors: click's own message, on one line
        if debug:
            raise
        message = _one_line(exc.format_message())
        if message:  # empty after a bare group name: the help is already shown
            err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except typer.Abort as exc:  # click turns an EOFError inside a command into Abort
        if isinstance(exc.__cause__, KeyboardInterrupt) or exc.__cause__ is None:
            err_console.print("aborted")
            return 130
        return _internal(exc.__cause__, debug)
    except KeyboardInterrupt:
        err_console.print("aborted")
        return 130
    except OSError as exc:  # a path the machine refuses (a file where a folder must be, no permission)
        if exc.filename is None:
            return _internal(exc, debug)
        if debug:
            raise
        err_console.print(f"[bold red]error:[/] {_path_problem(exc)}", highlight=False, soft_wrap=True)
        return 1
    except Exception as exc:
        return _internal(exc, debug)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
