"""``rwpost filter``: run the quality filters, show a funnel, try the watermark keyword matcher."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from rwpost.commands import LazyConsole
from rwpost.commands import stage_default as _stage_default
from rwpost.errors import ConfigError

console = LazyConsole()


def stage_default(name: str) -> str:
    return _stage_default("filter", name)


filter_app = typer.Typer(
    help="Quality filters (size, watermark, image necessity, near-duplicates) and their funnel.\n\n"
    "Example: rwpost filter run --params params.yaml; rwpost filter funnel",
    no_args_is_help=True,
)


def _same_inputs_or_refuse(out: Path, current: dict[str, str | None], inputs_file: Path) -> None:
    """Refuse to replace ``out``'s outputs when the run that wrote them read other input files (or says
    nothing of them)."""
    try:
        earlier = json.loads((out / inputs_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    if not isinstance(earlier, dict):
        raise ConfigError(
            f"{out}: holds filter outputs of a run that recorded no inputs; pass --overwrite to replace them"
        )
    changed = [name for name, digest in current.items() if earlier.get(name) != digest]
    if changed:
        raise ConfigError(
            f"{out}: holds the outputs of a run on other inputs ({', '.join(changed)} differ); "
            "pass --overwrite to replace them, or give another --out"
        )


def last_run_use(funnel_file: Path) -> list[dict[str, Any]]:
    """What the run that wrote ``funnel_file`` measured and took from the cache, per filter
    (``cache/last_run.json`` beside it); none when it is absent or unreadable."""
    from rwpost.errors import RecordError
    from rwpost.io import read_json

    path = funnel_file.parent / "cache" / "last_run.json"
    try:
        use = read_json(path) if path.is_file() else []
    except RecordError:
        return []
    return [u for u in use if isinstance(u, dict)] if isinstance(use, list) else []


def print_funnel(steps: list[dict[str, Any]], cache_use: Sequence[dict[str, Any]] = ()) -> None:
    """The funnel as a table: per step in order, in / removed / out, the reasons and, from ``cache_use``
    (the filters' ``last_run.json``), how many records the run measured and took from the cache."""
    from rich.table import Table

    use = {u.get("filter"): u for u in cache_use}
    table = Table("step", "in", "removed", "out", "why removed", "measured", "cached", title="funnel")
    for step in steps:
        reasons = ", ".join(f"{k} {v}" for k, v in (step.get("reasons") or {}).items())
        counts = use.get(step.get("filter"), {}) if step.get("filter") else {}
        table.add_row(
            step["step"],
            str(step["in"]),
            str(step["removed"]),
            str(step["out"]),
            reasons,
            str(counts.get("measured", "")),
            str(counts.get("from_cache", "")),
        )
    console.print(table)


@filter_app.command("run")
def run(
    tagged: Path = typer.Option(None, help="Tagged articles (JSONL).", show_default=stage_default("tagged")),
    extractions: Path = typer.Option(
        None, help="Extractions (JSONL).", show_default=stage_default("extractions")
    ),
    crawl: Path = typer.Option(
        None, help="Crawled articles (JSONL).", show_default=f"{stage_default('crawl')}/articles.jsonl"
    ),
    crawl_root: Path = typer.Option(
        None, help="Folder the crawl's image paths are relative to (default: the crawl file's folder)."
    ),
    out: Path = typer.Option(None, help="Output folder.", show_default=stage_default("out")),
    params: Path = typer.Option(None, help="params.yaml whose 'filter:' section sets thresholds."),
    as_json: bool = typer.Option(False, "--json", help="Print the funnel as JSON."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace outputs another run wrote from other input files."
    ),
) -> None:
    """Run the filters in order; write decisions, verdicts, funnel and the measurement cache.

    The same stage as `dvc repro` runs; the options here set its paths, --params the rest.

    Example: rwpost filter run --params params.yaml --out data/work/filter
    """
    from rwpost.filters.runner import INPUTS_FILE, inputs_of
    from rwpost.io import check_outputs
    from rwpost.stages import filter as stage
    from rwpost.stages.base import load_params

    raw = load_params(params) if params else {}
    settings = stage.Params.from_params(raw, str(params)) if "filter" in raw else stage.Params()
    given = {"tagged": tagged, "extractions": extractions, "out": out}
    if crawl is not None or crawl_root is not None:
        given["crawl"] = crawl_root or (crawl.parent if crawl else None)
    settings = settings.model_copy(update={k: v for k, v in given.items() if v is not None})
    crawl_file = crawl or (settings.crawl / "articles.jsonl" if settings.crawl else None)
    # a rerun into the same folder on the same input files is the documented way to try new thresholds (the
    # measurement cache makes it cheap), so its outputs are replaced; outputs another run wrote from other
    # inputs are replaced only with --overwrite; an output that is one of the inputs is always refused
    out = settings.out
    outputs = ["decisions.jsonl", "verdicts.jsonl", "rejects.jsonl", "funnel.json", "summary.json"]
    inputs = [settings.tagged, settings.extractions, crawl_file, params]
    check_outputs([out / name for name in outputs], [p for p in inputs if p is not None], overwrite=True)
    extractions = settings.extractions
    readable = settings.tagged.is_file() and extractions is not None and extractions.is_file()
    if readable and not overwrite and any((out / name).exists() for name in outputs):
        _same_inputs_or_refuse(out, inputs_of(settings.tagged, extractions, crawl_file), INPUTS_FILE)
    report = stage.run(settings, crawl_file=crawl_file, progress=not as_json)
    funnel = [step.row() for step in report.funnel]
    if as_json:
        totals = {k: report.counts[k] for k in ("input", "kept")}
        typer.echo(json.dumps({**totals, "funnel": funnel}, indent=2))
    else:
        print_funnel(funnel, last_run_use(out / "funnel.json"))
        console.print(
            f"{report.counts['input']} records -> {report.counts['kept']} kept; wrote {out}/decisions.jsonl"
        )


@filter_app.command("funnel")
def funnel(
    path: Path = typer.Argument(Path("data/work/filter/funnel.json"), help="A funnel.json."),
) -> None:
    """Show a funnel written by a previous run.

    Example: rwpost filter funnel data/work/filter/funnel.json
    """
    from rwpost.errors import RecordError
    from rwpost.io import read_json
    from rwpost.stages.base import read_funnel

    if not path.exists():
        raise ConfigError(f"no funnel at {path} (run: rwpost filter run)")
    read_json(path)  # a malformed file: one line naming it
    try:
        steps = [step.row() for step in read_funnel(path)]
    except (TypeError, ValueError) as exc:  # ValidationError is a ValueError
        problem = "not a funnel: expected a list of steps (step, in, removed, out)"
        raise RecordError(problem, source=str(path)) from exc
    print_funnel(steps, last_run_use(path))


@filter_app.command("keywords")
def keywords(
    text: str = typer.Argument(..., help="OCR text to scan ('-' reads standard input)."),
    max_distance: int = typer.Option(2, min=0, help="Largest edit distance that counts."),
    require_isolated: bool = typer.Option(False, help="Count only labels that stand on their own line."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show which fact-check label keywords (Table S1) an OCR text contains, and how they were read.

    Example: rwpost filter keywords "FACT CHECK: MOSTLY FALSE"
    """
    import sys

    from rich.table import Table

    from rwpost.filters.keywords import find_keywords, matched_keywords

    body = sys.stdin.read() if text == "-" else text
    found = matched_keywords(
        find_keywords(body), max_distance=max_distance, require_isolated=require_isolated
    )
    if as_json:
        typer.echo(json.dumps([m.to_dict() for m in found], indent=2))
        return
    table = Table("keyword", "as read", "how", "distance", "isolated")
    for m in found:
        table.add_row(m.keyword, m.found, m.how, str(m.distance), "yes" if m.isolated else "no")
    console.print(table if found else "no watermark keywords")


def register(app: typer.Typer) -> None:
    app.add_typer(filter_app, name="filter")
