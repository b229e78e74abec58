"""Commands over dataset files: statistics, import of the released format, diff and verify of versions."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rwpost.commands import LazyConsole, bundled_sample
from rwpost.errors import ConfigError, RwpostError

console = LazyConsole()

OVERWRITE = typer.Option(False, "--overwrite", help="Replace output files that already exist.")


def _split_files(path: Path) -> list[Path]:
    """The ``<subset>/<split>.parquet`` files of a version folder (none: one error naming the folder)."""
    files = sorted(path.glob("*/*.parquet"))
    if not files:
        raise RwpostError(f"{path}: no <subset>/<split>.parquet files in this folder")
    return files


def _version_dir(path: Path) -> Path:
    """A dataset version folder the user named: one error when it is missing or not a folder."""
    if not path.is_dir():
        problem = "not a folder" if path.exists() else "no such folder"
        raise RwpostError(f"{path}: {problem}, expected a dataset version folder")
    return path


def _samples_of(path: Path):  # noqa: ANN202
    """Samples of a file (released JSONL, Sample JSONL, Parquet) or of every split in a version folder."""
    from rwpost.dataset import read_samples

    if path.is_dir():
        return [s for f in _split_files(path) for s in read_samples(f)]
    return read_samples(path)


def stats(
    path: Path = typer.Argument(
        ..., help="Released JSONL, Parquet split, or a dataset version folder.", callback=bundled_sample
    ),
    json_out: Path = typer.Option(None, "--json", help="Also write the statistics JSON here."),
    out: Path = typer.Option(None, "--out", help="Folder for stats.json, stats.md and PNG plots."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write PNG plots (with --out)."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Print the paper's Figure 3 statistics (labels, ratings, categories, evidence, years).

    Example: rwpost stats data/sample/released/rwpost_dev_main.head.jsonl --out reports/stats
    """
    from rich.table import Table

    from rwpost.io import check_output, check_outputs, write_json
    from rwpost.stats import REPORT_FILES, compute_stats, write_report

    inputs = [path, *(_split_files(path) if path.is_dir() else [])]  # a folder's splits are inputs too
    if json_out:
        check_output(json_out, inputs, overwrite=overwrite)
        if json_out.is_dir():
            raise ConfigError(f"{json_out}: is a directory, expected a file path for --json")
    if out:
        check_output(out, inputs, overwrite=True)  # a folder may exist; the files in it may not
        if out.exists() and not out.is_dir():
            raise ConfigError(f"{out}: is a file, expected a folder for --out")
        check_outputs([out / name for name in REPORT_FILES], [*inputs, json_out], overwrite=overwrite)
    result = compute_stats(_samples_of(path))
    for key, heading, title in (
        ("labels", "RW-Post label", "RW-Post labels"),
        ("ratings", "rating", "original ratings"),
        ("categories", "category", "categories"),
    ):
        table = Table(heading, "count", title=f"{title} ({result['count']} samples)")
        for name, count in result[key].items():
            table.add_row(name, str(count))
        console.print(table)
    console.print(f"evidence items: {result['evidence_total']}; modalities: {result['evidence_modalities']}")
    if json_out:
        write_json(json_out, result)
        console.print(f"wrote {json_out}")
    if out:
        for written in write_report(result, out, title=path.name, plots=plots):
            console.print(f"wrote {written}")


