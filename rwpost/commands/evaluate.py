"""Commands that score detectors: evaluate one run, a leaderboard over runs, a paired comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rwpost.commands import LazyConsole, bundled_sample
from rwpost.commands.tables import print_table
from rwpost.errors import ConfigError, interrupted_exit, interrupted_line, sigterm_interrupts

if TYPE_CHECKING:
    from rwpost.evaluate.log import RunMetrics

console = LazyConsole(stderr=True)


def evaluate(
    data: Path | None = typer.Option(
        None,
        "--data",
        help="Samples to score: released JSONL, a Parquet split, or a benchmark's folder as "
        "NAME[/SPLIT]:FOLDER (mmfakebench:~/MMFakeBench_test, remmdbench:~/ReMMDBench, labels:FILE). "
        "Without it, --predictions that carry their gold (a T2-Agent port run) are scored against it.",
        callback=bundled_sample,
    ),
    detector: list[str] = typer.Option(
        None,
        "--detector",
        help="Detector name (majority, stratified, category-prior, embedding, vlm, local-vlm, agentfact, "
        "t2agent, agentm3d, factguard, predictions), an entry point of group rwpost.detectors, or "
        "module:Class (repeatable).",
    ),
    predictions: Path = typer.Option(
        None,
        "--predictions",
        help="Score another system's output: a file or a folder (see --format). A flat JSONL/CSV file "
        "has id (or news_url), label, and optionally probabilities (or prob_<Label>), explanation, "
        "evidence_urls.",
    ),
    format: str = typer.Option(
        None,
        "--format",
        help="flat | agentfact | agentfact-baselines | defame | generic | mmdagent | t2agent-port "
        "(detected).",
    ),
    id_field: str = typer.Option(None, "--id-field", help="Generic format: the id or news_url field."),
    label_field: str = typer.Option(None, "--label-field", help="Generic format: the label's dotted path."),
    label_map: str = typer.Option(None, "--label-map", help="Spelling=Label,... or a file of them."),
    id_map: Path = typer.Option(
        None, "--id-map", help="DEFAME, MMD-Agent: sample_index -> id or news_url (JSON/CSV), or position."
    ),
    setting: list[str] = typer.Option(
        None,
        "--setting",
        help="Input cell, repeatable: T, T+I, T+E, T+I+E, T+I+W (open web); closed-book, gold-evidence and "
        "open-web are read as T+I, T+I+E, T+I+W (default: the evaluate stage's, T+I).",
    ),
    grid: bool = typer.Option(False, "--grid", help="Every cell of the paper's grid: T, T+I, T+E, T+I+E."),
    ks: list[int] = typer.Option(
        None,
        "--k",
        min=1,
        help="Evidence-k ablation: k gold items per claim in each gold-evidence cell (needs one; a k above "
        "every sample's evidence is refused).",
    ),
    evidence_sampler: str = typer.Option(
        None,
        "--evidence-sampler",
        help="Evidence-k draw: rwpost (per claim id) or authors (their baseline runner's, item for item, by "
        "position in --data).",
    ),
    denominators: str = typer.Option(
        None,
        "--denominators",
        help="ours: every labelled claim; authors: only claims whose image opens, in every cell (as their "
        "loader does).",
    ),
    evidence_seed: int = typer.Option(
        None, "--evidence-seed", help="Seed of the evidence-k subsets (default 42)."
    ),
    allow_missing_images: bool = typer.Option(
        None, "--allow-missing-images", help="Image cells: fail samples whose image is missing, not the run."
    ),
    image_root: Path = typer.Option(
        None, "--image-root", help="Folder of the samples' relative image paths (released JSONL)."
    ),
    train: Path = typer.Option(
        None, "--train", help="Labelled training samples (e.g. the dev split).", callback=bundled_sample
    ),
    train_fraction: float = typer.Option(
        None, "--train-fraction", help="Train on this seeded part of --data."
    ),
    repeats: int = typer.Option(
        None,
        "--repeats",
        min=1,
        help="Runs of a stochastic detector (seed+i each; default 1). A deterministic one (majority, "
        "category-prior, embedding, a predictions file) runs once, and its report says so.",
    ),
    seed: int = typer.Option(None, "--seed", help="Seed of splits, detectors and bootstrap (default 0)."),
    out: Path = typer.Option(
        None,
        "--out",
        help="Run folder (one run), or the folder of one run per detector x cell (resumable); required "
        "but with --help-options.",
    ),
    sets: list[str] = typer.Option(None, "--set", help="Detector option key=value (repeatable)."),
    model: str = typer.Option(
        None,
        "--model",
        help="The detector's model: same as --set model=... (vlm, agentfact: the model name; local-vlm: "
        "the model folder).",
    ),
    batch_size: int = typer.Option(
        None, "--batch-size", min=1, help="Samples per detector call (local models, embeddings; default 16)."
    ),
    bootstrap: int = typer.Option(
        None, "--bootstrap", min=0, help="Bootstrap resamples for 95% intervals (default 1000)."
    ),
    blocked_domains: Path = typer.Option(
        None,
        "--blocked-domains",
        help="More blocked domains, on top of the built-in fact-checkers and the authors' packaged list.",
    ),
    prices: Path = typer.Option(None, "--prices", help="YAML/JSON price table: model -> input_per_mtok..."),
    name: str = typer.Option(None, "--name", help="System name in reports (default detector/cell)."),
    strict: bool = typer.Option(False, "--strict", help="Predictions file: any problem is an error."),
    key_points: bool = typer.Option(None, "--key-points/--no-key-points", help="Score key-point coverage."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars."),
    plots: bool = typer.Option(
        None, "--plots/--no-plots", help="Draw each run's PNG figures into plots/ (default: off)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics JSON on stdout."),
    failures: str = typer.Option(
        None,
        "--failures",
        help="Failed answers: wrong (all samples; default) | exclude (answered only) | class.",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Start afresh in --out (a changed input is otherwise refused)."
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="local | ray (each run a Ray task with a completion marker; pip install 'rwpost[ray]') | "
        "slurm (writes a job array, one task per run, and its merge job under <out>.shards/slurm: "
        "submit it with the bash line printed; nothing runs here).",
    ),
    gpus: float = typer.Option(
        0,
        "--gpus",
        min=0,
        help="--executor ray: GPUs each run asks for; a local model's: each actor holding it (0: one per "
        "actor where there are GPUs).",
    ),
    batch_api: bool = typer.Option(
        False,
        "--batch-api",
        help="Ask API models (vlm) through the provider's Batch API first (about half price; resumable).",
    ),
    batch_poll_s: float = typer.Option(
        None, "--batch-poll-s", min=0.001, help="Seconds between batch polls."
    ),
    select_tools: bool = typer.Option(
        False,
        "--select-tools",
        help="A detector with a tool set (t2agent): choose its toolset on the labelled --data (T2Agent's "
        "Algorithm 2) and write OUT/toolset.json; a later run loads it with --set toolset=OUT/toolset.json.",
    ),
    recipe: str = typer.Option(
        None,
        "--recipe",
        help="A paper table's runs: rwpost-table3 | rwpost-table5 (or a recipe file): its detectors, cells "
        "and failure policy, with the paper's figures beside ours in the leaderboard; --set/--model "
        "substitute options in every row.",
    ),
    help_options: bool = typer.Option(
        False,
        "--help-options",
        help="List the --detector's options (name, type, default, description) and exit.",
    ),
) -> None:
    """Score detectors on RW-Post samples in one or more input cells; writes metrics.json, report.md (with
    --plots, PNG figures) and a resumable log per run, and a leaderboard when there are several runs. Unset
    options take the evaluate stage's defaults (params.yaml's evaluate section), and the runs are planned as
    the stage plans its own.

    Example: rwpost evaluate --data data/sample/released/rwpost_dev_main.head.jsonl
    --detector embedding --train-fraction 0.5 --seed 0 --out reports/evaluate/embedding

    The paper's grid: add --grid --k 1 --k 3 (one run per detector x cell under --out).

    A local vision-language model: --detector local-vlm --model /path/to/Qwen2-VL-2B-Instruct.
    """
    from rwpost.evaluate import shards
    from rwpost.evaluate.task import GRID

    if help_options:
        from rwpost.evaluate.registry import detector_help

        if len(detector or []) != 1:
            raise ConfigError("--help-options lists one detector's options: give one --detector NAME")
        typer.echo(detector_help(detector[0]))
        return
    command = shards.command_settings(
        data=data,
        out=out,
        detectors=detector or [],
        predictions=predictions,
        format=format,
        reading={"id_field": id_field, "label_field": label_field, "label_map": label_map, "id_map": id_map},
        strict=strict,
        sets=sets or [],
        model=model,
        cells=list(setting or []) + (list(GRID) if grid else []),
        recipe=recipe,
        prices=prices,
        executor=executor,
        gpus=gpus,
        k=list(ks or []) or None,
        evidence_seed=evidence_seed,
        evidence_sampler=evidence_sampler,
        denominators=denominators,
        allow_missing_images=allow_missing_images,
        repeats=repeats,
        seed=seed,
        batch_size=batch_size,
        bootstrap=bootstrap,
        key_points=key_points,
        failures=failures,
        plots=plots,
        batch_api=batch_api or None,
        batch_poll_s=batch_poll_s,
        blocked_domains=blocked_domains,
        image_root=image_root,
        train=train,
        train_fraction=train_fraction,
        name=name,
        overwrite=overwrite,
        select_tools=select_tools,
        progress=progress,
    )
    try:
        with sigterm_interrupts():
            result = shards.evaluate_command(
                command,
                done=None if as_json else lambda planned, metrics: _summary(metrics, planned.out),
                note=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
                beside_paper=not as_json,
            )
    except KeyboardInterrupt as exc:
        console.print(interrupted_line("evaluate", exc, out), highlight=False, soft_wrap=True)
        raise typer.Exit(interrupted_exit(exc)) from None
    if as_json and result.done:
        typer.echo(json.dumps(result.done[-1][1].dump(), indent=2, default=str))


def _summary(log: RunMetrics, out: Path) -> None:
    """The run's scores on the terminal, from its typed ``metrics.json``."""
    from rwpost.evaluate.log import METRIC_TITLES, RunManifest, read_log
    from rwpost.evaluate.metrics import HEADLINE
    from rwpost.evaluate.report import coverage_cell, outage_notes

    repeats = log.repeats
    of = f", mean ± sd over {repeats.n} repeats" if repeats else ""
    rows = []
    for name, view in log.views.items():
        if view.n:
            spreads = repeats.views.get(name) if repeats else None
            if spreads:
                means = {k: s.mean for k, s in spreads.items()}
                cells = [_mean_sd(means, k, {k: s.std for k, s in spreads.items()}) for k in HEADLINE]
            else:
                cells = [_mean_sd(view.headline(), k, None) for k in HEADLINE]
            rows.append([name, str(view.n), coverage_cell(view.coverage), *cells])
    headers = ["view", "n", "coverage", *(METRIC_TITLES[k] for k in HEADLINE)]
    print_table(f"{log.system} (failures: {log.failures}{of})", headers, rows)
    if repeats:
        console.print(f"coverage and the report's details are of repeat 0 of {repeats.n}")
    if log.input_problems:
        console.print(
            f"[yellow]input problems: {log.input_problems} (details in {out / 'input_report.json'})[/]"
        )
    if log.audit.flagged:
        console.print(f"[yellow]{log.audit.flagged} predictions cite blocked fact-check domains[/]")
    for note in outage_notes(read_log(out / "manifest.json", RunManifest)):
        console.print(f"[yellow]{note}[/]")
    console.print(
        f"reports in {out} (report.md, metrics.json{', plots/' if (out / 'plots').is_dir() else ''})"
    )


