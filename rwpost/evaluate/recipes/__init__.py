"""Recipes: a paper table as runs to make, and the paper's own figures to print beside ours.

A recipe (a YAML file shipped here, ``rwpost-table3.yaml``, ``rwpost-table5.yaml``,
``t2agent-mmfakebench.yaml``, ``agentm3d-mmfakebench.yaml``, or a file of the same shape) names the
detectors with their options (the paper's rows), the input cells per dataset, the failure policy the
table's numbers imply, the metrics in the table's order and the table's figures as printed, each
with where it stands (table, row, column). ``rwpost evaluate --recipe NAME --data ...`` plans the
recipe's runs on the given data (``--set``/``--model`` substitute options in every row, e.g. another
model or a loopback server); params.yaml's ``evaluate.recipe`` does the same for the stage. The leaderboard
of a recipe run then shows, for every figure of the dataset scored, the paper's value, ours with its 95%
bootstrap interval, and the difference (:func:`beside_paper`), in the paper's unit, and each component the
run substituted for the recipe's (another model, search or base URL, read from the run's manifest): such a
row is marked as a smoke test, not a reproduction.

The runs' dataset is the benchmark of ``--data NAME:FOLDER`` (:mod:`rwpost.evaluate.datasets`), or
``rwpost`` for RW-Post's own files; a run belongs to a row by its label (the first part of its system name).
Rows the toolkit cannot run (CCN, Sniffer, LEMMA, DEFAME) are printed with the paper's figures only.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rwpost.errors import ConfigError
from rwpost.evaluate.log import METRIC_TITLES, RunManifest, RunMetrics, read_log
from rwpost.evaluate.metrics import HEADLINE
from rwpost.evaluate.plan import DetectorEntry
from rwpost.io import validation_problem
from rwpost.markdown import markdown_table
from rwpost.urls import url_parts

RWPOST = "rwpost"
"""The dataset name of RW-Post's own files (released JSONL, Parquet splits, the bundled sample)."""


BENCHMARK_TABLE = "benchmark_scores."
"""A figure's ``view`` prefix naming a table of the benchmark's own metrics (``metrics.json``)."""

TABLE_KEYS = {
    "accuracy": "accuracy",
    "macro_f1": "f1",
    "macro_precision": "precision",
    "macro_recall": "recall",
}
"""A recipe metric -> its key in a benchmark's own table (MMFakeBench's ``main_eval_only.py``: macro
precision, recall and F1 over its classes)."""

