"""Compare runs: a leaderboard table over run folders, and a paired test of two runs on the same ids."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.explanations import merge_paired_explanations
from rwpost.evaluate.log import (
    METRIC_TITLES,
    Coverage,
    Interval,
    LogPart,
    Policy,
    RunManifest,
    RunMetrics,
    ScoredSample,
    read_log,
)
from rwpost.evaluate.metrics import HEADLINE, VIEWS, check_policy, paired_repeats, spread
from rwpost.evaluate.plots import cost_plot
from rwpost.evaluate.report import coverage_cell, policy_title
from rwpost.io import iter_jsonl, validation_problem, write_json, write_jsonl, write_text
from rwpost.labels import Label
from rwpost.markdown import markdown_table


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """Run folders (those with a metrics.json) given directly or found below the given folders; a run
    folder given directly counts with the runs below it (a run written with --out at a parent folder
    never hides them)."""
    runs: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            runs.extend(sorted(m.parent for m in p.rglob("metrics.json")))
        else:
            raise ConfigError(f"{p}: not a run folder (no metrics.json) and not a folder of runs")
    if not runs:
        raise ConfigError(f"no runs (metrics.json) under {', '.join(map(str, paths))}")
    return list(dict.fromkeys(runs))


class LeaderboardRow(LogPart):
    """One run's line of the leaderboard: system, setting, data, headline metrics with intervals, cost."""

    run: str
    system: str
    detector: str
    setting: str
    view: str | None = None
    n: int = 0
    failures: Policy = "wrong"
    coverage: Coverage | None = None
    macro_classes: list[str] | None = None
    weighted_f1: float | None = None
    accuracy: float | None = None
    weighted_recall: float | None = None
    weighted_precision: float | None = None
    macro_f1: float | None = None
    repeats: int = 1
    sd: dict[str, float] | None = None
    repeat_values: dict[str, list[float]] | None = None
    ci95: dict[str, Interval] | None = None
    roc_auc_ovr: float | None = None
    ece: float | None = None
    flagged: int = 0
    cost_usd: float | None = None
    cost_per_sample_usd: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    data_sha256: str | None = None
    data: str | None = None
    """What the run was scored on, in short: a benchmark and split, an RW-Post version's subset and split, or
    the data file's name (a column of the table when the runs differ in it)."""
    code_version: str | None = None
    options: dict[str, Any] | None = None
    """The detector's options as resolved (the manifest's ``detector_config``; of repeat 0 when repeated)."""
    seed: int | None = None
    batch_api: bool = False
    """Asked through the provider's Batch API (its calls priced at the batch rate)."""
    distinct: str | None = None
    """What tells this run from another of the same system name in the same leaderboard: the options (or
    seed) they differ in, else the run folder (:func:`leaderboard`)."""

    @property
    def shown(self) -> str:
        """The system as a table names it: with :attr:`distinct` when another row has the same name."""
        return f"{self.system} ({self.distinct})" if self.distinct else self.system

    def cost_cell(self) -> str:
        """Cost per sample, marked when the Batch API priced it."""
        if self.cost_per_sample_usd is None:
            return "-"
        return f"{self.cost_per_sample_usd:.5f}" + (" (Batch API)" if self.batch_api else "")

    def cell(self, key: str) -> str:
        """A headline metric, ``mean ± sd`` for a repeated run."""
        value = getattr(self, key)
        if value is None:
            return "-"
        sd = (self.sd or {}).get(key)
        return f"{value:.3f}" + (f" ± {sd:.3f}" if sd is not None else "")


def leaderboard_row(run_dir: Path) -> LeaderboardRow:
    """One run's line, from its metrics.json and manifest.json."""
    metrics = read_log(run_dir / "metrics.json", RunMetrics)
    manifest_path = run_dir / "manifest.json"
    manifest = read_log(manifest_path, RunManifest) if manifest_path.exists() else None
    view = metrics.primary()
    repeats = metrics.repeats
    headline = repeats.headline if repeats else {}
    return LeaderboardRow(
        run=str(run_dir),
        system=metrics.system,
        detector=metrics.detector,
        setting=metrics.setting,
        view=view.title if view else metrics.primary_view,
        n=view.n if view else 0,
        failures=metrics.failures,
        coverage=Coverage(answered=metrics.coverage.answered, total=metrics.coverage.total),
        macro_classes=view.macro_classes if view else None,
        **metrics.headline(),
        repeats=repeats.n if repeats else 1,
        sd={k: s.std for k, s in headline.items()} or None,
        repeat_values={k: s.values for k, s in headline.items()} or None,
        ci95=view.ci95 if view else None,
        roc_auc_ovr=metrics.roc_auc_ovr,
        ece=metrics.ece,
        flagged=metrics.audit.flagged,
        cost_usd=metrics.ledger.cost_usd,
        cost_per_sample_usd=metrics.ledger.per_sample.cost_usd,
        tokens_in=metrics.ledger.tokens_in,
        tokens_out=metrics.ledger.tokens_out,
        data_sha256=manifest.data.ids_sha256 if manifest else None,
        data=data_name(manifest) if manifest else None,
        code_version=manifest.code_version if manifest else None,
        options=_options(manifest),
        seed=manifest.seed if manifest else None,
        batch_api=bool(manifest and manifest.batch_api),
    )


