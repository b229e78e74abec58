"""Small commands about the toolkit itself: schemas and the label table."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rwpost.commands import LazyConsole
from rwpost.errors import ConfigError, RwpostError

console = LazyConsole()


def schemas(
    out: Path = typer.Option(Path("schemas"), "--dir", help="Folder of the JSON Schema files."),
    check: bool = typer.Option(False, "--check", help="Fail if the files differ from the models."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace schema files that differ from the models (else refused)."
    ),
) -> None:
    """Write (or --check) the JSON Schemas of every record type; files already up to date are left alone,
    files that differ are replaced only with --overwrite.

    Example: rwpost schemas --check; after changing a record model: rwpost schemas --overwrite
    """
    from rwpost.schemas import stale_schema_files, write_schema_files

    if check:
        if not out.is_dir():
            raise ConfigError(
                f"{out}: no such folder of schema files (write them with: rwpost schemas --dir {out})"
            )
        stale = stale_schema_files(out)
        if stale:
            raise RwpostError(
                f"schemas out of date in {out}: {', '.join(stale)} (run: rwpost schemas --overwrite)"
            )
        console.print(f"schemas in {out} match the models")
        return
    written = write_schema_files(out, overwrite=overwrite)
    for path in written:
        console.print(f"wrote {path}")
    if not written:
        console.print(f"schemas in {out} already match the models")


def unknown_ratings(store: Path) -> tuple[dict[str, int], int]:
    """The rating words of a crawl store's ``articles.jsonl`` that the mapping does not know, with counts
    (most frequent first), and how many articles were read."""
    from collections import Counter

    from rwpost.errors import UnknownRatingError
    from rwpost.io import iter_jsonl
    from rwpost.labels import map_rating

    path = store / "articles.jsonl" if store.is_dir() else store
    if not path.is_file():
        raise RwpostError(f"{path}: no crawl store here (expected articles.jsonl)")
    unknown: Counter[str] = Counter()
    read = 0
    for _line, row in iter_jsonl(path):
        read += 1
        rating = row.get("rating") if isinstance(row, dict) else None
        try:
            map_rating(rating)
        except UnknownRatingError:
            unknown[str(rating)] += 1
    return dict(unknown.most_common()), read


def labels(
    ratings: list[str] = typer.Argument(None, help="Snopes ratings to map; none lists the whole table."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    unknown: Path = typer.Option(
        None, "--unknown", help="A crawl store: list its rating words the mapping does not know, with counts."
    ),
    site: str = typer.Option(
        None, "--site", help="Map another fact-checker's ratings (a domain or a name of `rwpost sites`)."
    ),
    language: str = typer.Option(None, "--language", help="With --site: the ratings' language (ISO 639)."),
) -> None:
    """Map Snopes ratings to RW-Post labels (paper Table II).

    Later Snopes wordings ("Incorrect Attribution", "Unproven (retired)") map as documented aliases of
    their Table II row; "No Rating" and pages without a rating are set aside as unrated.

    Example: rwpost labels "Mostly False" "Labeled Satire";  rwpost labels --unknown data/work/crawl
    Other fact-checkers: rwpost labels --site factuel.afp.com --json Faux Trompeur
    """
    from rich.table import Table

    from rwpost.commands import sites as site_commands
    from rwpost.labels import known_ratings, map_rating

    if site is not None:
        site_commands.site_labels(site, ratings or [], language=language, as_json=as_json)
        return
    if unknown is not None and site_commands.unknown_site_ratings(unknown, as_json):
        return
    if unknown is not None:
        counts, read = unknown_ratings(unknown)
        if not read:  # before --json too: "{}" would read as "every rating is known"
            raise RwpostError(f"{unknown}: the crawl store holds no articles")
        if as_json:
            typer.echo(json.dumps(counts, indent=2))
            return
        table = Table("unknown rating", "articles", title=f"ratings of {unknown} not in rwpost.labels")
        for word, count in counts.items():
            table.add_row(word, str(count))
        console.print(table if counts else f"every rating of the {read} articles in {unknown} is known")
        return

    if not ratings:
        rows = known_ratings()
    else:
        rows = {}
        for rating in ratings:
            mapping = map_rating(rating)
            if mapping.label is None:
                rows[rating] = f"excluded: {mapping.excluded_reason}"
            elif mapping.alias_of:
                rows[rating] = f"{mapping.label} (alias of {mapping.alias_of!r})"
            else:
                rows[rating] = str(mapping.label)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("rating", "RW-Post label")
    for rating, label in rows.items():
        table.add_row(rating, label)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("schemas")(schemas)
    app.command("labels")(labels)
