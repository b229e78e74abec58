"""The command line starts at once: a command's module is imported only when the command is looked up, and
``rwpost --help`` and each ``rwpost CMD [SUB] --help`` import none of the heavy libraries, pydantic and Rich
included (checked in a fresh interpreter through ``sys.modules``; the start-up time itself is
``benchmarks/cli_start.py``'s)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.cli import COMMANDS, load_commands
from rwpost.commands import STAGE_DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "numpy",
    "pandas",
    "pyarrow",
    "openai",
    "torch",
    "transformers",
    "scrapy",
    "scipy",
    "imagehash",
    "PIL",
    "datasets",
    "matplotlib",
    "rapidocr_onnxruntime",
    "onnxruntime",
    "cv2",
    "httpx",
    "aiohttp",
    "sklearn",
    "label_studio_sdk",
    "pydantic",
    "rich",
)
"""Libraries that cost a start-up tenth of a second or more each (pydantic and Rich: several hundredths)
and that no command's help needs."""


def _subcommands() -> list[str]:
    """Each subcommand of a group, as ``GROUP SUB`` (``filter run``, ``annotate push``, ...)."""
    found = []
    for module in sorted({module for module, _ in COMMANDS.values()}):
        for name, command in load_commands(module).items():
            found += [f"{name} {sub}" for sub in getattr(command, "commands", {})]
    return found


PROBE = """
import json, sys
from rwpost.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in %r)
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def _modules_after(*args: str) -> tuple[int, list[str], set[str]]:
    """Exit code, heavy modules and rwpost.commands modules in ``sys.modules`` after ``rwpost ARGS``."""
    probe = PROBE.replace("%r", repr({*HEAVY, "rwpost"}))
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    loaded = report["loaded"]
    heavy = sorted({m.split(".")[0] for m in loaded if not m.startswith("rwpost")})
    commands = {m.removeprefix("rwpost.commands.") for m in loaded if m.startswith("rwpost.commands.")}
    return report["code"], heavy, commands


def test_importing_the_cli_imports_no_heavy_library_and_no_command() -> None:
    probe = (
        f"import sys, rwpost.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}"
    )
    probe += " or m.startswith('rwpost.commands.')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_top_level_help_lists_every_command_and_imports_none() -> None:
    code, heavy, commands = _modules_after("--help")
    assert (code, heavy, commands) == (0, [], set())


@pytest.mark.parametrize("name", sorted(COMMANDS) + _subcommands())
def test_each_commands_help_imports_its_own_module_and_no_heavy_library(name: str) -> None:
    code, heavy, commands = _modules_after(*name.split(), "--help")
    assert code == 0
    assert heavy == []
    assert commands <= {COMMANDS[name.split()[0]][0], "tables"}  # tables: evaluate's console table helper


def test_the_defaults_help_shows_are_the_stage_params_own() -> None:
    """``--help`` shows a stage's defaults from plain text (so no help imports the stage and pydantic); the
    text is each ``Params`` field's own default, as :meth:`StageParams.default_text` writes it."""
    for stage, fields in STAGE_DEFAULTS.items():
        params = importlib.import_module(f"rwpost.stages.{stage}").Params
        assert {name: params.default_text(name) for name in fields} == fields, stage


def test_the_summaries_are_the_commands_own_and_every_command_is_listed() -> None:
    """The table ``--help`` lists from is the first paragraph of each command's real help, and every
    command a module registers is in it, under that module."""
    registered = {}
    for module in sorted({module for module, _ in COMMANDS.values()}):
        for name, command in load_commands(module).items():
            registered[name] = (module, command.get_short_help_str(10**6))
    assert {name: registered[name] for name in COMMANDS} == COMMANDS
    assert set(registered) == set(COMMANDS)
