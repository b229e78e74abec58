"""``rwpost crawl`` (the Scrapy crawl, run in a subprocess) and ``rwpost sample build|serve``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rwpost.commands import LazyConsole, stage_default

console = LazyConsole()
sample_app = typer.Typer(
    help="Build or serve the local Snopes-like sample site.\n\n"
    "Example: rwpost sample build --out /tmp/site; rwpost sample serve --site /tmp/site --port 8000",
    no_args_is_help=True,
)


@sample_app.command("build")
def sample_build(
    released: Path = typer.Option(
        Path("data/sample/released"), "--released", help="Folder of the released RW-Post records."
    ),
    out: Path = typer.Option(Path("data/sample/site"), "--out", help="Where to write the site."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Rebuild into an existing, non-empty --out."),
) -> None:
    """Generate the sample site (pages, stand-in images, listings, sitemap, gold) from released records.

    Example: rwpost sample build --out data/sample/site --overwrite
    """
    from rwpost.errors import ConfigError
    from rwpost.sample.build import build_site

    if out.resolve() == released.resolve() or released.resolve() in out.resolve().parents:
        raise ConfigError(
            f"{out}: is inside the released records folder {released}; write the site elsewhere"
        )
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: is a file, expected a folder for the site")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out}: already holds files (pass --overwrite to rebuild the site there)")

    counts = build_site(released, out)
    console.print(
        f"wrote {out}: {counts['articles']} articles, {counts['hostile']} hostile pages, "
        f"{counts['files']} files"
    )


@sample_app.command("build-multisite")
def sample_build_multisite(
    out: Path = typer.Option(Path("data/sample/multisite"), "--out", help="Where to write the sample."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Rebuild into an existing, non-empty --out."),
) -> None:
    """Generate the multi-site sample: pages of eight fictional fact-checkers in seven languages, in the
    markup shapes of real ones, with a ClaimReview feed, a sitemap, robots.txt and the gold answers.

    Example: rwpost sample build-multisite --out data/sample/multisite --overwrite
    """
    from rwpost.errors import ConfigError
    from rwpost.sample.multisite import build_multisite

    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: is a file, expected a folder for the sample")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out}: already holds files (pass --overwrite to rebuild the sample there)")
    counts = build_multisite(out)
    console.print(
        f"wrote {out}: {counts['pages']} pages in {counts['languages']} languages, "
        f"{counts['feed_reviews']} feed reviews"
    )


@sample_app.command("serve")
def sample_serve(
    site: Path = typer.Option(Path("data/sample/site"), "--site", help="Folder of the built site."),
    port: int = typer.Option(
        8000, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."
    ),
    synthetic: int = typer.Option(
        0, "--synthetic", min=0, help="Also serve N generated pages under /synthetic/."
    ),
) -> None:
    """Serve the sample site on 127.0.0.1, hostile behaviours included (Ctrl-C stops).

    Example: rwpost sample serve --port 8000
    """
    from rwpost.sample.serve import serve_site

    serve_site(site, port=port, synthetic=synthetic)


def _default(name: str) -> str:
    return stage_default("crawl", name)


def crawl(
    start_url: str = typer.Option(
        None,
        "--start-url",
        help="Listing page to start from (archive or category); none: serve and crawl the sample site.",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Output folder (articles.jsonl, html/, images/, report.json).",
        show_default=_default("out"),
    ),
    sample_site: Path = typer.Option(
        None,
        "--sample-site",
        help="The site served when no --start-url is given.",
        show_default=_default("sample_site"),
    ),
    max_articles: int = typer.Option(
        None,
        "--max-articles",
        help="Fetch at most N articles (0: no limit).",
        show_default=_default("max_articles"),
    ),
    since: str = typer.Option(
        None, "--since", help="Earliest publication date kept ('any': none; the live window: 2017-01-01)."
    ),
    until: str = typer.Option(None, "--until", help="Latest publication date kept (default: no limit)."),
    allow_loopback: bool = typer.Option(
        None, "--allow-loopback", help="Allow 127.0.0.1 pages and images (the local sample site)."
    ),
    user_agent: str = typer.Option(None, "--user-agent", help="User-Agent (default names rwpost's crawler)."),
    contact: str = typer.Option(None, "--contact", help="Contact (e-mail or URL) sent in the User-Agent."),
    throttle: bool = typer.Option(
        None,
        "--throttle/--no-throttle",
        help="AutoThrottle and delays (polite).",
        show_default=_default("throttle"),
    ),
    delay: float = typer.Option(
        None,
        "--delay",
        help="Seconds between two requests to the site (jittered +-50%; AutoThrottle starts there and "
        "never goes below it); ignored with --no-throttle.",
        show_default=_default("delay"),
    ),
    resume: bool = typer.Option(
        None,
        "--resume/--no-resume",
        help="Continue the Scrapy queue of a stopped run (stored pages are skipped).",
        show_default=_default("resume"),
    ),
    retry_failed: bool = typer.Option(
        None, "--retry-failed", help="Fetch again pages stored with 5xx/network errors."
    ),
    images: bool = typer.Option(
        None,
        "--images/--no-images",
        help="Download article images.",
        show_default=_default("download_images"),
    ),
    max_image_bytes: int = typer.Option(
        None, "--max-image-bytes", min=1, help="Size cap per image.", show_default=_default("max_image_bytes")
    ),
    crawlers_dir: Path = typer.Option(
        None, "--crawlers-dir", help="The Scrapy project (default ./crawlers)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the crawl report as JSON."),
    sitemaps: bool = typer.Option(
        None,
        "--sitemaps",
        help="Discover from the sitemaps only (media.snopes.com/sitemaps/: latest, news, one per month "
        "of --since..--until), no listing walk.",
    ),
    sitemap_url: list[str] = typer.Option(
        None, "--sitemap-url", help="With --sitemaps: read these sitemaps instead (repeatable)."
    ),
    sitemap_base: str = typer.Option(
        None,
        "--sitemap-base",
        help="With --sitemaps: where the sitemaps live (default https://media.snopes.com/sitemaps/).",
    ),
    sitemap_host: list[str] = typer.Option(
        None,
        "--sitemap-host",
        help="Also allow sitemaps on this host (repeatable); others are ignored and counted.",
    ),
    site_origin: str = typer.Option(
        None,
        "--site-origin",
        help="The site's fixed origin when --start-url is a mirror of it (e.g. the sample site on a random "
        "port): URLs are stored under it and fetch times pinned, so two crawls give identical stores.",
    ),
    from_html: Path = typer.Option(
        None,
        "--from-html",
        help="Read saved pages (.html, .html.gz, Wayback captures) from this folder instead of the web.",
    ),
    feed: str = typer.Option(
        None,
        "--feed",
        help="Crawl the review pages of a ClaimReview feed (a DataFeed file or URL, streamed), the feed's "
        "fields kept as each page's fallback; implies --reader sites.",
    ),
    reader: str = typer.Option(
        None,
        "--reader",
        help="The page reader: snopes (the Snopes page model) or sites (any fact-checker: ClaimReview, "
        "language, tagged body). Default: snopes; sites with --feed.",
    ),
) -> None:
    """Crawl a Snopes-like site with Scrapy (in a subprocess): polite, resumable and incremental.

    The same stage as `dvc repro` runs: with no --start-url it serves the bundled sample site on
    127.0.0.1 and crawls it; the store is sorted by id at the end.

    Example (the bundled sample): rwpost crawl --out data/work/crawl --no-throttle
    Live: rwpost crawl --start-url https://www.snopes.com/fact-check/ --since 2017-01-01 --contact ME
    Saved pages: rwpost crawl --from-html saved_pages/ --out data/work/crawl
    Saved pages of any fact-checker: rwpost crawl --from-html pages/ --reader sites --out data/work/sites
    A ClaimReview feed: rwpost crawl --feed claimreview-feed.json --out data/work/sites --contact ME
    Sitemaps only: rwpost crawl --start-url https://www.snopes.com/ --sitemaps --since 2025-01-01 --contact ME
    """
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    from rwpost.stages import crawl as crawl_stage

    if from_html is not None:
        from rwpost.crawl import run_import_html

        store = out or crawl_stage.Params().out
        with Live(console=Console(stderr=True), transient=True, refresh_per_second=4) as live:

            def imported(event: dict) -> None:
                live.update(f"saved pages read {event.get('files', 0)} of {event.get('total', '?')}")

            counts = run_import_html(
                from_html, store, crawlers_dir=crawlers_dir, on_event=imported, reader=reader or "snopes"
            )
        if as_json:
            typer.echo(json.dumps(counts, indent=2))
            return
        problems = counts.pop("index_problem_lines", [])
        table = Table("saved pages", "count", title=f"import of {from_html} into {store}")
        for key, value in counts.items():
            table.add_row(key, str(value))
        console.print(table)
        for problem in problems:  # an index.json entry that gave no page its URL is said, never skipped
            console.print(f"[yellow]index not used: {problem}[/]", soft_wrap=True)
        return

    params = crawl_stage.Params.from_options(
        start_url=start_url,
        out=out,
        sample_site=sample_site,
        since=since,
        until=until,
        max_articles=max_articles,
        user_agent=user_agent,
        contact=contact,
        throttle=throttle,
        delay=delay,
        allow_loopback=allow_loopback,
        download_images=images,
        max_image_bytes=max_image_bytes,
        resume=resume,
        retry_failed=retry_failed,
        sitemaps=sitemaps or bool(sitemap_url) or bool(sitemap_base) or None,
        sitemap_urls=list(sitemap_url or []) or None,
        sitemap_base=sitemap_base,
        sitemap_hosts=list(sitemap_host or []) or None,
        site_origin=site_origin,
        feed=feed,
        reader=reader,
    )
    progress_console = Console(stderr=True)
    with Live(console=progress_console, transient=True, refresh_per_second=4) as live:

        def show(event: dict) -> None:
            if event.get("event") == "notice":
                progress_console.print(f"[yellow]{event.get('message')}[/]")
                return
            live.update(
                f"found {event.get('found', 0)}  fetched {event.get('fetched', 0)}  "
                f"failed {event.get('failed', 0)}  skipped (stored) {event.get('skipped_stored', 0)}  "
                f"images {event.get('images_ok', 0)}  {event.get('rate_per_s', 0)} pages/s"
            )

        report = crawl_stage.run(params, crawlers_dir=crawlers_dir, on_event=show).counts
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    print_report(report, params.out)


def print_report(report: dict, out: Path) -> None:
    """The crawl report as two small tables: this run's counts and the store's totals."""
    from rich.table import Table

    run_table = Table("this run", "count", title=f"crawl of {report['settings']['start_url']}")
    for key, value in report["this_run"].items():
        if value:
            run_table.add_row(key, str(value))
    console.print(run_table)
    store_table = Table("store", "count", title=str(out))
    for key, value in report["store"].items():
        store_table.add_row(key, str(value))
    console.print(store_table)
    console.print(
        f"{report['finish_reason']} in {report['elapsed_s']} s, {report['pages_per_s']} pages/s, "
        f"peak RSS {report['peak_rss_mb']} MB; report: {out / 'report.json'}"
    )


def register(app: typer.Typer) -> None:
    app.command("crawl")(crawl)
    app.add_typer(sample_app, name="sample")
