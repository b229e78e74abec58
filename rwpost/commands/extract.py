"""``rwpost reformat`` (HTML -> text with tagged URLs) and ``rwpost extract`` (post, rationale, evidence)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rwpost.commands import LazyConsole, stage_default
from rwpost.errors import interrupted_exit, interrupted_line, sigterm_interrupts

if TYPE_CHECKING:
    from rwpost.stages import extract as extract_stage

console = LazyConsole()
err_console = LazyConsole(stderr=True)
OUTPUTS = ("extractions.jsonl", "rejects.jsonl", "summary.json", "cost.json", "funnel.json")
"""What ``rwpost extract`` writes in its --out folder (rejects.jsonl only when something was set aside)."""


def reformat(
    crawl_dir: Path = typer.Option(
        None,
        "--in",
        help="Crawl store: articles.jsonl + html/<sha>.html.gz.",
        show_default=stage_default("reformat", "crawl"),
    ),
    out: Path = typer.Option(
        None, "--out", help="Output folder.", show_default=stage_default("reformat", "out")
    ),
    min_words: int = typer.Option(
        None,
        "--min-words",
        min=0,
        help="Reject bodies with fewer words.",
        show_default=stage_default("reformat", "min_words"),
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the outputs of an earlier run."),
) -> None:
    """Turn crawled pages into text with tagged URLs and a link table (paper III-B.2).

    Example: rwpost reformat --in data/work/crawl --out data/work/tagged
    """
    from rwpost.io import check_outputs
    from rwpost.stages import reformat as reformat_stage

    params = reformat_stage.Params.of(crawl=crawl_dir, out=out, min_words=min_words)
    check_outputs(
        [params.out / name for name in reformat_stage.OUTPUT_FILES],
        [params.crawl / "articles.jsonl"],
        overwrite=overwrite,
    )
    report = reformat_stage.run(params).counts
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    console.print(f"{report['kept']} tagged articles -> {params.out / 'articles.jsonl'}")
    for reason, count in sorted(report["rejected"].items()):
        console.print(f"  rejected ({reason}): {count}")


def _default(name: str) -> str:
    return stage_default("extract", name)


def extract(
    in_path: Path = typer.Option(
        None, "--in", help="Tagged articles (JSONL).", show_default=_default("input")
    ),
    out: Path = typer.Option(None, "--out", help="Output folder.", show_default=_default("out")),
    backend: str = typer.Option(
        None,
        "--backend",
        help="offline | llm | auto (llm when OPENAI_API_KEY is set, else offline) | local (--local-model).",
        show_default=_default("backend"),
    ),
    local_model: Path = typer.Option(
        None,
        "--local-model",
        help="A Hugging Face model folder for --backend local (in-process; bf16 on CUDA, float32 on CPU).",
    ),
    model: str = typer.Option(None, "--model", help="LLM model (default: RWPOST_LLM_MODEL or gpt-4o-mini)."),
    concurrency: int = typer.Option(None, "--concurrency", min=1, help="LLM requests in flight (default 8)."),
    cache: Path = typer.Option(
        None, "--cache", help="LLM answer cache (sqlite).", show_default=_default("cache")
    ),
    price_in: float = typer.Option(
        None, "--price-in", min=0, help="USD per million input tokens of --model."
    ),
    price_out: float = typer.Option(
        None, "--price-out", min=0, help="USD per million output tokens of --model."
    ),
    limit: int = typer.Option(None, "--limit", min=0, help="Extract at most N new articles."),
    retry_rejects: bool = typer.Option(False, "--retry-rejects", help="Try set-aside articles again."),
    executor: str = typer.Option(
        None,
        "--executor",
        help="local | ray (pip install 'rwpost[ray]') | slurm (writes sbatch scripts); default local.",
    ),
    shards: int = typer.Option(
        None, "--shards", min=1, help="Split the articles by id into N shards with completion markers."
    ),
    workers: int = typer.Option(
        None, "--workers", min=1, help="--executor local: shards run at once in N processes (default: cores)."
    ),
    batch_api: bool = typer.Option(
        False, "--batch-api", help="Ask through the provider's Batch API (about half price; resumable)."
    ),
    gpus: float = typer.Option(
        None, "--gpus", min=0, help="--executor ray with --backend local: GPUs of each model replica (actor)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Estimate tokens and cost; call nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Extract post, rationale and evidence from tagged articles (paper III-B.3); resumable.

    The same stage as `dvc repro` runs (funnel.json included).
    Reads OPENAI_API_KEY / OPENAI_BASE_URL / RWPOST_LLM_* from the environment for the llm backend.

    Example: rwpost extract --in data/work/tagged/articles.jsonl --out data/work/extract --backend offline
    """
    from rich.progress import Progress

    from rwpost.io import check_outputs, iter_lines
    from rwpost.llm import settings_from_env
    from rwpost.stages import extract as extract_stage

    prices = None
    if (price_in is None) != (price_out is None):
        raise typer.BadParameter(
            "give both --price-in and --price-out (a price of one side only is no price)"
        )
    if price_in is not None and price_out is not None:
        priced = model or settings_from_env().model
        prices = {priced: {"input_per_mtok": price_in, "output_per_mtok": price_out}}
    params = extract_stage.Params.of(
        input=in_path,
        out=out,
        backend=backend,
        local_model=local_model,
        model=model,
        concurrency=concurrency,
        cache=cache,
        prices=prices,
        limit=limit,
        retry_rejects=retry_rejects or None,
        batch_api=batch_api or None,
        executor={
            k: v
            for k, v in {"name": executor, "shards": shards, "workers": workers, "gpus": gpus}.items()
            if v is not None
        }
        or None,
    )
    # a rerun resumes (documented): outputs are appended to; only an output that is the input is refused
    check_outputs([params.out / name for name in OUTPUTS], [params.input], overwrite=True)
    if dry_run:
        if prices is None and not params.prices:  # the prices params.yaml states, as dvc repro uses them
            params = params.model_copy(update={"prices": _params_prices()})
        _dry_run(params, as_json)
        return
    total = sum(1 for _ in iter_lines(params.input)) if params.input.is_file() else 0
    try:
        with sigterm_interrupts(), Progress(console=console.get(), transient=True) as bar:
            task = bar.add_task(f"extract ({params.backend})", total=total)
            done = extract_stage.run(params, progress=lambda n: bar.advance(task, n))
    except KeyboardInterrupt as exc:
        err_console.print(interrupted_line("extract", exc, params.out), highlight=False, soft_wrap=True)
        raise typer.Exit(interrupted_exit(exc)) from None
    report = done.counts
    if done.submitted:  # a scheduler's scripts written, nothing extracted yet
        typer.echo(json.dumps(report, indent=2) if as_json else done.message)
        return
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    console.print(f"backend {report['backend']} ({report['prompt_version']}): {report['counts']}")
    counts = report["counts"]
    if counts.get("retried_transport_failures"):
        console.print(
            f"resumed: {counts['retried_transport_failures']} articles set aside for a transport reason "
            "(server error, rate limit, timeout, no connection) were asked again"
        )
    if counts.get("transport_failures"):
        console.print(
            f"[yellow]{counts['transport_failures']} articles failed for a transport reason (server error, "
            "rate limit, timeout, no connection): run the same command again to ask for them[/]"
        )
    if report.get("tasks"):
        _print_usage(f"LLM usage ({report['model']})", report["tasks"], report["total"])
    written = [name for name in OUTPUTS if (params.out / name).exists()]  # no rejects: no rejects.jsonl
    console.print(f"outputs in {params.out} ({', '.join(written)})")


