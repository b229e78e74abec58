"""Commands that score detectors: evaluate one run, a leaderboard over runs, a paired comparison."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from rwpost.errors import ConfigError
from rwpost.llm.config import detector_secrets_from_env

console = Console(stderr=True)


def _parse_sets(pairs: list[str] | None) -> dict[str, Any]:
    """``key=value`` options into a dict; values are parsed as JSON when they can be (numbers, bools)."""
    config: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set expects key=value, got {pair!r}")
        try:
            config[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            config[key.strip()] = value
    return config


def _read_prices(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"price table not found: {path}") from exc
    if isinstance(data, dict) and "prices" in data:
        data = data["prices"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of model name -> prices")
    return data


def evaluate(
    data: Path = typer.Option(..., "--data", help="Samples to score: released JSONL or a Parquet split."),
    detector: str = typer.Option(
        None,
        "--detector",
        help="Detector name (majority, stratified, category-prior, embedding, vlm, "
        "predictions), an entry point of group rwpost.detectors, or module:Class.",
    ),
    predictions: Path = typer.Option(None, "--predictions", help="Score this JSONL/CSV of predictions."),
    setting: str = typer.Option("closed-book", "--setting", help="closed-book | gold-evidence | open-web"),
    train: Path = typer.Option(None, "--train", help="Labelled training samples (e.g. the dev split)."),
    train_fraction: float = typer.Option(
        None, "--train-fraction", help="Train on this seeded part of --data."
    ),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Runs of a stochastic detector (seed+i each)."),
    seed: int = typer.Option(0, "--seed", help="Seed of splits, detectors and bootstrap."),
    out: Path = typer.Option(..., "--out", help="Run folder for predictions and reports (resumable)."),
    sets: list[str] = typer.Option(None, "--set", help="Detector option key=value (repeatable)."),
    batch_size: int = typer.Option(16, "--batch-size", min=1),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap resamples for 95% intervals."),
    blocked_domains: Path = typer.Option(
        None,
        "--blocked-domains",
        help="More blocked domains, on top of the built-in fact-checkers and the authors' packaged list.",
    ),
    prices: Path = typer.Option(None, "--prices", help="YAML/JSON price table: model -> input_per_mtok..."),
    name: str = typer.Option(None, "--name", help="System name in reports (default detector/setting)."),
    strict: bool = typer.Option(False, "--strict", help="Predictions file: any problem is an error."),
    key_points: bool = typer.Option(True, "--key-points/--no-key-points", help="Score key-point coverage."),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics JSON on stdout."),
) -> None:
    """Score a detector on RW-Post samples; writes metrics.json, report.md, plots and a resumable log.

    Example: rwpost evaluate --data data/sample/released/rwpost_dev_main.head.jsonl
    --detector embedding --train-fraction 0.5 --seed 0 --out reports/evaluate/embedding
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local model folders only, never a download
    from rwpost.evaluate.data import lazy_encoder, load_eval_data
    from rwpost.evaluate.leakage import BlockList
    from rwpost.evaluate.protocol import Setting
    from rwpost.evaluate.report import evaluate as run_evaluation
    from rwpost.evaluate.runner import RunSpec

    config = _parse_sets(sets)
    if predictions is not None:
        if detector not in (None, "predictions"):
            raise ConfigError(
                "--predictions scores a file: leave out --detector or give --detector predictions"
            )
        detector = "predictions"
        config.update(path=str(predictions), strict=strict)
    if detector is None:
        raise ConfigError("give --detector NAME or --predictions FILE")
    try:
        chosen = Setting(setting)
    except ValueError as exc:
        raise ConfigError(
            f"--setting must be one of {', '.join(s.value for s in Setting)}, got {setting!r}"
        ) from exc
    secrets = detector_secrets_from_env(detector, config)
    spec = RunSpec(
        detector=detector,
        config=config,
        setting=chosen,
        seed=seed,
        repeats=repeats,
        batch_size=batch_size,
        n_resamples=bootstrap,
        name=name,
        prices=_read_prices(prices),
        blocklist=BlockList.from_file(blocked_domains),
        secrets=secrets,
    )
    loaded = load_eval_data(data, train=train, train_fraction=train_fraction, seed=seed)
    if loaded.info.get("excluded_unlabelled"):
        console.print(
            f"[yellow]{loaded.info['excluded_unlabelled']} samples have no RW-Post label "
            "(excluded ratings such as satire) and are not scored[/]"
        )
    metrics = run_evaluation(
        loaded.test,
        spec,
        out,
        train=loaded.train,
        data_info=loaded.info,
        encode=lazy_encoder() if key_points else None,
        progress=progress,
    )
    if as_json:
        typer.echo(json.dumps(metrics, indent=2, default=str))
        return
    _summary(metrics, out)


