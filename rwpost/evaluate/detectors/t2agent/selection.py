"""T2Agent's tool selection (paper Algorithm 2): greedy, accuracy-driven, on a labelled split.

Stage 1 scores the base toolset; stage 2 tries each other tool added to the current set and keeps it when
the accuracy rises above the baseline (``Delta > 0``); stage 3 returns the set. The baseline moves to the
accuracy of each set kept: the pseudocode leaves it at stage 1's, which would keep a tool that lowers the
accuracy of the set after a helpful one, against the text ("incrementally adds tools one by one in a
greedy fashion, evaluating the combined effect at each step"). :func:`run_accuracy` scores a toolset
with the runner (one run folder per toolset, so every run resumes); :func:`write_toolset` writes the
choice, which a later run loads with ``--set toolset=PATH``. :func:`select_for_plan` is
``rwpost evaluate --detector t2agent --select-tools``.
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
    """The toolset a selection wrote (one-line errors for an unreadable file or an unknown tool)."""
    from rwpost.errors import ConfigError
    from rwpost.evaluate.detectors.t2agent.tools import CARDS

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        tools = data["tools"]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise TypeError(f"'tools' is not a list of names: {tools!r}")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        problem = "no 'tools' key" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not a toolset file written by --select-tools ({problem})") from None
    unknown = [t for t in tools if t not in CARDS]
    if unknown:
        raise ConfigError(f"{path}: unknown tools {unknown}; known: {', '.join(CARDS)}")
    return list(tools)


def select_for_plan(plan: Sequence[Any], data: Any, out: str | Path) -> tuple[Path, list[str]]:
    """``rwpost evaluate --detector t2agent --select-tools``: Algorithm 2 over the one planned t2agent run
    (its cell and options) on ``data``'s samples (labelled: the loader drops the rest); each toolset's run
    goes to ``out/tools-...`` (resumable), the choice to ``out/toolset.json``. Candidates: the configured
    toolset's tools that the cell allows and this configuration can run; base: :data:`DEFAULT_BASE` among
    them (else the first candidate)."""
    from rwpost.errors import ConfigError
    from rwpost.evaluate.detectors.t2agent.tools import CARDS
    from rwpost.evaluate.registry import make_detector
    from rwpost.evaluate.task import EvidenceSource

    if len(plan) != 1 or plan[0].spec.detector != "t2agent":
        raise ConfigError(
            "--select-tools chooses T2Agent's toolset: give --detector t2agent and one --setting"
        )
    spec = plan[0].spec
    detector: Any = make_detector(spec.detector, spec.config)  # a T2AgentDetector
    cell, absent = spec.setting, detector.absent_tools()
    usable = [
        name
        for name in detector.toolset()
        if name not in absent
        and (cell.evidence is EvidenceSource.WEB or not CARDS[name].web)
        and (cell.image or not CARDS[name].needs_image)
    ]
    if not usable:
        raise ConfigError(f"--select-tools: no tool of {detector.toolset()} runs in the {cell} cell")
    config = {k: v for k, v in spec.config.items() if k not in ("tools", "toolset")}
    accuracy = run_accuracy(data.test, replace(spec, config=config), out)
    chosen, steps = select_tools(accuracy, usable, [t for t in DEFAULT_BASE if t in usable] or usable[:1])
    path = Path(out) / "toolset.json"
    write_toolset(path, chosen, steps)
    return path, chosen


__all__ = [
    "DEFAULT_BASE",
    "read_toolset",
    "run_accuracy",
    "select_for_plan",
    "select_tools",
    "write_toolset",
]
