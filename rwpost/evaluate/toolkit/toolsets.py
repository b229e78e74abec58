"""Tool selection (the T2Agent paper's Algorithm 2): greedy, accuracy-driven, on a labelled split; and the
toolset file it writes, which a detector with a tool set loads (``--set toolset=PATH``).

Stage 1 scores the base toolset; stage 2 tries each other tool added to the current set and keeps it when
the accuracy rises above the baseline (``Delta > 0``); stage 3 returns the set. The baseline moves to the
accuracy of each set kept: the pseudocode leaves it at stage 1's, which would keep a tool that lowers the
accuracy of the set after a helpful one, against the text ("incrementally adds tools one by one in a
greedy fashion, evaluating the combined effect at each step"). The harness drives it over real runs
(:mod:`rwpost.evaluate.select`, ``rwpost evaluate --select-tools``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.io import decode_json

DEFAULT_BASE: tuple[str, ...] = ("Wikipedia", "VQA")
"""The paper's minimal default toolset (its ablation: Wikipedia lookup and image understanding)."""


def select_tools(
    accuracy: Callable[[list[str]], float], candidates: Sequence[str], base: Sequence[str] = DEFAULT_BASE
) -> tuple[list[str], list[dict[str, Any]]]:
    """The chosen toolset and each step's ``{tools, accuracy, delta, kept}`` (Algorithm 2)."""
    chosen = list(base)
    baseline = accuracy(list(chosen))
    steps: list[dict[str, Any]] = [{"tools": list(chosen), "accuracy": baseline, "delta": 0.0, "kept": True}]
    for tool in (t for t in candidates if t not in base):
        trial = [*chosen, tool]
        score = accuracy(trial)
        delta = score - baseline
        steps.append({"tools": trial, "accuracy": score, "delta": delta, "kept": delta > 0})
        if delta > 0:
            chosen, baseline = trial, score
    return chosen, steps


def write_toolset(path: str | Path, tools: Sequence[str], steps: Sequence[dict[str, Any]]) -> None:
    """The chosen toolset and the selection's steps as JSON (``tools`` goes to ``--set tools=...``)."""
    from rwpost.io import write_json

    write_json(Path(path), {"tools": list(tools), "steps": list(steps)})


def read_toolset(path: str | Path, known: Collection[str]) -> list[str]:
    """The toolset a selection wrote (one-line errors for an unreadable file or a tool not in ``known``)."""
    try:
        data = decode_json(Path(path).read_text(encoding="utf-8"), str(path))
        tools = data["tools"]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise TypeError(f"'tools' is not a list of names: {tools!r}")
    except RecordError as exc:  # not JSON, or nested too deeply
        problem = f"{exc.problem} at line {exc.line}"
        raise ConfigError(f"{path}: not a toolset file written by --select-tools ({problem})") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        problem = "no 'tools' key" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not a toolset file written by --select-tools ({problem})") from None
    unknown = [t for t in tools if t not in known]
    if unknown:
        raise ConfigError(f"{path}: unknown tools {unknown}; known: {', '.join(known)}")
    return list(tools)


__all__ = ["DEFAULT_BASE", "read_toolset", "select_tools", "write_toolset"]
