"""Tool selection as a harness feature: ``rwpost evaluate --select-tools`` runs the T2Agent paper's
Algorithm 2 (:mod:`rwpost.evaluate.toolkit.toolsets`) for any detector with a tool set.

A detector has a tool set when it says which of its tools a cell can run (``usable_tools(cell)``) and
takes the chosen ones as its ``tools`` option. Each toolset is scored by a real run of the detector (one
folder per toolset under ``--out``, so every run resumes); the choice goes to ``toolset.json``, which a
later run loads with ``--set toolset=PATH``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.registry import make_detector, resolve_detector
from rwpost.evaluate.run import evaluate
from rwpost.evaluate.toolkit.toolsets import DEFAULT_BASE, select_tools, write_toolset


def run_accuracy(samples: Sequence[Any], spec: Any, out_dir: str | Path) -> Callable[[list[str]], float]:
    """Accuracy of ``spec`` (a :class:`~rwpost.evaluate.runner.RunSpec`) with a toolset, each toolset in
    its own folder under ``out_dir``."""

    def accuracy(tools: list[str]) -> float:
        folder = Path(out_dir) / ("tools-" + "-".join(tools))
        metrics = evaluate(samples, replace(spec, config={**spec.config, "tools": tools}), folder)
        return float(metrics.accuracy)

    return accuracy


def select_for_plan(plan: Sequence[Any], data: Any, out: str | Path) -> tuple[Path, list[str]]:
    """Algorithm 2 over the one planned run (its detector, cell and options) on ``data``'s samples
    (labelled: the loader drops the rest); each toolset's run goes to ``out/tools-...``, the choice to
    ``out/toolset.json``. Candidates: the tools of the detector's tool set the cell allows and this
    configuration can run; base: :data:`~rwpost.evaluate.toolkit.toolsets.DEFAULT_BASE` among them (else
    the first candidate)."""
    if len(plan) != 1:
        raise ConfigError(
            "--select-tools chooses one detector's toolset: give one --detector and one --setting"
        )
    spec = plan[0].spec
    if not callable(getattr(resolve_detector(spec.detector), "usable_tools", None)):
        raise ConfigError(
            f"--select-tools: detector {spec.detector!r} has no tool set to choose from (a detector with "
            "one says which tools a cell can run: usable_tools(cell), and takes the choice as 'tools')"
        )
    detector: Any = make_detector(spec.detector, spec.config)
    usable = detector.usable_tools(spec.setting)
    if not usable:
        raise ConfigError(f"--select-tools: no tool of {detector.toolset()} runs in the {spec.setting} cell")
    config = {k: v for k, v in spec.config.items() if k not in ("tools", "toolset")}
    accuracy = run_accuracy(data.test, replace(spec, config=config), out)
    chosen, steps = select_tools(accuracy, usable, [t for t in DEFAULT_BASE if t in usable] or usable[:1])
    path = Path(out) / "toolset.json"
    write_toolset(path, chosen, steps)
    return path, chosen


__all__ = ["run_accuracy", "select_for_plan"]
