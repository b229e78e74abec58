"""What the view was given: each folder named on the command line, recognised by the files in it.

A folder is a published version (``manifest.json`` beside ``<subset>/<split>.parquet``), a work folder
(the stages' outputs: ``tagged/``, ``filter/``, ``assemble/`` ...), an evaluation run (``run.json`` or
``metrics.json``), a leaderboard (``leaderboard.json``) or an annotation export
(``validation_verdicts.jsonl``); any other folder is searched a few levels down for those. Every file the
view reads is reached through :func:`inside`, which refuses a path that leaves its folder (``..``, an
absolute path, a symbolic link pointing out).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

Kind = Literal["version", "work", "run", "leaderboard", "annotations"]

WORK_PARTS = ("crawl", "tagged", "extract", "filter", "assemble", "annotated", "split")
"""Sub-folders of a work folder (params.yaml's stage outputs under data/work)."""
SEARCH_DEPTH = 4
"""How far below a given folder the view looks for versions, runs and leaderboards."""
SKIP = {".git", ".dvc", ".venv", "node_modules", "__pycache__", "cache", "html", "images", "plots"}
"""Folders never searched (stores of many files that hold no folder the view shows)."""


@dataclass
class Source:
    """One folder the view shows: its key in URLs, its kind, its resolved path and the folder it was
    found in (what :func:`inside` keeps reads within)."""

    key: str
    kind: Kind
    path: Path
    given: Path
    label: str
    problems: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, object]:
        return {"key": self.key, "kind": self.kind, "label": self.label, "problems": self.problems}


def kind_of(folder: Path) -> Kind | None:
    """What ``folder`` holds, by the files in it (None: none of the view's kinds)."""
    if (folder / "run.json").is_file() or (folder / "metrics.json").is_file():
        return "run"
    if (folder / "leaderboard.json").is_file():
        return "leaderboard"
    if (folder / "manifest.json").is_file() and any(folder.glob("*/*.parquet")):
        return "version"
    if (folder / "validation_verdicts.jsonl").is_file():
        return "annotations"
    if sum((folder / part).is_dir() for part in WORK_PARTS) >= 2:
        return "work"
    return None


def _walk(folder: Path, depth: int) -> list[tuple[Path, Kind]]:
    kind = kind_of(folder)
    if kind is not None:
        return [(folder, kind)]
    if depth == 0:
        return []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    found: list[tuple[Path, Kind]] = []
    for child in children:
        if child.name not in SKIP and not child.name.startswith("."):
            found.extend(_walk(child, depth - 1))
    return found


def discover(folders: list[str | os.PathLike[str]]) -> tuple[list[Source], list[str]]:
    """The sources under ``folders`` in the order given (keys ``s0``, ``s1`` ... in that order), and one
    line for each given folder that cannot be shown."""
    sources: list[Source] = []
    problems: list[str] = []
    for given in folders:
        root = Path(given)
        if not root.exists():
            problems.append(f"{given}: not found")
            continue
        if not root.is_dir():
            problems.append(f"{given}: not a folder (give the folder that holds it)")
            continue
        resolved = root.resolve()
        found = _walk(resolved, SEARCH_DEPTH)
        if not found:
            problems.append(
                f"{given}: no published version, work folder, run, leaderboard or annotation export in it"
            )
        for path, kind in found:
            rel = path.relative_to(resolved).as_posix()
            label = str(root) if rel == "." else f"{root.as_posix().rstrip('/')}/{rel}"
            sources.append(Source(f"s{len(sources)}", kind, path, resolved, label))
    return sources, problems


class OutsideFolder(ValueError):
    """A path that is not inside the folder it was asked under."""


def inside(root: Path, relative: str) -> Path:
    """``relative`` under ``root``, resolved; refuses an absolute path, a ``..`` part and a path whose
    resolution (symbolic links followed) leaves ``root``."""
    pure = PurePosixPath(relative)
    if not relative or pure.is_absolute() or relative.startswith(("/", "\\")) or ":" in pure.parts[0]:
        raise OutsideFolder(f"{relative!r}: not a path inside the folder")
    if any(part in ("..", "") for part in relative.replace("\\", "/").split("/")):
        raise OutsideFolder(f"{relative!r}: has a '..' or empty part")
    base = root.resolve()
    target = (base / pure).resolve()
    if not target.is_relative_to(base):
        raise OutsideFolder(f"{relative!r}: leads out of the folder")
    return target