def _summary(metrics: dict[str, Any], out: Path) -> None:
    table = Table(
        "view",
        "n",
        "accuracy",
        "macro F1",
        "weighted F1",
        "weighted P",
        "weighted R",
        title=metrics["system"],
    )
    for name, view in metrics["views"].items():
        if view.get("n"):
            cells = [
                f"{view[k]:.3f}"
                for k in ("accuracy", "macro_f1", "weighted_f1", "weighted_precision", "weighted_recall")
            ]
            table.add_row(name, str(view["n"]), *cells)
    Console().print(table)
    problems = metrics.get("input_problems")
    if problems:
        console.print(f"[yellow]input problems: {problems} (details in {out / 'input_report.json'})[/]")
    if metrics["audit"]["flagged"]:
        console.print(f"[yellow]{metrics['audit']['flagged']} predictions cite blocked fact-check domains[/]")
    console.print(f"reports in {out} (report.md, metrics.json, plots/)")


def leaderboard(
    runs: list[Path] = typer.Argument(..., help="Run folders, or folders containing run folders."),
    out: Path = typer.Option(
        None, "--out", help="Write leaderboard.json/.md, cost_vs_f1.png, explanations.jsonl."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
) -> None:
    """Aggregate evaluation runs into one table, best macro F1 first.

    Example: rwpost leaderboard reports/evaluate --out reports/evaluate/leaderboard
    """
    from rwpost.evaluate.leaderboard import leaderboard as rows_of
    from rwpost.evaluate.leaderboard import write_leaderboard

    rows = write_leaderboard(runs, out) if out else rows_of(runs)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    table = Table(
        "system", "setting", "view", "n", "accuracy", "macro F1", "weighted F1", "flagged", "cost $"
    )
    for r in rows:
        cells = ["-" if r.get(k) is None else f"{r[k]:.3f}" for k in ("accuracy", "macro_f1", "weighted_f1")]
        cost = "-" if r.get("cost_usd") is None else f"{r['cost_usd']:.4f}"
        table.add_row(r["system"], r["setting"], str(r["view"]), str(r["n"]), *cells, str(r["flagged"]), cost)
    Console().print(table)


def compare(
    run_a: Path = typer.Argument(..., help="First run folder."),
    run_b: Path = typer.Argument(..., help="Second run folder."),
    metric: str = typer.Option("macro_f1", "--metric"),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=1),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(None, "--out", help="Write the comparison JSON here."),
) -> None:
    """Paired comparison of two runs on their shared ids: bootstrap difference and McNemar's test.

    Example: rwpost compare reports/evaluate/embedding reports/evaluate/majority
    """
    from rwpost.evaluate.leaderboard import compare_runs
    from rwpost.io import write_json

    result = compare_runs(run_a, run_b, metric=metric, n_resamples=bootstrap, seed=seed)
    if out:
        write_json(out, result)
    table = Table(
        "view", "n", f"A {metric}", f"B {metric}", "A-B [95% CI]", "McNemar p", title=f"{run_a} vs {run_b}"
    )
    for name, v in result["views"].items():
        ci = v["difference_ci95"]
        diff = f"{v['difference']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")
        table.add_row(
            name, str(v["n"]), f"{v['a']:.3f}", f"{v['b']:.3f}", diff, f"{v['mcnemar']['p_value']:.3g}"
        )
    Console().print(table)
    console.print(
        f"shared ids {result['shared_ids']}, only in A {result['only_in_a']}, only in B {result['only_in_b']}"
    )


def register(app: typer.Typer) -> None:
    """Add ``evaluate``, ``leaderboard`` and ``compare`` to the CLI."""
    app.command("evaluate")(evaluate)
    app.command("leaderboard")(leaderboard)
    app.command("compare")(compare)