def import_released(
    path: Path = typer.Argument(
        ..., help="A released RW-Post JSONL file (flat or demo format).", callback=bundled_sample
    ),
    out: Path = typer.Option(..., "--out", help="Parquet file to write."),
    skip_bad: bool = typer.Option(
        False, "--skip-bad", help="Set malformed and duplicate lines aside instead of stopping."
    ),
    rejects: Path = typer.Option(
        None,
        "--rejects",
        help="Where --skip-bad writes the lines it sets aside (default: beside --out, named like it with "
        ".rejects.jsonl for .parquet: dev.parquet -> dev.rejects.jsonl).",
    ),
    overwrite: bool = OVERWRITE,
) -> None:
    """Import the authors' released JSONL into our Parquet layout; mis-decoded text (mojibake such as
    "Risqu√© Business") is repaired and the repair kept in each sample's extra.repaired_text.

    Example: rwpost import-released data/sample/released/rwpost_dev_main.head.jsonl --out dev.parquet
    """
    from rwpost.dataset import write_parquet
    from rwpost.io import check_output, folder_lock, write_jsonl
    from rwpost.rwpost_format import REPAIRED, read_released

    check_output(out, [path], overwrite=overwrite)
    target = rejects or out.with_suffix(".rejects.jsonl")
    if skip_bad:
        check_output(target, [path, out], overwrite=overwrite)
    # one import per output: a second one into the same --out is refused, not written over the first
    with folder_lock(out.parent, f".{out.name}.lock", runs="imports"):
        check_output(
            out, [path], overwrite=overwrite
        )  # again: an import that held the lock may have written it
        bad: list = [] if skip_bad else None  # type: ignore[assignment]
        samples = read_released(path, rejects=bad)
        if skip_bad:  # written even when empty: an earlier import's rejects never pass for this one's
            write_jsonl(target, bad)
        if not samples:
            aside = f" (all {len(bad)} set aside in {target})" if bad else ""
            raise RwpostError(f"{path}: no records to import{aside}")
        count = write_parquet(out, samples)
    console.print(f"wrote {count} samples to {out}")
    repaired = [s for s in samples if s.extra.get(REPAIRED)]
    if repaired:
        first = repaired[0]
        field, before = next(iter(first.extra[REPAIRED].items()))
        console.print(
            f"repaired mis-decoded text in {len(repaired)} samples (kept in extra.{REPAIRED}), e.g. "
            f"{first.id} {field}: {before!r} -> {_field_text(first, field)!r}",
            highlight=False,
            soft_wrap=True,
        )
    if bad:
        console.print(f"[yellow]set aside {len(bad)} malformed or duplicate lines in {target}[/]")


def _field_text(sample: object, path: str) -> object:
    """The value at a dotted path of a sample (``evidence.0.content``)."""
    value = sample
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)  # type: ignore[index]
    return value


def export_released(
    path: Path = typer.Argument(..., help="Parquet split or Sample JSONL."),
    out: Path = typer.Option(..., "--out", help="JSONL file to write in the released layout."),
    fmt: str = typer.Option(None, "--format", help="flat or demo (default: the layout each came from)."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Export samples back to the authors' released JSONL layout.

    Example: rwpost export-released data/rwpost/v1/main/test.parquet --out test.jsonl --format flat
    """
    from rwpost.dataset import read_samples
    from rwpost.io import check_output, write_text
    from rwpost.rwpost_format import export_released as export

    if fmt not in (None, "flat", "demo"):
        raise ConfigError(f"--format must be flat or demo, not {fmt!r}")
    check_output(out, [path], overwrite=overwrite)
    rows = export(read_samples(path), fmt)  # type: ignore[arg-type]
    write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    console.print(f"wrote {len(rows)} records to {out}")


def verify(version_dir: Path = typer.Argument(..., help="A dataset version folder.")) -> None:
    """Check every split file against SHA256SUMS and the card's checksums.

    Example: rwpost verify data/rwpost/v0.1.0
    """
    from rwpost.publish import verify_version

    problems = verify_version(_version_dir(version_dir))
    if problems:
        raise RwpostError(f"{version_dir}: " + "; ".join(problems))
    console.print(f"[green]{version_dir}: all checksums verify[/]", soft_wrap=True)


def diff(
    old: Path = typer.Argument(..., help="Older version folder."),
    new: Path = typer.Argument(..., help="Newer version folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List sample ids added, removed and changed between two dataset versions.

    Example: rwpost diff data/rwpost/v0.1.0 data/rwpost/v0.2.0
    """
    from rwpost.publish import diff_versions

    result = diff_versions(_version_dir(old), _version_dir(new))
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    console.print(
        f"added {len(result['added'])}, removed {len(result['removed'])}, changed {len(result['changed'])}"
    )
    for sid in result["added"]:
        console.print(f"+ {sid}")
    for sid in result["removed"]:
        console.print(f"- {sid}")
    for sid, fields in result["changed"].items():
        console.print(f"~ {sid}: {', '.join(fields)}")


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)
    app.command("import-released")(import_released)
    app.command("export-released")(export_released)
    app.command("verify")(verify)
    app.command("diff")(diff)
