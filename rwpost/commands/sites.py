"""``rwpost sites`` (the fact-checkers of sites.yaml) and the multi-site half of ``rwpost labels``
(``--site DOMAIN RATING...``; ``--unknown STORE`` per site and language)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rwpost.commands import LazyConsole
from rwpost.commands.tables import print_table
from rwpost.errors import ConfigError, RwpostError

console = LazyConsole()


def sites(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    sites_file: Path = typer.Option(
        None, "--sites-file", help="Another sites.yaml (default: the packaged one)."
    ),
) -> None:
    """List the fact-checkers rwpost knows by name (the packaged sites.yaml): publisher, domains, language
    hint, entry points and terms. A page of a site not listed is read all the same.

    Example: rwpost sites;  rwpost sites --json
    """
    from rwpost.sites.registry import load_registry, packaged_registry

    registry = load_registry(sites_file) if sites_file is not None else packaged_registry()
    if as_json:
        rows = [site.model_dump(mode="json") for site in registry.sites]
        typer.echo(json.dumps({"version": registry.version, "sites": rows}, indent=2, ensure_ascii=False))
        return
    rows = [
        [s.name, s.publisher, ", ".join(s.domains), s.language or "", str(len(s.ratings)), s.terms]
        for s in registry.sites
    ]
    headers = ["site", "publisher", "domains", "language", "own ratings", "terms"]
    print_table("sites.yaml", headers, rows, console.get())
    console.print(f"{len(registry.sites)} sites (sites.yaml version {registry.version})")


def site_labels(site_name: str, ratings: list[str], *, language: str | None, as_json: bool) -> None:
    """``rwpost labels --site DOMAIN RATING...``: a publisher's ratings by its table and its language's."""
    from rwpost.labels import map_site_rating
    from rwpost.sites.registry import packaged_registry

    site = packaged_registry().by_name(site_name)
    if site is None and "." not in site_name:
        raise ConfigError(f"--site {site_name}: no such site in sites.yaml (see: rwpost sites)")
    if not ratings:
        raise ConfigError("--site: give the ratings to map, e.g. rwpost labels --site factuel.afp.com Faux")
    language = language or (site.language if site else None)
    table_of = site.ratings if site else None
    mappings = {r: map_site_rating(r, language=language, site_table=table_of) for r in ratings}
    if as_json:
        typer.echo(json.dumps({r: m.label and str(m.label) for r, m in mappings.items()}, ensure_ascii=False))
        return
    from rich.table import Table

    title = f"ratings of {site.publisher if site else site_name} ({language or 'any language'})"
    table = Table("rating", "RW-Post label", "by", title=title)
    for rating, mapping in mappings.items():
        table.add_row(
            rating, str(mapping.label) if mapping.label else f"none: {mapping.reason}", mapping.via or ""
        )
    console.print(table)


def unknown_site_ratings(store: Path, as_json: bool) -> bool:
    """``rwpost labels --unknown STORE`` for a store of multi-site records: per site and language, the
    ratings no table maps, with counts. False when the store holds no multi-site record (the Snopes
    table's listing applies)."""
    from rwpost.io import read_records
    from rwpost.records import CrawledArticle, Reject
    from rwpost.sites.ratings import unmapped_ratings

    path = store / "articles.jsonl" if store.is_dir() else store
    if not path.is_file():
        raise RwpostError(f"{path}: no crawl store here (expected articles.jsonl)")
    rejects: list[Reject] = []
    counts, read = unmapped_ratings(read_records(path, CrawledArticle, rejects=rejects))
    if not read:
        return False
    if as_json:
        nested: dict[str, dict[str, dict[str, int]]] = {}
        for (site, language, rating), count in sorted(counts.items()):
            nested.setdefault(site, {}).setdefault(language, {})[rating] = count
        typer.echo(json.dumps(nested, indent=2, ensure_ascii=False))
        return True
    if not counts:
        console.print(f"every rating of the {read} multi-site articles in {store} maps to a label")
        return True
    from rich.table import Table

    table = Table(
        "site", "language", "unmapped rating", "articles", title=f"ratings of {store} no table maps"
    )
    for (site, language, rating), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(site, language, rating, str(count))
    console.print(table)
    return True


def claims_search(
    site: str = typer.Argument(..., help="The publisher's site, e.g. factuel.afp.com."),
    out: Path = typer.Option(..., "--out", help="The feed file to write (read by rwpost crawl --feed)."),
    language: str = typer.Option(None, "--language", help="Only claims reviewed in this language."),
    max_pages: int = typer.Option(None, "--max-pages", min=1, help="Stop after N pages of 100 claims."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --out."),
) -> None:
    """Page through Google's Fact Check Tools claims:search for one publisher into a feed file; the key is
    FACTCHECK_API_KEY (never written), FACTCHECK_API_BASE another server (a twin in tests).

    Example: FACTCHECK_API_KEY=... rwpost claims-search factuel.afp.com --out afp.json;
    rwpost crawl --feed afp.json --out data/work/sites --contact ME
    """
    import os

    from rwpost.sites.factcheck_api import API_BASE, search_claims

    key = os.environ.get("FACTCHECK_API_KEY")
    if not key:
        raise ConfigError("claims-search needs FACTCHECK_API_KEY in the environment (a Google API key)")
    if out.exists() and not overwrite:
        raise ConfigError(f"{out}: exists (pass --overwrite to replace it)")
    base = os.environ.get("FACTCHECK_API_BASE") or API_BASE
    counts = search_claims(site, out, api_key=key, base_url=base, language=language, max_pages=max_pages)
    console.print(f"wrote {out}: {counts['claims']} claims of {site} in {counts['pages']} pages")


def register(app: typer.Typer) -> None:
    app.command("claims-search")(claims_search)
    app.command("sites")(sites)
