"""PNG plots of a run and of a leaderboard (matplotlib, Agg backend: no display needed).

matplotlib is imported by the first plot drawn, never by importing this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwpost.io import atomic_path

if TYPE_CHECKING:
    from rwpost.evaluate.log import ConfusionMatrix, GroupScores, ReliabilityBin


@cache
def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def confusion_plot(cm: ConfusionMatrix, path: Path, title: str) -> Path:
    """Heat map of a view's confusion matrix, counts written in the cells."""
    gold = [x for x in cm.labels if x != "Other"]
    matrix = cm.matrix[: len(gold)]
    fig, ax = _pyplot().subplots(figsize=(1.2 * len(cm.labels) + 2, 1.2 * len(gold) + 1.5))
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(cm.labels)), cm.labels)
    ax.set_yticks(range(len(gold)), gold)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    peak = max(max(row) for row in matrix) or 1
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(
                j, i, str(value), ha="center", va="center", color="white" if value > peak / 2 else "black"
            )
    ax.set_title(title)
    return _save(fig, path)


def category_plot(groups: Mapping[str, GroupScores], path: Path, title: str) -> Path:
    """Horizontal bars of macro F1 per category, with the sample count in the label; a one-sample
    category gets no bar (its macro F1 is 1 or 0 by chance), only its label ``(n=1, no score)``."""
    names = sorted(groups, key=lambda g: groups[g].n)
    fig, ax = _pyplot().subplots(figsize=(7, 0.3 * len(names) + 1.5))
    ax.barh(
        [f"{g} (n={groups[g].n}{', no score' if groups[g].n < 2 else ''})" for g in names],
        [groups[g].macro_f1 if groups[g].n > 1 else 0.0 for g in names],
    )
    ax.set_xlim(0, 1)
    ax.set_xlabel("macro F1")
    ax.set_title(title)
    return _save(fig, path)


def reliability_plot(bins: Sequence[ReliabilityBin], path: Path, title: str) -> Path:
    """Reliability diagram: accuracy against mean confidence per bin, the diagonal is perfect calibration."""
    fig, ax = _pyplot().subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey")
    ax.bar(
        [(b.low + b.high) / 2 for b in bins],
        [b.accuracy for b in bins],
        width=[b.high - b.low for b in bins],
        edgecolor="black",
        alpha=0.6,
    )
    ax.plot([b.confidence for b in bins], [b.accuracy for b in bins], marker="o")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(title)
    return _save(fig, path)


def cost_plot(rows: Sequence[Any], path: Path, metric: str = "macro_f1") -> Path | None:
    """Cost per sample against a metric, one point per leaderboard row; None (nothing drawn) when no row
    cost anything, where the figure would say nothing."""
    if not any(row.cost_per_sample_usd for row in rows):
        return None
    fig, ax = _pyplot().subplots(figsize=(6, 4.5))
    for row in rows:
        x, y = row.cost_per_sample_usd or 0.0, getattr(row, metric)
        if y is None:
            continue
        ax.scatter([x], [y])
        ax.annotate(row.system, (x, y), fontsize=8, xytext=(3, 3), textcoords="offset points")
    costs = [row.cost_per_sample_usd or 0.0 for row in rows]
    ax.set_xlim(left=0.0, right=max(max(costs, default=0.0) * 1.15, 1e-4))
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("cost per sample (USD)")
    ax.set_ylabel(metric)
    ax.set_title(f"cost vs {metric}")
    return _save(fig, path)
