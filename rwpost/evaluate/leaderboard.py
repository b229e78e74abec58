"""Compare runs: a leaderboard table over run folders, and a paired test of two runs on the same ids."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.explanations import merge_paired_explanations
from rwpost.evaluate.metrics import HEADLINE, VIEWS, check_policy, paired_comparison, spread
from rwpost.evaluate.plots import cost_plot
from rwpost.evaluate.report import METRIC_NAMES, coverage_cell, policy_title
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
    repeats = metrics.get("repeats") or {}
    coverage = metrics.get("coverage") or {}
    return {
        "run": str(run_dir),
        "system": metrics.get("system"),
        "detector": metrics.get("detector"),
        "setting": metrics.get("setting"),
        "view": view.get("title", primary),
        "n": view.get("n", 0),
        "failures": metrics.get("failures", manifest.get("failures", "wrong")),
        "coverage": {
            "answered": coverage.get("answered", coverage.get("predicted")),
            "total": coverage.get("total", metrics.get("n_samples")),
        },
        "macro_classes": view.get("macro_classes"),
        **{k: metrics.get(k) for k in HEADLINE},
        "repeats": repeats.get("n", 1),
        "sd": {k: s["std"] for k, s in repeats.get("headline", {}).items()} or None,
        "repeat_values": {k: s["values"] for k, s in repeats.get("headline", {}).items()} or None,
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
    """Every run's row, best ``metric`` first (of a repeated run: its mean over the repeats)."""
    rows = [leaderboard_row(r) for r in find_runs(paths)]
    return sorted(rows, key=lambda r: (r.get(metric) is None, -(r.get(metric) or 0.0)))


def _cell(row: dict[str, Any], key: str) -> str:
    """A metric, ``mean ± sd`` for a repeated run."""
    if row.get(key) is None:
        return "-"
    sd = (row.get("sd") or {}).get(key)
    return f"{row[key]:.3f}" + (f" ± {sd:.3f}" if sd is not None else "")


def leaderboard_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The leaderboard as a Markdown table (repeated runs: mean ± sd, every repeat below); a note when
    the runs were scored on different data or under different failure policies."""
    policies = sorted({r.get("failures", "wrong") for r in rows})
    lines = [
        f"Scores {'; '.join(policy_title(p) for p in policies)}. "
        "Coverage is answered/total; (!) marks a run below 100 %.",
        "",
        "| system | setting | view | n | failures | coverage | "
        + " | ".join(METRIC_NAMES[k] for k in HEADLINE)
        + " | flagged | cost/sample $ |",
        "|---|---|---|---|---|---|" + "---|" * (len(HEADLINE) + 2),
    ]
    for r in rows:
        cells = " | ".join(_cell(r, k) for k in HEADLINE)
        cost = "-" if r.get("cost_per_sample_usd") is None else f"{r['cost_per_sample_usd']:.5f}"
        lines.append(
            f"| {r['system']} | {r['setting']} | {r['view']} | {r['n']} | {r.get('failures', 'wrong')} | "
            f"{coverage_cell(r.get('coverage'))} | {cells} | {r['flagged']} | {cost} |"
        )
    repeated = [r for r in rows if r.get("repeat_values")]
    if repeated:
        lines += ["", "Repeated runs (ranked by the mean), every repeat:", ""]
        for r in repeated:
            values = "; ".join(
                f"{METRIC_NAMES[k]} " + ", ".join(f"{v:.3f}" for v in r["repeat_values"][k])
                for k in HEADLINE
                if k in r["repeat_values"]
            )
            lines.append(f"- {r['system']} ({r['repeats']} repeats): {values}")
    macro = {tuple(r.get("macro_classes") or ()) for r in rows}
    if macro:
        lines += ["", "Macro F1 averages over: " + " | ".join(", ".join(m) for m in sorted(macro)) + "."]
    if len({r["data_sha256"] for r in rows}) > 1:
        lines += ["", "Note: these runs were scored on different sample sets; compare with care."]
    if len(policies) > 1:
        lines += ["", "Note: these runs were scored under different failure policies; compare with care."]
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
    run_a: str | Path,
    run_b: str | Path,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    failures: str | None = None,
) -> dict[str, Any]:
    """Run A vs run B on their shared ids, in every view: a paired bootstrap of the difference of every
    headline metric and McNemar's test beside accuracy. Repeated runs are compared repeat by repeat
    (repeat i of A with repeat i of B, or with B's single run); each difference is reported per repeat
    and as mean ± sd. ``failures`` defaults to run A's policy."""
    a, b = _scored(Path(run_a)), _scored(Path(run_b))
    policy = check_policy(failures or _policy(Path(run_a)))
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ConfigError(f"{run_a} and {run_b} share no sample ids")
    conflicts = [i for i in shared if a[i]["gold"] != b[i]["gold"]]
    if conflicts:
        raise ConfigError(f"the runs disagree on gold labels for {len(conflicts)} ids, e.g. {conflicts[0]}")

    def label(value: str | None) -> Label | None:
        return Label(value) if value else None

    def repeats(rows: dict[str, dict[str, Any]]) -> list[list[Label | None]]:
        n = len(rows[shared[0]].get("predicted_repeats") or [None])
        return [
            [label((rows[i].get("predicted_repeats") or [rows[i]["predicted"]])[r]) for i in shared]
            for r in range(n)
        ]

    gold = [label(a[i]["gold"]) for i in shared]
    reps_a, reps_b = repeats(a), repeats(b)
    pairs = max(len(reps_a), len(reps_b))
    views: dict[str, Any] = {}
    for name, view in VIEWS.items():
        per_repeat = [
            paired_comparison(
                gold,
                reps_a[min(r, len(reps_a) - 1)],
                reps_b[min(r, len(reps_b) - 1)],
                view,
                n_resamples=n_resamples,
                seed=seed,
                failures=policy,
            )
            for r in range(pairs)
        ]
        result = per_repeat[0]
        if not result.get("metrics"):
            continue
        if pairs > 1:
            for key, m in result["metrics"].items():
                m["repeats"] = {
                    part: spread([c["metrics"][key][part] for c in per_repeat])
                    for part in ("a", "b", "difference")
                }
            result["repeat_pairs"] = pairs
        views[name] = result
    return {
        "a": str(run_a),
        "b": str(run_b),
        "failures": policy,
        "repeats": {"a": len(reps_a), "b": len(reps_b)},
        "shared_ids": len(shared),
        "only_in_a": len(set(a) - set(b)),
        "only_in_b": len(set(b) - set(a)),
        "views": views,
    }


def _policy(run_dir: Path) -> str:
    path = run_dir / "metrics.json"
    return json.loads(path.read_text(encoding="utf-8")).get("failures", "wrong") if path.exists() else "wrong"
