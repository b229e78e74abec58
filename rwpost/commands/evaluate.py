"""Commands that score detectors: evaluate one run, a leaderboard over runs, a paired comparison."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rwpost.commands import LazyConsole, bundled_sample
from rwpost.commands.tables import print_table
from rwpost.errors import ConfigError, interrupted_exit, interrupted_line, sigterm_interrupts

if TYPE_CHECKING:
    from rwpost.evaluate.log import RunMetrics

console = LazyConsole(stderr=True)


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

    from rwpost.evaluate.ledger import read_price_table
    from rwpost.io import read_text

    if not path.exists():
        raise ConfigError(f"price table not found: {path}")
    text = read_text(path)
    try:  # JSON first: YAML refuses valid JSON indented with tabs
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        if not text.lstrip().startswith(("{", "[")):
            try:
                data = yaml.safe_load(text)
                problem = ""
            except yaml.YAMLError as yaml_exc:
                mark = getattr(yaml_exc, "problem_mark", None)
                problem = (str(yaml_exc).splitlines() or [type(yaml_exc).__name__])[0]
                problem += f" at line {mark.line + 1}" if mark is not None else ""
        if problem:
            raise ConfigError(f"{path}: not a readable YAML or JSON price table ({problem})") from None
    if isinstance(data, dict) and "prices" in data:
        data = data["prices"]
    return read_price_table(data, str(path))


def _stage_defaults(**given: Any) -> dict[str, Any]:
    """The options left unset (None) at the evaluate stage's defaults, so a command and the pipeline agree."""
    from rwpost.evaluate.shards import DetectorParams, EvaluateSettings

    fields = {**DetectorParams.model_fields, **EvaluateSettings.model_fields}
    return {k: fields[k].get_default(call_default_factory=True) if v is None else v for k, v in given.items()}


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
        None, "--predictions", help="Score another system's output: a file or a folder (see --format)."
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
        help="Evidence-k ablation: k gold items per claim in each gold-evidence cell (needs one).",
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
        None, "--repeats", min=1, help="Runs of a stochastic detector (seed+i each; default 1)."
    ),
    seed: int = typer.Option(None, "--seed", help="Seed of splits, detectors and bootstrap (default 0)."),
    out: Path = typer.Option(
        ..., "--out", help="Run folder (one run), or the folder of one run per detector x cell (resumable)."
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
        help="local | ray (each run a Ray task with a completion marker; pip install 'rwpost[ray]'). "
        "Slurm arrays: the evaluate stage with executor.name slurm.",
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
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local model folders only, never a download
    from rwpost.evaluate.contract import EvidenceK, Seed, check_option
    from rwpost.evaluate.data import authors_denominators, load_eval_data
    from rwpost.evaluate.encoders import lazy_encoder
    from rwpost.evaluate.leaderboard import write_leaderboard
    from rwpost.evaluate.plan import DetectorEntry, run_plan
    from rwpost.evaluate.task import GRID

    for option, value in (("--seed", seed), ("--evidence-seed", evidence_seed)):
        if value is not None:
            check_option(option, value, Seed)
    for k in ks or []:
        check_option("--k", k, EvidenceK)

    o = _stage_defaults(
        settings=list(setting or []) + (list(GRID) if grid else []) or None,
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
    )
    data = data if data is not None else _gold_of(predictions, format)  # issue 37: gold in the predictions
    chosen = _recipe(
        recipe, data, o, detector, predictions, given={"settings": setting or grid, "failures": failures}
    )
    config = _parse_sets(sets)
    if model is not None:
        if "model" in config and str(config["model"]) != model:
            raise ConfigError(f"--model {model!r} and --set model={config['model']!r} differ: give one")
        config["model"] = model
    detectors = list(detector or [])
    each = {"repeats": o["repeats"], "batch_size": o["batch_size"]}
    entries: list[DetectorEntry] = []
    if chosen is not None:
        entries = chosen.entries(config, **each)
    elif predictions is not None:
        if detectors not in ([], ["predictions"]):
            raise ConfigError(
                "--predictions scores a file: leave out --detector or give --detector predictions"
            )
        from rwpost.evaluate.formats import detect_format, read_sets

        options = {"id_field": id_field, "label_field": label_field, "label_map": label_map}
        options = {k: v for k, v in options.items() if v is not None}
        if id_map is not None:
            options["id_map"] = str(id_map)
        chosen_format = format or detect_format(predictions, generic=bool(options.keys() - {"id_map"}))
        base = {**config, "path": str(predictions), "strict": strict}
        # a predictions file's run is named by its file or set, never "predictions" (every file's name)
        if chosen_format == "flat":
            entries.append(DetectorEntry(name="predictions", label=predictions.stem, config=base, **each))
        else:
            for found in read_sets(predictions, chosen_format, **options):
                own = {**base, "format": chosen_format, "select": found.name, **options}
                cells = [found.setting] if found.setting else None  # the files fix the cell
                entries.append(
                    DetectorEntry(
                        name="predictions", label=found.name, config=own, settings=cells, k=[], **each
                    )
                )
    else:
        if not detectors:
            raise ConfigError("give --detector NAME or --predictions FILE")
        entries = [DetectorEntry(name=d, config=dict(config), **each) for d in detectors]
    loaded = load_eval_data(data, train=train, train_fraction=train_fraction, seed=o["seed"])
    if loaded.info.get("excluded_unlabelled"):
        console.print(
            f"[yellow]{loaded.info['excluded_unlabelled']} samples have no RW-Post label "
            "(excluded ratings such as satire) and are not scored[/]"
        )
    for option, value, allowed in (
        ("--evidence-sampler", o["evidence_sampler"], ("rwpost", "authors")),
        ("--denominators", o["denominators"], ("ours", "authors")),
    ):
        if value not in allowed:
            raise ConfigError(f"{option} {value!r}: give {' or '.join(allowed)}")
    if image_root is None:
        image_root = loaded.media_root
    if o["denominators"] == "authors":
        loaded = authors_denominators(loaded, image_root)
        left_out = loaded.info["left_out"]
        console.print(
            f"authors' denominators: {left_out} of {left_out + len(loaded.test)} "
            "claims left out of every cell (no post image, or it does not open: their loader's rule)"
        )
    from pydantic import ValidationError

    from rwpost.evaluate.shards import EvaluateSettings, plan_for
    from rwpost.io import validation_problem

    fields = set(EvaluateSettings.model_fields) - {"detectors", "recipe"}
    given = {k: v for k, v in o.items() if k in fields}
    given |= {"blocked_domains": blocked_domains, "image_root": image_root, "prices": _read_prices(prices)}
    try:  # the one settings model of the stage, validated once
        settings = EvaluateSettings.model_validate(given)
    except ValidationError as exc:
        message, where = validation_problem(exc)
        raise ConfigError(f"--{(where or 'options').split('.')[0].replace('_', '-')}: {message}") from None
    plan = plan_for(settings, entries, out=out, name=name, single_in_out=True)
    if select_tools:
        from rwpost.evaluate.select import select_for_plan

        path, chosen = select_for_plan(plan, loaded, out)
        line = f"toolset {', '.join(chosen)} in {path}; load it with --set toolset={path}"
        console.print(line, highlight=False, soft_wrap=True)
        return
    from rwpost.executors import ExecutorParams, ShardStore

    if executor not in ("local", "ray"):
        raise ConfigError(
            f"--executor {executor!r}: give local or ray (a Slurm job array: set executor.name: slurm "
            "in params.yaml and run the evaluate stage)"
        )
    runner = ExecutorParams(name=executor, gpus=gpus)
    try:
        with sigterm_interrupts():
            done = run_plan(
                plan,
                loaded,
                executor=runner,
                store=ShardStore(runner.work_dir(out)),
                encode=lazy_encoder() if o["key_points"] else None,
                progress=progress,
                overwrite=overwrite,
                plots=o["plots"],
                done=None if as_json else lambda planned, metrics: _summary(metrics, planned.out),
            )
    except KeyboardInterrupt as exc:
        console.print(interrupted_line("evaluate", exc, out), highlight=False, soft_wrap=True)
        raise typer.Exit(interrupted_exit(exc)) from None
    if len(plan) > 1 or chosen is not None:
        write_leaderboard([p.out for p in plan], out / "leaderboard", plot=o["plots"], recipe=chosen)
        console.print(f"{len(plan)} runs; leaderboard in {out / 'leaderboard'}")
    if chosen is not None and not as_json:
        from rwpost.evaluate.recipes import beside_paper

        console.print(
            "\n".join(beside_paper([p.out for p in plan], chosen)[0]),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if as_json:
        typer.echo(json.dumps(done[-1][1].dump(), indent=2, default=str))


def _gold_of(predictions: Path | None, format: str | None) -> Path:
    """The ``--data`` of a predictions folder that carries its own gold; else the one-line error."""
    from rwpost.evaluate.formats import gold_of_predictions

    found = gold_of_predictions(predictions, format) if predictions is not None else None
    if found is None:
        raise ConfigError("give --data (the samples to score)")
    return Path(found)


def _recipe(name: str | None, data: Path, o: dict[str, Any], detector, predictions, given) -> Any:
    """The ``--recipe`` (None without one), its cells for ``data``'s dataset and its failure policy set in
    ``o`` where the command line gives none."""
    if name is None:
        return None
    from rwpost.evaluate.datasets import parse_data_spec
    from rwpost.evaluate.recipes import RWPOST, load_recipe

    if detector or predictions is not None:
        raise ConfigError("--recipe names its detectors: leave out --detector and --predictions")
    chosen = load_recipe(name)
    spec = parse_data_spec(data)
    if not given["settings"]:
        o["settings"] = chosen.cells(spec.adapter.name if spec else RWPOST)
    if given["failures"] is None:
        o["failures"] = chosen.failures
    return chosen


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
            r.system,
            *([r.data or "-"] if by_data else []),
            r.setting,
            str(r.view),
            str(r.n),
            coverage_cell(r.coverage),
            str(r.repeats),
            *(r.cell(k) for k in HEADLINE),
            str(r.flagged),
            "-" if r.cost_usd is None else f"{r.cost_usd:.4f}",
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


def register(app: typer.Typer) -> None:
    """Add ``evaluate``, ``leaderboard`` and ``compare`` to the CLI."""
    app.command("evaluate")(evaluate)
    app.command("leaderboard")(leaderboard)
    app.command("compare")(compare)
