"""``rwpost crawl`` (the Scrapy crawl, run in a subprocess) and ``rwpost sample build|serve``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

console = Console()
sample_app = typer.Typer(help="Build or serve the local Snopes-like sample site.", no_args_is_help=True)


@sample_app.command("build")
def sample_build(
    released: Path = typer.Option(
        Path("data/sample/released"), "--released", help="Folder of the released RW-Post records."
    ),
    out: Path = typer.Option(Path("data/sample/site"), "--out", help="Where to write the site."),
) -> None:
    """Generate the sample site (pages, stand-in images, listings, sitemap, gold) from released records.

    Example: rwpost sample build --out data/sample/site
    """
    from rwpost.sample_site import build_site

    counts = build_site(released, out)
    console.print(
        f"wrote {out}: {counts['articles']} articles, {counts['hostile']} hostile pages, "
        f"{counts['files']} files"
    )


@sample_app.command("serve")
def sample_serve(
    site: Path = typer.Option(Path("data/sample/site"), "--site", help="Folder of the built site."),
    port: int = typer.Option(8000, "--port", help="Port on 127.0.0.1 (0 picks a free one)."),
    synthetic: int = typer.Option(0, "--synthetic", help="Also serve N generated pages under /synthetic/."),
) -> None:
    """Serve the sample site on 127.0.0.1, hostile behaviours included (Ctrl-C stops).

    Example: rwpost sample serve --port 8000
    """
    from rwpost.sample_site import serve_site

    serve_site(site, port=port, synthetic=synthetic)


def register(app: typer.Typer) -> None:
    app.add_typer(sample_app, name="sample")