def _options(manifest: RunManifest | None) -> dict[str, Any] | None:
    if manifest is None:
        return None
    config = manifest.detector_config
    return (config[0] if config else {}) if isinstance(config, list) else config


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def tell_apart(rows: Sequence[LeaderboardRow]) -> None:
    """Set :attr:`LeaderboardRow.distinct` of rows that share a system name: the options (and seed) whose
    values differ between them, ``key=value``; the run folder when none differ (the same options on other
    data, or a run without a manifest)."""
    groups: dict[str, list[LeaderboardRow]] = {}
    for r in rows:
        groups.setdefault(r.system, []).append(r)
    for same in groups.values():
        if len(same) < 2:
            continue
        facts = [{**(r.options or {}), "seed": r.seed} for r in same]
        keys = sorted({k for f in facts for k in f})
        differ = [k for k in keys if len({_short(f.get(k), 10**6) for f in facts}) > 1]
        for r, f in zip(same, facts, strict=True):
            told = ", ".join(f"{k}={_short(f.get(k))}" for k in differ)
            r.distinct = told if differ and r.options is not None else f"run {r.run}"


def data_name(manifest: RunManifest) -> str | None:
    """A short name of a run's data (:attr:`LeaderboardRow.data`)."""
    data = manifest.data
    if data.benchmark:
        return f"{data.benchmark}/{data.split}" if data.split else data.benchmark
    if data.version:
        return f"RW-Post {data.version} " + "/".join(x for x in (data.subset, data.split) if x)
    return Path(data.path).name if data.path else None


def leaderboard(paths: Sequence[str | Path], metric: str = "macro_f1") -> list[LeaderboardRow]:
    """Every run's row, best ``metric`` first (of a repeated run: its mean over the repeats)."""
    rows = [leaderboard_row(r) for r in find_runs(paths)]
    tell_apart(rows)
    return sorted(rows, key=lambda r: (getattr(r, metric) is None, -(getattr(r, metric) or 0.0)))


def leaderboard_markdown(rows: Sequence[LeaderboardRow]) -> str:
    """The leaderboard as a Markdown table (repeated runs: mean ± sd, every repeat below); a note when
    the runs were scored on different data or under different failure policies."""
    policies = sorted({r.failures for r in rows})
    by_data = len({r.data for r in rows}) > 1  # one leaderboard over several datasets: say which row is which
    lines = [
        f"Scores {'; '.join(policy_title(p) for p in policies)}. "
        "Coverage is answered/total; (!) marks a run below 100 %. Flagged: predictions that cite a blocked "
        "fact-check domain.",
        "",
        *markdown_table(
            [
                "system",
                *(["data"] if by_data else []),
                "setting",
                "view",
                "n",
                "failures",
                "coverage",
                *(METRIC_TITLES[k] for k in HEADLINE),
                "flagged",
                "cost/sample $",
            ],
            (
                [
                    r.shown,
                    *([r.data or "-"] if by_data else []),
                    r.setting,
                    r.view,
                    r.n,
                    r.failures,
                    coverage_cell(r.coverage),
                    *(r.cell(k) for k in HEADLINE),
                    r.flagged,
                    r.cost_cell(),
                ]
                for r in rows
            ),
        ),
    ]
    repeated = [r for r in rows if r.repeat_values]
    if repeated:
        lines += ["", "Repeated runs (ranked by the mean), every repeat:", ""]
        for r in repeated:
            values = "; ".join(
                f"{METRIC_TITLES[k]} " + ", ".join(f"{v:.3f}" for v in r.repeat_values[k])
                for k in HEADLINE
                if r.repeat_values and k in r.repeat_values
            )
            lines.append(f"- {r.shown} ({r.repeats} repeats): {values}")
    macro = {tuple(r.macro_classes or ()) for r in rows}
    if macro:
        lines += ["", "Macro F1 averages over: " + " | ".join(", ".join(m) for m in sorted(macro)) + "."]
    for note in leaderboard_notes(rows):
        lines += ["", note]
    return "\n".join(lines) + "\n"


