"""``rwpost annotate ...``: human validation in a local Label Studio (paper III-D and V-D).

The edge of the annotation tools: reads environment variables (credentials) and paths, then calls
``rwpost.annotate``. The labeling configs and guidelines are files of the build project
(``annotation/configs``, ``annotation/guidelines``), passed by path.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from rwpost.commands import LazyConsole, bundled_sample
from rwpost.errors import ConfigError

console = LazyConsole()
annotate_app = typer.Typer(
    help="Human validation in Label Studio: serve, push tasks, pull verdicts, agreement, merge, "
    "rating mapping.\n\n"
    "Example: rwpost annotate serve   (then, in another shell)   rwpost annotate push "
    "data/sample/released/rwpost_dev_main.head.jsonl --annotators a@example.org,b@example.org",
    no_args_is_help=True,
)

STATE = typer.Option(
    Path("state/label-studio"), "--state", help="Label Studio state folder (venv, data, files)."
)
URL = typer.Option("", "--url", help="Label Studio URL (default: http://127.0.0.1:<port of serve>).")
PORT = typer.Option(8080, "--port", min=1, max=65535, help="Loopback port of the server.")
CONFIGS = typer.Option(
    Path("annotation/configs"), "--configs", help="Folder of the labeling config XML files."
)
GUIDELINES = typer.Option(
    Path("annotation/guidelines"), "--guidelines", help="Folder of the guideline files."
)
EXPORT = Path("state/label-studio/export")
OUT = typer.Option(EXPORT, "--out", help="Folder for exported records.")
OVERWRITE = typer.Option(False, "--overwrite", help="Replace output files that already exist.")
PULLED = ("validation_verdicts.jsonl", "human_verdicts.jsonl", "explanation_scores.jsonl", "rejects.jsonl")
"""The files ``pull`` writes under ``--out``."""
PULLED_VERDICTS = EXPORT / "validation_verdicts.jsonl"
PULLED_SCORES = EXPORT / "explanation_scores.jsonl"
"""Where ``annotate pull`` writes the annotations (the defaults of the commands that read them)."""


def _talks_to_server(command: Callable[..., None]) -> Callable[..., None]:
    """A command that talks to Label Studio: a server that is not running is one line naming its URL."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from rwpost.annotate.sync import reaching

        url = kwargs.get("url") or f"http://127.0.0.1:{kwargs.get('port', 8080)}"
        with reaching(url):
            command(*args, **kwargs)

    return wrapper


def _paths(state: Path):
    from rwpost.annotate.server import StatePaths

    return StatePaths(state)


def _client(state: Path, url: str, port: int):
    """An SDK client: token from LABEL_STUDIO_API_KEY or LABEL_STUDIO_USER_TOKEN, else the admin token
    ``annotate serve`` generated and saved."""
    from rwpost.annotate import sync
    from rwpost.annotate.server import load_credentials

    url = url or f"http://127.0.0.1:{port}"
    token = os.environ.get("LABEL_STUDIO_API_KEY") or os.environ.get("LABEL_STUDIO_USER_TOKEN")
    if not token:
        creds = load_credentials(_paths(state).credentials)
        if creds is None or not creds.token:
            raise ConfigError(
                "no Label Studio token: set LABEL_STUDIO_API_KEY (or LABEL_STUDIO_USER_TOKEN) or start the "
                f"server with rwpost annotate serve (which saves a token it generates in "
                f"{_paths(state).credentials})"
            )
        token = creds.token
    return sync.connect(url, token), url