def _mean_sd(values: dict[str, float | None], key: str, sd: dict[str, float] | None) -> str:
    """A metric, ``mean ± sd`` when it has a spread over repeats."""
    if values.get(key) is None:
        return "-"
    return f"{values[key]:.3f}" + (f" ± {sd[key]:.3f}" if sd and key in sd else "")


def leaderboard(
    runs: list[Path] = typer.Argument(..., help="Run folders, or folders containing run folders."),
    out: Path = typer.Option(
        None, "--out", help="Write leaderboard.json/.md, cost_vs_f1.png, explanations.jsonl."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a leaderboard already in --out."),
    recipe: str = typer.Option(
        None, "--recipe", help="Print (and with --out write) a recipe's paper figures beside these runs."
    ),
) -> None:
    """Aggregate evaluation runs into one table, best macro F1 first (repeated runs: by the mean).

    Example: rwpost leaderboard reports/evaluate --out reports/evaluate/leaderboard
    """
    from rwpost.evaluate.leaderboard import LEADERBOARD_FILES, leaderboard_notes, run_files, write_leaderboard
    from rwpost.evaluate.leaderboard import leaderboard as rows_of
    from rwpost.evaluate.log import METRIC_TITLES
    from rwpost.evaluate.metrics import HEADLINE
    from rwpost.evaluate.report import coverage_cell
    from rwpost.io import check_outputs

    if out:  # never over a run's own files (its explanations.jsonl), nor an earlier leaderboard unasked
        check_outputs([out / name for name in LEADERBOARD_FILES], run_files(runs), overwrite=overwrite)
    chosen = None
    if recipe is not None:
        from rwpost.evaluate.recipes import load_recipe

        chosen = load_recipe(recipe)
    rows = write_leaderboard(runs, out, recipe=chosen) if out else rows_of(runs)
    if as_json:
        typer.echo(json.dumps([r.dump() for r in rows], indent=2, default=str))
        return
    policies = ", ".join(sorted({r.failures for r in rows}))
    by_data = len({r.data for r in rows}) > 1
    headers = ["system", *(["data"] if by_data else []), "setting", "view", "n", "coverage", "repeats"]
    headers += [METRIC_TITLES[k] for k in HEADLINE]
    cells = [
        [
            r.shown,
            *([r.data or "-"] if by_data else []),
            r.setting,
            str(r.view),
            str(r.n),
            coverage_cell(r.coverage),
            str(r.repeats),
            *(r.cell(k) for k in HEADLINE),
            str(r.flagged),
            "-" if r.cost_usd is None else f"{r.cost_usd:.4f}" + (" (Batch API)" if r.batch_api else ""),
        ]
        for r in rows
    ]
    title = f"leaderboard (failures: {policies}; repeated runs: mean ± sd)"
    print_table(title, [*headers, "flagged", "cost $"], cells)
    console.print("flagged: predictions that cite a blocked fact-check domain", highlight=False)
    for note in leaderboard_notes(rows):
        console.print(f"[yellow]{note}[/]")
    if chosen is not None:
        from rwpost.evaluate.recipes import beside_paper

        text = "\n".join(beside_paper([r.run for r in rows], chosen)[0])
        from rich.console import Console

        Console().print(text, highlight=False, markup=False, soft_wrap=True)


def compare(
    run_a: Path = typer.Argument(..., help="First run folder."),
    run_b: Path = typer.Argument(..., help="Second run folder."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=1, help="Paired bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    failures: str = typer.Option(None, "--failures", help="wrong | exclude | class (default: run A's)."),
    out: Path = typer.Option(None, "--out", help="Write the comparison JSON here."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out file."),
) -> None:
    """Paired comparison of two runs on their shared ids: a paired bootstrap of every metric's
    difference, and McNemar's test beside accuracy (the metric it tests). Repeated runs are paired over
    their repeats: mean ± sd, with the interval and p-value of the mean difference.

    Example: rwpost compare reports/evaluate/main/embedding-T reports/evaluate/main/majority-T
    """
    from rwpost.evaluate.contract import Seed, check_option
    from rwpost.evaluate.leaderboard import compare_runs, run_files

    check_option("--seed", seed, Seed)
    from rwpost.evaluate.log import METRIC_TITLES
    from rwpost.evaluate.metrics import HEADLINE
    from rwpost.io import check_output, write_json

    if out:  # never over one of the two runs' files (their metrics.json), nor an earlier comparison unasked
        check_output(out, run_files([run_a, run_b]), overwrite=overwrite)
    result = compare_runs(run_a, run_b, n_resamples=bootstrap, seed=seed, failures=failures)
    if out:
        write_json(out, result)
    for name, v in result["views"].items():
        cov = v["coverage"]
        title = (
            f"{name}: {run_a} vs {run_b}, n {v['n']} (scored {v['n_scored']}), coverage "
            f"{'(fewest over repeats) ' if v.get('repeat_pairs') else ''}"
            f"A {cov['a']['answered']}/{cov['a']['total']} B {cov['b']['answered']}/{cov['b']['total']}, "
            f"failures: {result['failures']}"
        )
        table = []
        reps_note = ""
        for key in HEADLINE:
            m = v["metrics"][key]
            ci = m["difference_ci95"]
            reps = m.get("repeats")
            diff = f"{m['difference']:+.3f}" + (f" ± {reps['difference']['std']:.3f}" if reps else "")
            diff += f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
            mcnemar = m.get("mcnemar")
            if mcnemar and mcnemar["p_value"] is None:
                reps_note = f"McNemar {mcnemar['reason']}"
            test = (
                f"McNemar p {mcnemar['p_value']:.3g}"
                if mcnemar and mcnemar["p_value"] is not None
                else (f"bootstrap p {m['bootstrap_p']:.3g}" if m.get("bootstrap_p") is not None else "-")
            )
            a = f"{m['a']:.3f}" + (f" ± {reps['a']['std']:.3f}" if reps else "")
            b = f"{m['b']:.3f}" + (f" ± {reps['b']['std']:.3f}" if reps else "")
            table.append([METRIC_TITLES[key], a, b, diff, test])
        print_table(title, ["metric", "A", "B", "A-B [95% paired bootstrap CI]", "test"], table)
        if reps_note:
            console.print(reps_note, highlight=False, soft_wrap=True)
    console.print(
        f"shared ids {result['shared_ids']}, only in A {result['only_in_a']}, "
        f"only in B {result['only_in_b']}; "
        f"repeats A {result['repeats']['a']}, B {result['repeats']['b']}"
    )
    for note in result["notes"]:
        console.print(f"[yellow]{note}[/]", soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``evaluate``, ``leaderboard`` and ``compare`` to the CLI."""
    app.command("evaluate")(evaluate)
    app.command("leaderboard")(leaderboard)
    app.command("compare")(compare)
