"""T2Agent's tool selection (paper Algorithm 2): greedy, accuracy-driven, on a labelled split.

Stage 1 scores the base toolset; stage 2 tries each other tool added to the current set and keeps it when
the accuracy rises above the baseline (``Delta > 0``); stage 3 returns the set. The baseline moves to the
accuracy of each set kept: the pseudocode leaves it at stage 1's, which would keep a tool that lowers the
accuracy of the set after a helpful one, against the text ("incrementally adds tools one by one in a
greedy fashion, evaluating the combined effect at each step"). :func:`run_accuracy` scores a toolset
with the runner (one run folder per toolset, so every run resumes); :func:`write_toolset` writes the
choice, which a later run loads with ``--set tools=...``. Not yet on the command line
(``rwpost evaluate --select-tools``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

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


def run_accuracy(samples: Sequence[Any], spec: Any, out_dir: str | Path) -> Callable[[list[str]], float]:
    """Accuracy of ``spec`` (a t2agent :class:`~rwpost.evaluate.runner.RunSpec`) with a toolset, each
    toolset in its own folder under ``out_dir``."""
    from rwpost.evaluate import evaluate

    def accuracy(tools: list[str]) -> float:
        folder = Path(out_dir) / ("tools-" + "-".join(tools))
        metrics = evaluate(samples, replace(spec, config={**spec.config, "tools": tools}), folder)
        return float(metrics["accuracy"])

    return accuracy


def write_toolset(path: str | Path, tools: Sequence[str], steps: Sequence[dict[str, Any]]) -> None:
    """The chosen toolset and the selection's steps as JSON (``tools`` goes to ``--set tools=...``)."""
    from rwpost.io import write_json

    write_json(Path(path), {"tools": list(tools), "steps": list(steps)})


def read_toolset(path: str | Path) -> list[str]:
    """The toolset a selection wrote."""
    from rwpost.errors import ConfigError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return [str(t) for t in data["tools"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a toolset file written by the tool selection ({exc})") from None


__all__ = ["DEFAULT_BASE", "read_toolset", "run_accuracy", "select_tools", "write_toolset"]