@annotate_app.command("serve")
def serve(
    port: int = PORT,
    state: Path = STATE,
    data_dir: Path = typer.Option(None, "--data-dir", help="Database folder (default: <state>/data)."),
    venv: Path = typer.Option(
        None, "--venv", help="Label Studio's virtual environment (default: <state>/venv)."
    ),
) -> None:
    """Start Label Studio on 127.0.0.1 (installed on first use into <state>/venv) until Ctrl-C.

    Log in with LABEL_STUDIO_USERNAME / LABEL_STUDIO_PASSWORD if you set them; otherwise a password is
    generated once and saved (mode 0600) in <state>/credentials.json. The same for the API token
    (LABEL_STUDIO_USER_TOKEN). A password or token you set is never written to disk: set it again at
    the next start.

    Example: rwpost annotate serve --port 8080
    """
    from rwpost.annotate.server import StatePaths, ensure_venv, resolve_credentials, start_server

    paths = StatePaths(state, data_dir, venv)
    exe = paths.venv / "bin" / "label-studio"
    if not exe.exists():
        console.print(f"installing Label Studio into {paths.venv} (first use, about a minute)...")
    exe = ensure_venv(paths.venv)
    creds = resolve_credentials(
        paths.credentials,
        email=os.environ.get("LABEL_STUDIO_USERNAME"),
        password=os.environ.get("LABEL_STUDIO_PASSWORD"),
        token=os.environ.get("LABEL_STUDIO_USER_TOKEN"),
    )
    console.print("starting Label Studio (the first start applies migrations, about 30 s)...")
    server = start_server(paths, creds, port=port, exe=exe)
    console.print(f"\nLabel Studio is running at [bold]{server.url}[/] (loopback only)", soft_wrap=True)
    console.print(f"  log in as: {creds.email}", soft_wrap=True)
    if creds.generated:
        console.print(
            f"  password:  {creds.password}   (generated; saved in {paths.credentials}, mode 0600)",
            soft_wrap=True,
        )
    elif "password" in creds.given:
        console.print("  password:  the one in LABEL_STUDIO_PASSWORD (never stored)")
    else:
        console.print(f"  password:  the one saved in {paths.credentials} (mode 0600)", soft_wrap=True)
    if "token" in creds.given:
        console.print("  API token: the one in LABEL_STUDIO_USER_TOKEN (never stored; push/pull read it)")
    else:
        console.print(
            f"  API token: saved in {paths.credentials} (push/pull read it from there)", soft_wrap=True
        )
    console.print(f"  server log: {paths.log}\nPress Ctrl-C to stop.", soft_wrap=True)
    # Ctrl-C and SIGTERM both stop the server (a shell's background job starts with SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while server.process.poll() is None:
            time.sleep(1)
        raise ConfigError(f"Label Studio stopped with code {server.process.returncode}; see {paths.log}")
    except KeyboardInterrupt:
        console.print("stopping Label Studio...")
    finally:
        server.stop()