TITLES = {**METRIC_TITLES, "macro_precision": "macro precision", "macro_recall": "macro recall"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecipeRow(_Strict):
    """One row the recipe runs: a registered detector, its options, the paper's name for it."""

    label: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    """The runs' folder and system name (``<label>/<cell>``)."""
    detector: str
    config: dict[str, Any] = Field(default_factory=dict)
    paper: str
    """The paper's row name (``AgentFact``, ``w/o Agent-SP``): whose figures the runs are compared with."""


class PaperFigures(_Strict):
    """One row of the paper's table as printed: a system on a dataset, scored in one of our views."""

    dataset: str
    system: str
    view: str
    """Our view the figures compare with (``main``: 3 classes; ``binary``: the OOC task's two), or a table
    of the benchmark's own metrics (``benchmark_scores.multiclass``: MMFakeBench's 4-class scores)."""
    values: dict[str, float]
    """Metric (``weighted_f1``, ``accuracy``...) -> the figure as printed, in the table's unit."""
    where: str
    """Where it stands: table, row (and the column when it is not the metric's own)."""


class Recipe(_Strict):
    """A paper table: the runs that reproduce it and the figures they are compared with."""

    name: str
    title: str
    source: str
    """The paper and table the figures are transcribed from."""
    failures: Literal["wrong", "exclude", "class"]
    failures_reason: str
    """Why this policy: what in the table's numbers implies it."""
    metrics: list[str] = Field(min_length=1)
    """The table's metrics in its column order (keys of :data:`~rwpost.evaluate.metrics.HEADLINE`)."""
    scale: float = 1.0
    """The table's unit: 100 when it prints percentages, 1 for fractions."""
    settings: dict[str, list[str]] = Field(min_length=1)
    """Dataset -> its input cells (``default``: any dataset not named)."""
    rows: list[RecipeRow] = Field(min_length=1)
    figures: list[PaperFigures] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def cells(self, dataset: str) -> list[str]:
        """The input cells the paper scored ``dataset`` in."""
        return self.settings.get(dataset) or self.settings.get("default") or []

    def entries(self, overrides: dict[str, Any] | None = None, **each: Any) -> list[DetectorEntry]:
        """The rows as planner entries; ``overrides`` (``--set``, ``--model``) replace options in each row."""
        return [
            DetectorEntry(name=r.detector, label=r.label, config={**r.config, **(overrides or {})}, **each)
            for r in self.rows
        ]


def recipe_names() -> list[str]:
    """The recipes shipped with rwpost."""
    folder = resources.files(__name__)
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_recipe(name: str | Path) -> Recipe:
    """A shipped recipe by name, or a recipe file; one-line ConfigError for an unknown name or a bad file."""
    import yaml

    shipped = resources.files(__name__) / f"{name}.yaml"
    if shipped.is_file():
        text, where = shipped.read_text(encoding="utf-8"), f"recipe {name}"
    elif Path(name).is_file():
        text, where = Path(name).read_text(encoding="utf-8"), str(name)
    else:
        raise ConfigError(f"--recipe {name}: no such recipe or file (shipped: {', '.join(recipe_names())})")
    try:
        recipe = Recipe.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not YAML ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        message, field = validation_problem(exc)
        raise ConfigError(f"{where}: {field + ': ' if field else ''}{message}") from None
    known = (*HEADLINE, *TABLE_KEYS)
    unknown = [m for m in recipe.metrics if m not in known]
    if unknown:
        names = ", ".join(dict.fromkeys(known))
        raise ConfigError(f"{where}: unknown metric {unknown[0]!r} (known: {names})")
    return recipe


class RecipeChoice(_Strict):
    """params.yaml's ``evaluate.recipe``: a recipe's name (or file), and options for every row."""

    name: str
    set: dict[str, Any] = Field(default_factory=dict)


def stage_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The ``evaluate:`` section with its ``recipe`` applied: the recipe's rows, RW-Post's cells, no
    evidence-k and the recipe's failure policy replace the section's ``detectors``, ``settings``, ``k`` and
    ``failures``."""
    choice = data.get("recipe")
    if not choice:
        return data
    choice = RecipeChoice(name=choice) if isinstance(choice, str) else RecipeChoice.model_validate(choice)
    recipe = load_recipe(choice.name)
    rows = [{"name": r.detector, "label": r.label, "config": {**r.config, **choice.set}} for r in recipe.rows]
    return {**data, "detectors": rows, "settings": recipe.cells(RWPOST), "k": [], "failures": recipe.failures}


def recipe_for_data(name: str, data: str | Path, settings: dict[str, Any]) -> Recipe:
    """The recipe ``name`` of a command scoring ``data``: where ``settings`` (the command's options)
    leave ``settings`` or ``failures`` unset (None), the recipe's cells for ``data``'s dataset and its
    failure policy are set in it."""
    from rwpost.evaluate.datasets import parse_data_spec

    chosen = load_recipe(name)
    if not settings.get("settings"):
        spec = parse_data_spec(data)
        settings["settings"] = chosen.cells(spec.adapter.name if spec else RWPOST)
    if settings.get("failures") is None:
        settings["failures"] = chosen.failures
    return chosen


def _manifest(run: Path) -> RunManifest | None:
    path = run / "manifest.json"
    return read_log(path, RunManifest) if path.exists() else None


def _datasets(manifest: RunManifest | None) -> tuple[str, ...]:
    """The names a run's dataset matches a figure by: the benchmark, and the benchmark with its split
    (``mmfakebench/val``: a figure of the paper's split sits beside runs on that split only)."""
    data = manifest.data if manifest is not None else None
    if data is None or not data.benchmark:
        return (RWPOST,)
    return (data.benchmark, f"{data.benchmark}/{data.split}") if data.split else (data.benchmark,)


def _same(ran: Any, wanted: Any) -> bool:
    """Whether a run's resolved option is the recipe's (a single value a detector resolves to a list of
    one, ``ablate: sp`` -> ``["sp"]``, is the same)."""
    if isinstance(ran, (list, tuple)) and not isinstance(wanted, (list, tuple)):
        return list(ran) == [wanted]
    if isinstance(ran, (list, tuple)):
        return list(ran) == list(wanted)
    return bool(ran == wanted)


def _server(url: str) -> str:
    """A base URL as the leaderboard names it: host and port only (never a credential it may hold)."""
    parts = url_parts(url)
    return f"{parts.hostname or url}{f':{parts.port}' if parts.port else ''}"


def substitutions(row: RecipeRow, manifest: RunManifest | None) -> list[str] | None:
    """What a run of ``row`` ran with in place of the paper's components, from the run's manifest (the
    detector's options as resolved): each recipe option the run changed (``search: loopback (recipe:
    serper)``) and a base URL other than the provider's default (``base_url: 127.0.0.1:8000``). Empty: the
    recipe's components as written; None: a run without a manifest (not known)."""
    if manifest is None:
        return None
    config = manifest.detector_config
    ran = (config[0] if config else {}) if isinstance(config, list) else config
    found = [
        f"{key}: {_plain(ran.get(key))} (recipe: {_plain(wanted)})"
        for key, wanted in row.config.items()
        if key in ran and not _same(ran[key], wanted)
    ]
    if ran.get("base_url") and "base_url" not in row.config:
        found.append(f"base_url: {_server(str(ran['base_url']))} (recipe: the provider's API)")
    return found


def _plain(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _num(value: float | None, scale: float, sign: str = "") -> str:
    """A number in the paper's unit, at the table's precision (percent: 1 decimal; fractions: 3)."""
    if value is None:
        return "-"
    return f"{value:{sign}.1f}" if scale >= 100 else f"{value:{sign}.3f}"


def _record(
    fig: PaperFigures,
    key: str,
    setting: str | None,
    metrics: RunMetrics | None,
    scale: float,
    substituted: list[str] | None = None,
):
    """One figure and metric beside our score, all in the paper's unit; ``substituted``: what the run
    changed of the recipe's components (:func:`substitutions`)."""
    if fig.view.startswith(BENCHMARK_TABLE):  # the benchmark's own table: no interval
        tables = (metrics.benchmark_scores or {}) if metrics is not None else {}
        value = tables.get(fig.view.removeprefix(BENCHMARK_TABLE), {}).get(TABLE_KEYS.get(key, key))
        ci = None
    else:
        view = metrics.views.get(fig.view) if metrics is not None else None
        value = view.headline().get(key) if view is not None and view.n else None
        ci = (view.ci95 or {}).get(key) if view is not None and value is not None else None
    ours = None if value is None else value * scale
    return {
        "dataset": fig.dataset, "system": fig.system, "view": fig.view, "setting": setting, "metric": key,
        "paper": fig.values[key], "where": fig.where, "ours": ours,
        "ci95": None if ci is None else [c * scale for c in ci],
        "difference": None if ours is None else ours - fig.values[key],
        "not_run": metrics is None,
        "substitutions": None if metrics is None else substituted,
        "reproduction": None if metrics is None or substituted is None else not substituted,
    }  # fmt: skip


def _cells(r: dict[str, Any], scale: float) -> list[Any]:
    if r["ours"] is None:
        ours = "not run here" if r["not_run"] else "no samples in this view"
    else:
        ours = _num(r["ours"], scale)
        if r["ci95"] is not None:
            ours += f" [{_num(r['ci95'][0], scale)}, {_num(r['ci95'][1], scale)}]"
    return [
        r["system"], r["dataset"], r["setting"] or "-", TITLES[r["metric"]], _num(r["paper"], scale),
        ours, _num(r["difference"], scale, "+"), _substituted_cell(r), r["where"],
    ]  # fmt: skip


def _substituted_cell(r: dict[str, Any]) -> str:
    if r["not_run"]:
        return "-"
    if r["substitutions"] is None:
        return "not known (no manifest)"
    return "; ".join(r["substitutions"]) or "none"


def beside_paper(runs: Sequence[str | Path], recipe: Recipe) -> tuple[list[str], list[dict[str, Any]]]:
    """The paper's figures beside these runs' scores: Markdown lines and one record per figure and metric
    (``paper``, ``ours``, ``ci95``, ``difference``: ours - paper, all in the paper's unit;
    ``substitutions``: what the run changed of the recipe's components, :func:`substitutions`, and
    ``reproduction``: true only when it changed none). Only the
    figures of the datasets the runs scored are shown; a row no run matches is "not run here"."""
    found: dict[tuple[str, str], list[tuple[str | None, RunMetrics | None, list[str] | None]]] = {}
    row_of = {r.label: r for r in recipe.rows}
    paper_of = {r.label: r.paper for r in recipe.rows}
    for run in map(Path, runs):
        metrics = read_log(run / "metrics.json", RunMetrics)
        label = metrics.system.split("/")[0]
        if label in paper_of:
            manifest = _manifest(run)
            changed = substitutions(row_of[label], manifest)
            for dataset in _datasets(manifest):
                found.setdefault((dataset, paper_of[label]), []).append((metrics.setting, metrics, changed))
    datasets = {dataset for dataset, _ in found}
    records = [
        _record(fig, key, setting, metrics, recipe.scale, changed)
        for fig in recipe.figures
        if fig.dataset in datasets
        for setting, metrics, changed in found.get((fig.dataset, fig.system)) or [(None, None, None)]
        for key in recipe.metrics
        if key in fig.values
    ]
    unit = "percent" if recipe.scale >= 100 else "fractions"
    header = [
        "paper row", "dataset", "our cell", "metric", "paper", "ours [95% CI]", "ours - paper",
        "substituted", "where",
    ]  # fmt: skip
    lines = [
        f"## Beside the paper: {recipe.title}",
        "",
        f"Figures transcribed from {recipe.source}; ours with the 95% bootstrap interval, in the paper's "
        f"unit ({unit}). Failures: {recipe.failures} ({recipe.failures_reason})",
        "",
        *markdown_table(header, [_cells(r, recipe.scale) for r in records]),
        "",
        *(f"- {note}" for note in recipe.notes),
    ]
    if any(r["substitutions"] for r in records):
        lines += [
            "",
            "**Substituted components:** a row whose `substituted` cell names an option ran with it in "
            "place of the recipe's (from the run's manifest): its figures are a smoke test of the toolkit, "
            "not a reproduction of the paper's.",
        ]
    if not records:
        lines += ["", "No run matches a row of the recipe (labels: " + ", ".join(paper_of) + ")."]
    return lines, records


__all__ = [
    "RWPOST",
    "PaperFigures",
    "Recipe",
    "RecipeChoice",
    "RecipeRow",
    "beside_paper",
    "load_recipe",
    "recipe_names",
    "stage_settings",
    "substitutions",
]
