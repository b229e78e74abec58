"""Compare runs: a leaderboard table over run folders, and a paired test of two runs on the same ids."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.explanations import merge_paired_explanations
from rwpost.evaluate.metrics import HEADLINE, VIEWS, paired_comparison
from rwpost.evaluate.plots import cost_plot
from rwpost.io import iter_jsonl, write_json, write_jsonl, write_text
from rwpost.labels import Label


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """Run folders (those with a metrics.json) given directly or found below the given folders."""
    runs: list[Path] = []
    for p in map(Path, paths):
        if (p / "metrics.json").exists():
            runs.append(p)
        elif p.is_dir():
            runs.extend(sorted(m.parent for m in p.rglob("metrics.json")))
        else:
            raise ConfigError(f"{p}: not a run folder (no metrics.json) and not a folder of runs")
    if not runs:
        raise ConfigError(f"no runs (metrics.json) under {', '.join(map(str, paths))}")
    return list(dict.fromkeys(runs))


def leaderboard_row(run_dir: Path) -> dict[str, Any]:
    """One run's line: system, setting, data, headline metrics with intervals, cost, flagged."""
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    primary = metrics.get("primary_view")
    view = metrics["views"].get(primary, {}) if primary else {}
    ledger = metrics.get("ledger", {})
    return {
        "run": str(run_dir),
        "system": metrics.get("system"),
        "detector": metrics.get("detector"),
        "setting": metrics.get("setting"),
        "view": primary,
        "n": view.get("n", 0),
        **{k: metrics.get(k) for k in HEADLINE},
        "ci95": view.get("ci95"),
        "roc_auc_ovr": metrics.get("roc_auc_ovr"),
        "ece": metrics.get("ece"),
        "flagged": metrics.get("audit", {}).get("flagged", 0),
        "cost_usd": ledger.get("cost_usd"),
        "cost_per_sample_usd": ledger.get("per_sample", {}).get("cost_usd"),
        "tokens_in": ledger.get("tokens_in"),
        "tokens_out": ledger.get("tokens_out"),
        "data_sha256": manifest.get("data", {}).get("ids_sha256"),
        "code_version": manifest.get("code_version"),
    }


def leaderboard(paths: Sequence[str | Path], metric: str = "macro_f1") -> list[dict[str, Any]]:
    """Every run's row, best ``metric`` first."""
    rows = [leaderboard_row(r) for r in find_runs(paths)]
    return sorted(rows, key=lambda r: (r.get(metric) is None, -(r.get(metric) or 0.0)))


def leaderboard_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The leaderboard as a Markdown table; a note when the runs were scored on different data."""
    lines = [
        "| system | setting | view | n | " + " | ".join(HEADLINE) + " | flagged | cost/sample $ |",
        "|---|---|---|---|" + "---|" * (len(HEADLINE) + 2),
    ]
    for r in rows:
        cells = " | ".join("-" if r.get(k) is None else f"{r[k]:.3f}" for k in HEADLINE)
        cost = "-" if r.get("cost_per_sample_usd") is None else f"{r['cost_per_sample_usd']:.5f}"
        lines.append(
            f"| {r['system']} | {r['setting']} | {r['view']} | {r['n']} | {cells} | {r['flagged']} | {cost} |"
        )
    if len({r["data_sha256"] for r in rows}) > 1:
        lines += ["", "Note: these runs were scored on different sample sets; compare with care."]
    return "\n".join(lines) + "\n"


def write_leaderboard(
    paths: Sequence[str | Path], out_dir: str | Path, *, explanations: bool = True
) -> list[dict]:
    """leaderboard.json, leaderboard.md, cost_vs_f1.png and the merged paired explanations in ``out_dir``."""
    out = Path(out_dir)
    rows = leaderboard(paths)
    write_json(out / "leaderboard.json", rows)
    write_text(out / "leaderboard.md", leaderboard_markdown(rows))
    cost_plot(rows, out / "cost_vs_f1.png")
    if explanations:
        runs = [
            [row for _, row in iter_jsonl(Path(r["run"]) / "explanations.jsonl")]
            for r in rows
            if (Path(r["run"]) / "explanations.jsonl").exists()
        ]
        write_jsonl(out / "explanations.jsonl", merge_paired_explanations(runs))
    return rows


def _scored(run_dir: Path) -> dict[str, dict[str, Any]]:
    path = run_dir / "scored.jsonl"
    if not path.exists():
        raise ConfigError(f"{run_dir}: no scored.jsonl (not a finished run folder)")
    return {row["id"]: row for _, row in iter_jsonl(path)}


def compare_runs(
    run_a: str | Path, run_b: str | Path, *, metric: str = "macro_f1", n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Run A vs run B on their shared ids, in every view: paired bootstrap difference and McNemar."""
    a, b = _scored(Path(run_a)), _scored(Path(run_b))
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ConfigError(f"{run_a} and {run_b} share no sample ids")
    conflicts = [i for i in shared if a[i]["gold"] != b[i]["gold"]]
    if conflicts:
        raise ConfigError(f"the runs disagree on gold labels for {len(conflicts)} ids, e.g. {conflicts[0]}")

    def label(value: str | None) -> Label | None:
        return Label(value) if value else None

    gold = [label(a[i]["gold"]) for i in shared]
    pred_a = [label(a[i]["predicted"]) for i in shared]
    pred_b = [label(b[i]["predicted"]) for i in shared]
    views = {
        name: paired_comparison(gold, pred_a, pred_b, view, metric=metric, n_resamples=n_resamples, seed=seed)
        for name, view in VIEWS.items()
    }
    return {
        "a": str(run_a),
        "b": str(run_b),
        "shared_ids": len(shared),
        "only_in_a": len(set(a) - set(b)),
        "only_in_b": len(set(b) - set(a)),
        "views": {k: v for k, v in views.items() if v.get("n")},
    }