@annotate_app.command("push")
@_talks_to_server
def push(
    records: Path = typer.Argument(
        ..., help="JSONL of Sample records or released RW-Post records.", callback=bundled_sample
    ),
    annotators: str = typer.Option(
        "", "--annotators", help="Comma-separated e-mails to sign up as annotators."
    ),
    limit: int = typer.Option(0, "--limit", min=0, help="Push only the first N records (0 = all)."),
    articles: Path = typer.Option(
        None,
        "--articles",
        help="Tagged articles JSONL (reformat stage) for the article panel; else URL only.",
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    configs: Path = CONFIGS,
    guidelines: Path = GUIDELINES,
) -> None:
    """Create the validation project (once) and import one task per record not already there.

    Example: rwpost annotate push data/sample/released/rwpost_dev_main.head.jsonl --annotators a@x.org,b@x.org
    """
    from rich.table import Table

    from rwpost.annotate import sync, workflow
    from rwpost.annotate.server import load_annotators, save_annotators
    from rwpost.annotate.sources import read_annotation_samples, read_articles
    from rwpost.records import Reject

    client, url = _client(state, url, port)
    rejects: list[Reject] = []
    samples = list(read_annotation_samples(records, rejects))
    if limit:
        samples = samples[:limit]
    paths = _paths(state)
    result = workflow.push_validation(
        client,
        samples,
        configs_dir=configs,
        files_root=paths.files,
        guidelines_dir=guidelines,
        articles=read_articles(articles) if articles else None,
    )
    table = Table("project", "id", "created", "imported", "already there", "rejected lines")
    table.add_row(
        "validation",
        str(result.project_id),
        str(result.project_created),
        str(result.imported),
        str(result.already_there),
        str(len(rejects)),
    )
    console.print(table)
    emails = [e.strip() for e in annotators.split(",") if e.strip()]
    if emails:
        known = load_annotators(paths.annotators)
        passwords = sync.ensure_annotators(client, url, emails, known)
        if passwords != known:
            save_annotators(paths.annotators, passwords)
        where = f"passwords saved in {paths.annotators}, mode 0600"
        console.print(f"annotators ready: {', '.join(emails)} ({where})")
    if rejects:
        from rwpost.io import write_jsonl

        write_jsonl(paths.root / "push_rejects.jsonl", rejects)
        console.print(f"{len(rejects)} bad lines set aside in {paths.root / 'push_rejects.jsonl'}")


@annotate_app.command("push-explanations")
@_talks_to_server
def push_explanations(
    items: Path = typer.Argument(
        ..., help="JSONL of ExplanationItem (the explanations.jsonl of rwpost evaluate or leaderboard)."
    ),
    seed: int = typer.Option(13, "--seed", help="Seed of the per-task random order of the three outputs."),
    keys: Path = typer.Option(
        Path("state/label-studio/explanation_keys.json"), "--keys", help="Where the unblinding keys are kept."
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    configs: Path = CONFIGS,
    guidelines: Path = GUIDELINES,
) -> None:
    """Import blinded explanation triples (two detectors + gold) into the explanation project.

    Example: rwpost annotate push-explanations reports/explanations.jsonl --seed 13
    """
    from rwpost.annotate import workflow
    from rwpost.io import write_json

    loaded = workflow.read_explanation_items(items)
    client, _ = _client(state, url, port)
    result, new_keys = workflow.push_explanations(
        client,
        loaded,
        configs_dir=configs,
        files_root=_paths(state).files,
        seed=seed,
        guidelines_dir=guidelines,
    )
    merged = {rid: {str(k): v for k, v in key.items()} for rid, key in _load_keys(keys).items()}
    merged.update({rid: {str(k): v for k, v in key.items()} for rid, key in new_keys.items()})
    write_json(keys, merged)
    console.print(
        f"explanation project {result.project_id}: {result.imported} imported, "
        f"{result.already_there} already there; keys in {keys} (keep them away from annotators)"
    )


def _load_keys(path: Path) -> dict[str, dict[int, str]]:
    """The unblinding keys (record id -> output slot -> source); a malformed file is one line naming it."""
    from rwpost.errors import RecordError
    from rwpost.io import read_json

    if not path.exists():
        return {}
    raw = read_json(path)
    try:
        return {str(rid): {int(slot): str(src) for slot, src in key.items()} for rid, key in raw.items()}
    except (AttributeError, TypeError, ValueError) as exc:
        problem = "expected {record id: {slot number: source}}"
        raise RecordError(problem, source=str(path)) from exc


@annotate_app.command("pull")
@_talks_to_server
def pull(
    out: Path = OUT,
    keys: Path = typer.Option(
        Path("state/label-studio/explanation_keys.json"),
        "--keys",
        help="Unblinding keys written by push-explanations.",
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Export annotations as typed records: validation_verdicts.jsonl, explanation_scores.jsonl, rejects.

    Example: rwpost annotate pull --out state/label-studio/export
    """
    from rich.table import Table

    from rwpost.annotate import workflow
    from rwpost.annotate.merge import resolve_verdicts
    from rwpost.io import check_outputs, sorted_by_id, sorted_rejects, write_jsonl
    from rwpost.records import Reject

    check_outputs([out / name for name in PULLED], [keys], overwrite=overwrite)
    client, _ = _client(state, url, port)
    rejects: list[Reject] = []
    verdicts = workflow.pull_validation(client, rejects)
    scores = workflow.pull_explanations(client, _load_keys(keys), rejects)
    human = resolve_verdicts(verdicts)
    write_jsonl(out / "validation_verdicts.jsonl", sorted_by_id(verdicts))
    write_jsonl(out / "human_verdicts.jsonl", sorted_by_id(human))
    write_jsonl(out / "explanation_scores.jsonl", sorted_by_id(scores))
    write_jsonl(out / "rejects.jsonl", sorted_rejects(rejects))
    table = Table("file", "records")
    for name, rows in (
        ("validation_verdicts.jsonl", verdicts),
        ("human_verdicts.jsonl", human),
        ("explanation_scores.jsonl", scores),
        ("rejects.jsonl", rejects),
    ):
        table.add_row(str(out / name), str(len(rows)))
    console.print(table)


@annotate_app.command("push-ratings")
@_talks_to_server
def push_ratings(
    store: Path = typer.Argument(..., help="A multi-site crawl store (folder or articles.jsonl)."),
    annotators: str = typer.Option(
        "", "--annotators", help="Comma-separated e-mails to sign up as annotators."
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    configs: Path = CONFIGS,
    guidelines: Path = GUIDELINES,
) -> None:
    """Put the ratings no table maps (rwpost labels --unknown STORE) into the rating-mapping project, one
    task per site, language and rating; rerun it to send disagreements to the adjudicator.

    Example: rwpost annotate push-ratings data/work/multisite/crawl --annotators a@x.org,b@x.org
    """
    from rwpost.annotate import ratings, sync
    from rwpost.annotate.server import load_annotators, save_annotators
    from rwpost.io import read_records
    from rwpost.records import CrawledArticle, Reject
    from rwpost.sites.ratings import unmapped_rating_rows

    path = store / "articles.jsonl" if store.is_dir() else store
    if not path.is_file():
        raise ConfigError(f"{path}: no crawl store here (expected articles.jsonl)")
    rejects: list[Reject] = []
    rows, read = unmapped_rating_rows(read_records(path, CrawledArticle, rejects=rejects))
    if not read:
        raise ConfigError(f"{path}: no multi-site record (rwpost labels --unknown lists Snopes ratings)")
    client, url = _client(state, url, port)
    result = ratings.push_ratings(
        client, rows, configs_dir=configs, guidelines_dir=guidelines, rejects=rejects
    )
    console.print(
        f"rating-mapping project {result.tasks.project_id}: {result.tasks.imported} ratings imported, "
        f"{result.tasks.already_there} already there (of {read} multi-site articles)"
    )
    if result.adjudication is not None:
        console.print(
            f"adjudication project {result.adjudication.project_id}: {result.adjudication.imported} "
            f"disputed ratings imported, {result.adjudication.already_there} already there"
        )
    emails = [e.strip() for e in annotators.split(",") if e.strip()]
    paths = _paths(state)
    if emails:
        known = load_annotators(paths.annotators)
        passwords = sync.ensure_annotators(client, url, emails, known)
        if passwords != known:
            save_annotators(paths.annotators, passwords)
        console.print(f"annotators ready: {', '.join(emails)} (passwords saved in {paths.annotators})")
    if rejects:
        from rwpost.io import write_jsonl

        write_jsonl(paths.root / "push_ratings_rejects.jsonl", rejects)
        console.print(f"{len(rejects)} bad lines set aside in {paths.root / 'push_ratings_rejects.jsonl'}")


@annotate_app.command("pull-ratings")
@_talks_to_server
def pull_ratings(
    out: Path = typer.Option(
        EXPORT / "ratings-reviewed.yaml", "--out", help="The new version of the reviewed rating table."
    ),
    base: Path = typer.Option(
        None, "--base", help="The table it extends (default: the packaged ratings-reviewed.yaml)."
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    overwrite: bool = OVERWRITE,
) -> None:
    """Write the agreed and adjudicated rating mappings as the next version of the reviewed rating table
    (the packaged one plus the new rows); disputed and pending ratings are listed, not written.

    Example: rwpost annotate pull-ratings --out ratings-reviewed.yaml &&
    cp ratings-reviewed.yaml rwpost/sites/ratings-reviewed.yaml   (review the diff)
    """
    from rich.table import Table

    from rwpost.annotate import ratings
    from rwpost.io import check_outputs, sorted_rejects, write_jsonl, write_text
    from rwpost.records import Reject
    from rwpost.sites.rating_table import REVIEWED_FILE, dump_rating_table, load_rating_table, updated_table

    base = base or REVIEWED_FILE
    rejects_path = out.with_name(out.name + ".rejects.jsonl")
    check_outputs([out, rejects_path], [base], overwrite=overwrite)
    table = load_rating_table(base)
    client, _ = _client(state, url, port)
    rejects: list[Reject] = []
    resolved = ratings.resolve_ratings(ratings.pull_ratings(client, rejects))
    new_table, new_rows = updated_table(table, resolved.rows)
    summary = Table("ratings", "count")
    summary.add_row("new in the table", str(len(new_rows)))
    summary.add_row("already in the table", str(len(resolved.rows) - len(new_rows)))
    for status, open_rows in resolved.open.items():
        summary.add_row(f"{status} (not written)", str(len(open_rows)))
    console.print(summary)
    for verdict in resolved.open["disputed"]:
        console.print(f"  disputed: {verdict.site} ({verdict.language}) {verdict.rating!r}", soft_wrap=True)
    if rejects:
        write_jsonl(rejects_path, sorted_rejects(rejects))
        console.print(f"{len(rejects)} annotations set aside in {rejects_path}")
    if not new_rows:
        console.print(
            f"no new reviewed rating: {base} (version {table.version}) stays as it is; nothing written"
        )
        return
    write_text(out, dump_rating_table(new_table))
    console.print(
        f"wrote {out}: version {new_table.version} of the reviewed rating table ({len(new_rows)} new rows); "
        f"adopt it with: cp {out} rwpost/sites/ratings-reviewed.yaml",
        soft_wrap=True,
    )


@annotate_app.command("adjudicate")
@_talks_to_server
def adjudicate(
    verdicts: Path = typer.Option(
        PULLED_VERDICTS, "--verdicts", help="Validation verdicts (default: what annotate pull wrote)."
    ),
    state: Path = STATE,
    url: str = URL,
    port: int = PORT,
    configs: Path = CONFIGS,
    guidelines: Path = GUIDELINES,
) -> None:
    """Send records whose two annotators disagreed to the adjudication project (one adjudicator each).

    Example: rwpost annotate pull && rwpost annotate adjudicate
    """
    from rwpost.annotate import workflow
    from rwpost.io import read_records
    from rwpost.records import ValidationVerdict

    loaded = list(read_records(verdicts, ValidationVerdict))
    client, _ = _client(state, url, port)
    result = workflow.push_adjudication(
        client, loaded, configs_dir=configs, files_root=_paths(state).files, guidelines_dir=guidelines
    )
    console.print(
        f"adjudication project {result.project_id}: {result.imported} disputed records imported, "
        f"{result.already_there} already there"
    )


@annotate_app.command("agreement")
def agreement(
    verdicts: Path = typer.Option(
        PULLED_VERDICTS, "--verdicts", help="Validation verdicts (default: what annotate pull wrote)."
    ),
    scores: Path = typer.Option(
        PULLED_SCORES, "--scores", help="Explanation scores (default: what annotate pull wrote)."
    ),
    compare: str = typer.Option("", "--compare", help="Two sources to compare, e.g. agentfact,lemma."),
    out: Path = typer.Option(Path("reports/annotation"), "--out", help="Folder of agreement.{json,md}."),
    resamples: int = typer.Option(10_000, "--resamples", min=1, help="Bootstrap resamples."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
    overwrite: bool = OVERWRITE,
) -> None:
    """Cohen's kappa and Krippendorff's alpha per question; explanation scores as in paper Table IV.

    Example: rwpost annotate agreement --compare agentfact,lemma
    """
    from rwpost.annotate.report import annotation_report, report_markdown
    from rwpost.io import check_outputs, read_records, write_json, write_text
    from rwpost.records import ExplanationScore, ValidationVerdict

    for given, default in ((verdicts, PULLED_VERDICTS), (scores, PULLED_SCORES)):
        if given != default and not given.is_file():  # a path the user named: a typo is not "nothing"
            raise ConfigError(f"{given}: file not found")
    check_outputs([out / "agreement.json", out / "agreement.md"], [verdicts, scores], overwrite=overwrite)
    loaded_v = list(read_records(verdicts, ValidationVerdict)) if verdicts.exists() else []
    loaded_s = list(read_records(scores, ExplanationScore)) if scores.exists() else []
    if not loaded_v and not loaded_s:
        raise ConfigError(
            f"nothing to measure: neither {verdicts} nor {scores} has records (run rwpost annotate pull)"
        )
    pair = tuple(x.strip() for x in compare.split(",")) if compare else None
    if pair is not None and len(pair) != 2:
        raise ConfigError(f"--compare takes two source names separated by a comma, got {compare!r}")
    report = annotation_report(loaded_v, loaded_s, compare=pair, resamples=resamples)
    write_json(out / "agreement.json", report)
    write_text(out / "agreement.md", report_markdown(report))
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        console.print(report_markdown(report))
        console.print(f"wrote {out / 'agreement.json'} and {out / 'agreement.md'}")


@annotate_app.command("merge")
def merge(
    records: Path = typer.Argument(..., help="JSONL of Sample records (or released records) to update."),
    verdicts: Path = typer.Option(
        PULLED_VERDICTS, "--verdicts", help="Validation verdicts (default: what annotate pull wrote)."
    ),
    out: Path = typer.Option(
        Path("state/label-studio/merged"), "--out", help="Folder of the merged outputs."
    ),
    overwrite: bool = OVERWRITE,
) -> None:
    """Apply agreed and adjudicated human verdicts to samples (they override the model's decisions).

    Writes samples.jsonl, decisions.jsonl (filter human_validation) and disputed.jsonl.

    Example: rwpost annotate merge data/sample/released/rwpost_dev_main.head.jsonl
    """
    from rich.table import Table

    from rwpost.io import check_outputs
    from rwpost.stages import annotate_merge as stage

    outputs = [out / name for name in stage.OUTPUT_FILES]
    check_outputs(outputs, [records, verdicts], overwrite=overwrite)
    if not verdicts.exists():
        raise ConfigError(f"{verdicts}: file not found (export it with: rwpost annotate pull)")
    summary = stage.run(stage.Params(samples=records, verdicts=verdicts, out=out)).counts
    rates = summary["post_link"]
    table = Table("outcome", "records")
    for key, value in summary.items():
        if key != "post_link":
            table.add_row(key, str(value))
    console.print(table)
    pct = {
        k: "n/a" if rates[k] is None else f"{100 * rates[k]:.2f}%"
        for k in ("correct_rate", "false_positive_rate")
    }
    console.print(
        f"post links: correct in {pct['correct_rate']} of {rates['link_containing']} link-containing "
        f"articles, false positives in {pct['false_positive_rate']} of {rates['link_absent']} link-absent "
        "ones (paper III-D)"
    )
    console.print(f"wrote {out}/samples.jsonl, decisions.jsonl, disputed.jsonl, summary.json")


def register(app: typer.Typer) -> None:
    app.add_typer(annotate_app, name="annotate")