def _params_prices(path: Path = Path("params.yaml")) -> dict:
    """``extract.prices`` of the params file in this folder ({} without one, or without prices)."""
    from rwpost.stages import extract as extract_stage
    from rwpost.stages.base import load_params

    if not path.is_file():
        return {}
    section = load_params(path).get("extract")
    prices = section.get("prices") if isinstance(section, dict) else None
    if not prices:
        return {}
    return extract_stage.Params.of(prices=prices).prices


def _dry_run(params: extract_stage.Params, as_json: bool) -> None:
    """What the llm backend would ask for the articles to do, in tokens and cost; calls nothing."""
    from rwpost.extract.llm import LLMExtractor
    from rwpost.extract.run import make_extractor
    from rwpost.extract.shards import price_table
    from rwpost.io import read_records
    from rwpost.llm import settings_from_env
    from rwpost.records import TaggedArticle

    backend = "llm" if params.backend == "auto" else params.backend  # a dry run is about what the LLM costs
    settings = settings_from_env(model=params.model, concurrency=params.concurrency)
    if not settings.has_key and not settings.base_url:
        settings = dataclasses.replace(settings, base_url="http://127.0.0.1:9/v1")  # never called
    extractor = make_extractor(
        backend,
        settings,
        cache_path=params.cache if Path(params.cache).is_file() else None,  # read a cache, never create one
        prices=price_table(params.prices),
        max_article_chars=params.max_article_chars,
    )
    if not isinstance(extractor, LLMExtractor):
        raise typer.BadParameter("--dry-run estimates the llm backend; the offline backend costs nothing")
    articles = list(read_records(params.input, TaggedArticle, rejects=[]))
    if params.limit is not None:
        articles = articles[: params.limit]
    estimate = extractor.estimate(articles)
    if as_json:
        typer.echo(json.dumps(estimate, indent=2))
        return
    priced = estimate["priced"]
    _print_usage("dry run (estimate, nothing called)", estimate["tasks"], estimate["total"], priced=priced)
    if not priced:
        console.print(
            f"cost unpriced: no price for model {estimate['model']} (give --price-in and --price-out)",
            highlight=False,
            soft_wrap=True,
        )


def _print_usage(title: str, tasks: dict, total: dict, *, priced: bool = True) -> None:
    from rich.table import Table

    columns = [c for c in total if c != "cost_usd"] + ["cost_usd"]
    table = Table(*(["task"] + columns), title=title)
    for name, row in list(tasks.items()) + [("total", total)]:
        cells = {**row, "cost_usd": row.get("cost_usd", "") if priced else "unpriced"}
        table.add_row(name, *(str(cells.get(c, "")) for c in columns))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("reformat")(reformat)
    app.command("extract")(extract)