def leaderboard_notes(rows: Sequence[LeaderboardRow]) -> list[str]:
    """What a reader must know before ranking these runs: scored on different samples or policies, some
    asked through the Batch API, rows of one system name told apart."""
    notes = []
    if any(r.batch_api for r in rows):
        notes.append(
            "Note: a cost marked (Batch API) was asked through the provider's Batch API (--batch-api) and "
            "priced at its rate."
        )
    if any(r.distinct for r in rows):
        notes.append(
            "Note: runs of the same system name are told apart by the options they differ in (or by their "
            "folder)."
        )
    if len({r.data_sha256 for r in rows}) > 1:
        notes.append("Note: these runs were scored on different sample sets; compare with care.")
    if len({r.failures for r in rows}) > 1:
        notes.append("Note: these runs were scored under different failure policies; compare with care.")
    return notes


LEADERBOARD_FILES = (
    "leaderboard.json",
    "leaderboard.md",
    "cost_vs_f1.png",
    "explanations.jsonl",
    "paper.json",
)
"""What :func:`write_leaderboard` writes into its folder."""


def run_files(paths: Sequence[str | Path]) -> list[Path]:
    """Every file of the runs a leaderboard or a comparison reads (what its outputs must never replace)."""
    return [f for run in find_runs(paths) for f in sorted(run.iterdir()) if f.is_file()]


def write_leaderboard(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    explanations: bool = True,
    plot: bool = True,
    recipe: Any = None,
    set_aside: Sequence[tuple[str, str]] = (),
) -> list[LeaderboardRow]:
    """leaderboard.json, leaderboard.md, cost_vs_f1.png (with ``plot``, when some run cost anything) and the
    merged paired explanations in ``out_dir``; with a ``recipe``, the paper's figures beside ours too
    (:func:`paper_section`). ``set_aside``: ``(run, reason)`` of runs that could not run (a detector that
    cannot train on a split of one label), listed after the table."""
    out = Path(out_dir)
    rows = leaderboard(paths)
    write_json(out / "leaderboard.json", [r.dump() for r in rows])
    aside = (
        "".join(
            ["\n## Runs set aside\n\n| run | reason |\n|---|---|\n"]
            + [f"| {run} | {reason.replace('|', '/')} |\n" for run, reason in set_aside]
        )
        if set_aside
        else ""
    )
    write_text(out / "leaderboard.md", leaderboard_markdown(rows) + aside + paper_section(rows, recipe, out))
    if not (plot and cost_plot(rows, out / "cost_vs_f1.png")):  # none when nothing cost anything
        (out / "cost_vs_f1.png").unlink(missing_ok=True)  # an earlier board's figure would show other rows
    if explanations:
        found = [r.run for r in rows if (Path(r.run) / "explanations.jsonl").exists()]
        runs = [[row for _, row in iter_jsonl(Path(run) / "explanations.jsonl")] for run in found]
        write_jsonl(out / "explanations.jsonl", merge_paired_explanations(runs, found))
    return rows


def paper_section(rows: Sequence[LeaderboardRow], recipe: Any, out: Path) -> str:
    """A recipe run's paper column: the recipe's figures beside these runs' scores, with the difference
    and our interval (:func:`rwpost.evaluate.recipes.beside_paper`), as Markdown after the leaderboard and
    as ``paper.json``; nothing without a recipe."""
    (out / "paper.json").unlink(missing_ok=True)  # an earlier recipe's figures would not match these rows
    if recipe is None:
        return ""
    from rwpost.evaluate.recipes import beside_paper

    lines, records = beside_paper([r.run for r in rows], recipe)
    write_json(out / "paper.json", records)
    return "\n" + "\n".join(lines) + "\n"


def _scored(run_dir: Path) -> dict[str, ScoredSample]:
    """A run's scored.jsonl by id; a bad line, a duplicate id or an uneven repeat count names the line."""
    path = run_dir / "scored.jsonl"
    if not path.exists():
        raise ConfigError(f"{run_dir}: no scored.jsonl (not a finished run folder)")
    rows: dict[str, ScoredSample] = {}
    expected: int | None = None  # the repeat count of the first line
    for line, data in iter_jsonl(path):
        try:
            row = ScoredSample.model_validate(data)
        except ValidationError as exc:
            message, where = validation_problem(exc)
            raise RecordError(message, source=str(path), line=line, field=where) from exc
        if row.id in rows:
            raise RecordError("duplicate id", source=str(path), line=line, record_id=row.id)
        repeats = len(row.predicted_repeats or [None])
        expected = repeats if expected is None else expected
        if repeats != expected:
            problem = f"{repeats} repeats, the lines above have {expected}"
            raise RecordError(problem, source=str(path), line=line, field="predicted_repeats")
        rows[row.id] = row
    return rows


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    failures: str | None = None,
) -> dict[str, Any]:
    """Run A vs run B on their shared ids, in every view: a paired bootstrap of the difference of every
    headline metric and McNemar's test beside accuracy. Repeated runs are paired over the repeats
    (repeat i of A with repeat i of B, or with B's single run): A, B, the difference, its interval and
    p-value are of the mean over the pairs (McNemar's test, one answer per sample, is left out with the
    reason); ``repeats`` holds every pair's values and their sd. ``failures`` defaults to run A's policy."""
    a, b = _scored(Path(run_a)), _scored(Path(run_b))
    policy = check_policy(failures) if failures else _policy(Path(run_a))
    shared = sorted(set(a) & set(b))
    files = f"{Path(run_a) / 'scored.jsonl'} and {Path(run_b) / 'scored.jsonl'}"
    if not shared:
        raise ConfigError(f"{files} share no sample ids")
    conflicts = [i for i in shared if a[i].gold != b[i].gold]
    if conflicts:
        raise ConfigError(f"{files} disagree on gold labels for {len(conflicts)} ids, e.g. {conflicts[0]}")

    def repeats(rows: dict[str, ScoredSample]) -> list[list[Label | None]]:
        n = len(rows[shared[0]].predicted_repeats or [None])
        return [[(rows[i].predicted_repeats or [rows[i].predicted])[r] for i in shared] for r in range(n)]

    gold = [a[i].gold for i in shared]
    reps_a, reps_b = repeats(a), repeats(b)
    pairs = max(len(reps_a), len(reps_b))
    views: dict[str, Any] = {}
    for name, view in VIEWS.items():
        result = paired_repeats(
            gold, reps_a, reps_b, view, n_resamples=n_resamples, seed=seed, failures=policy
        )
        if not result.get("metrics"):
            continue
        if pairs > 1:  # every pair's own scores, beside the mean the interval is of
            per_repeat = [
                paired_repeats(
                    gold,
                    [reps_a[min(r, len(reps_a) - 1)]],
                    [reps_b[min(r, len(reps_b) - 1)]],
                    view,
                    n_resamples=0,
                    failures=policy,
                )
                for r in range(pairs)
            ]
            for key, m in result["metrics"].items():
                m["repeats"] = {
                    part: spread([c["metrics"][key][part] for c in per_repeat if c.get("metrics")])
                    for part in ("a", "b", "difference")
                }
            result["repeat_pairs"] = pairs
        views[name] = result
    return {
        "a": str(run_a),
        "b": str(run_b),
        "notes": compare_notes(Path(run_a), Path(run_b)),
        "failures": policy,
        "repeats": {"a": len(reps_a), "b": len(reps_b)},
        "shared_ids": len(shared),
        "only_in_a": len(set(a) - set(b)),
        "only_in_b": len(set(b) - set(a)),
        "views": views,
    }


def compare_notes(run_a: Path, run_b: Path) -> list[str]:
    """What a reader of a comparison must know: the two runs are of different input cells (they saw
    different inputs, so the difference is not the detectors' alone)."""
    cells = [read_log(r / "metrics.json", RunMetrics).setting if (r / "metrics.json").exists() else None
             for r in (run_a, run_b)]  # fmt: skip
    if None in cells or cells[0] == cells[1]:
        return []
    return [
        f"Note: the runs are of different cells (A {cells[0]}, B {cells[1]}): they saw different inputs, "
        "so the difference is not the detectors' alone."
    ]


def _policy(run_dir: Path) -> str:
    """The failure policy a run was scored under (its metrics.json says; ``wrong`` without one)."""
    path = run_dir / "metrics.json"
    return read_log(path, RunMetrics).failures if path.exists() else "wrong"
