"""Write a run's reports: metrics JSON, Markdown, per-sample scores, plots, manifest.

Files in the run folder::

    run.json                what the run is (a restart must match it)
    predictions.jsonl       every answer, appended as it comes (resume point)
    metrics.json            headline keys (accuracy, macro_f1, weighted_f1, ...) + views, breakdowns,
                            ledger, audit, explanations, repeats (log.RunMetrics)
    manifest.json           code version, data checksum, detector config, prompt hashes, seed, device
                            (log.RunManifest)
    scored.jsonl            per sample: gold, predicted, correct, flagged, ledger (log.ScoredSample)
    explanations.jsonl      paired explanations (gold + this system) for human evaluation
    input_report.json       problems found in the detector's inputs (predictions files)
    report.md, plots/*.png  (the figures only when asked: ``plots=True``)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.evaluate.explanations import paired_explanations
from rwpost.evaluate.log import METRIC_TITLES, Coverage, RunManifest, RunMetrics, TrainFile, ViewScores
from rwpost.evaluate.metrics import FAILURE_POLICIES, HEADLINE
from rwpost.evaluate.plots import category_plot, confusion_plot, reliability_plot
from rwpost.evaluate.runner import RunResult, RunSpec
from rwpost.evaluate.scoring import PRIMARY_ORDER, combine_repeats, score_run, scored_rows
from rwpost.io import write_json, write_jsonl, write_text
from rwpost.markdown import markdown_table
from rwpost.records import Sample

SCORING_CONVENTIONS = (
    "An answer outside a view's classes (a Mixture answer on a main row) is a miss of its gold class and a "
    "false alarm of every other class; macro F1 averages over the view's whole label set, classes absent "
    "from the gold included."
)
"""The scoring conventions that change a number, as every report states them."""


def benchmark_scores(name: str | None) -> Any:
    """The ``own_scores`` of the benchmark a run was scored on (None for RW-Post, or when it has none)."""
    if name is None:
        return None
    from rwpost.evaluate.datasets import ADAPTERS

    return ADAPTERS[name]().own_scores if name in ADAPTERS else None


def benchmark_space(name: str | None) -> Any:
    """The label space of the benchmark a run was scored on (None for RW-Post: the paper's views)."""
    if name is None:
        return None
    from rwpost.evaluate.datasets import ADAPTERS

    return ADAPTERS[name]().space if name in ADAPTERS else None


def write_reports(
    samples: Sequence[Sample],
    spec: RunSpec,
    result: RunResult,
    out: Path,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    plots: bool = False,
) -> RunMetrics:
    """Score every repeat and write the run folder's reports; returns the typed ``metrics.json``. With
    ``plots`` the figures are drawn into ``plots/`` and report.md shows them; without, it links none."""
    runs = [
        score_run(
            samples,
            preds,
            blocklist=spec.blocklist,
            prices=spec.prices,
            n_resamples=spec.n_resamples,
            seed=spec.seed,
            encode=encode if i == 0 else None,
            failures=spec.failures,
            space=benchmark_space(result.manifest.data.benchmark),
        )
        for i, preds in enumerate(result.predictions)
    ]
    scores = combine_repeats(runs)
    metrics = RunMetrics(
        system=spec.system,
        detector=spec.detector,
        setting=str(spec.setting),
        **{k: getattr(scores, k) for k in scores.model_fields_set},
    )
    if result.input_report is not None:
        metrics.input_problems = result.input_report.get("problems", {})
        write_json(out / "input_report.json", result.input_report)
    first = result.predictions[0]
    own = benchmark_scores(result.manifest.data.benchmark)
    if own is not None:
        metrics.benchmark_scores = own(samples, first, metrics.dump()) or None
    write_json(out / "metrics.json", metrics.dump())
    write_json(out / "manifest.json", result.manifest.dump())
    flagged = set(runs[0].audit.flagged_ids)
    space = benchmark_space(result.manifest.data.benchmark)
    rows = scored_rows(samples, first, flagged, spec.prices, result.predictions, space)
    write_jsonl(out / "scored.jsonl", [row.dump() for row in rows])
    write_jsonl(out / "explanations.jsonl", paired_explanations(samples, first, spec.system))
    figures = write_plots(metrics, out / "plots") if plots else []
    write_text(out / "report.md", markdown(metrics, result.manifest, figures))
    return metrics


def write_plots(metrics: RunMetrics, folder: Path) -> list[Path]:
    """Confusion matrix and reliability diagram of each non-empty view, F1 per category."""
    paths = []
    for name, view in metrics.views.items():
        if not view.n or view.confusion_matrix is None:
            continue
        paths.append(
            confusion_plot(
                view.confusion_matrix, folder / f"confusion_{name}.png", f"{metrics.system}: {name}"
            )
        )
        if view.reliability:
            paths.append(
                reliability_plot(view.reliability, folder / f"reliability_{name}.png", f"{name} calibration")
            )
    categories = metrics.breakdowns.get("category")
    if categories:
        paths.append(
            category_plot(categories, folder / "category_f1.png", f"{metrics.system}: F1 per category")
        )
    return paths


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _ci(view: ViewScores, key: str) -> str:
    ci = (view.ci95 or {}).get(key)
    value = getattr(view, key)
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and value is not None else _fmt(value)


def _training(manifest: RunManifest) -> list[str]:
    """The line naming a trained detector's training samples: where they came from and how many."""
    if manifest.train is None:
        return []
    source = manifest.data.train or TrainFile()
    if source.path:
        where = f"{source.path} (sha256 {(source.sha256 or '-')[:12]})"
    elif source.fraction is not None:
        where = f"--train-fraction {source.fraction:g} of the data ({source.split_of_data})"
    else:
        where = "samples given in code"
    unlabelled = f", {source.excluded_unlabelled} unlabelled left out" if source.excluded_unlabelled else ""
    return [f"Trained on: {where}, {manifest.train.samples} samples{unlabelled}."]


def coverage_cell(coverage: Coverage | None) -> str:
    """``answered/total``, marked ``(!)`` below 100 %."""
    if coverage is None:
        return "-"
    mark = " (!)" if coverage.answered < coverage.total else ""
    return f"{coverage.answered}/{coverage.total}{mark}"


def policy_title(failures: str) -> str:
    """The failure policy as a table header names it."""
    return f"failures: {failures}, {FAILURE_POLICIES.get(failures, '?')}"


def outage_notes(manifest: RunManifest, prefix: str = "") -> list[str]:
    """What an outage did to the run: answers asked again on resume, answers still failed for a transport
    reason (the report's ledger section and the command line's summary say the same)."""
    notes = []
    if manifest.retried_transport_failures:
        notes.append(
            f"{prefix}resumed: {manifest.retried_transport_failures} answers that had failed for a transport "
            "reason (server error, rate limit, timeout, no connection) were asked again"
        )
    if manifest.transport_failures:
        notes.append(
            f"{prefix}{manifest.transport_failures} answers failed for a transport reason (server error, "
            "rate limit, timeout, no connection, every search failed): run the same command again to ask "
            "for them"
        )
    retrieval = manifest.retrieval
    if retrieval is not None and retrieval.failed:
        notes.append(
            f"{prefix}retrieval: {retrieval.failed} of {retrieval.tool_calls} searches failed; "
            f"{retrieval.predictions_without_retrieval} of {retrieval.predictions} answers were made "
            "without one working search"
        )
    return notes


def markdown(metrics: RunMetrics, manifest: RunManifest, plots: Sequence[Path]) -> str:
    """The human-readable report of one run."""
    data = manifest.data
    failures = metrics.failures
    repeats = metrics.repeats
    lines = [
        f"# {metrics.system}",
        "",
        f"Detector `{metrics.detector}`, setting **{metrics.setting}**, "
        f"{metrics.n_samples} samples, seed {manifest.seed}, code {manifest.code_version}, "
        f"device {manifest.device}.",
        f"Data: {data.path or '-'} (sha256 {(data.sha256 or '-')[:12]})."
        + (
            f" Authors' denominators: {data.left_out} claims whose post image is missing or does not open "
            f"are left out (their loader's rule); ours would score {data.samples + (data.left_out or 0)}."
            if data.denominators == "authors"
            else ""
        ),
        *_training(manifest),
        *(
            [
                "Asked through the provider's Batch API (--batch-api): the calls it answered are priced at "
                "its rate."
            ]
            if manifest.batch_api
            else []
        ),
        *(
            [
                f"Deterministic detector: run once, not the {manifest.repeats_asked} repeats asked (its "
                "answers do not depend on the seed, so every repeat would be the same)."
            ]
            if manifest.repeats_asked
            else []
        ),
        f"Answered: {coverage_cell(metrics.coverage)}"
        + (" - below 100 %: read the scores with the failure policy below." if metrics.partial() else "."),
    ]
    if manifest.notes:
        lines += ["", "## Notes", "", *(f"- **{note}**" for note in manifest.notes)]
    if metrics.benchmark_scores:
        keys = list(dict.fromkeys(k for table in metrics.benchmark_scores.values() for k in table))
        lines += [
            "",
            f"## {data.benchmark}'s own metrics" + (" (repeat 0)" if repeats else ""),
            "",
            "As the benchmark's evaluation script computes them, beside this toolkit's views below.",
            "",
            *markdown_table(
                ["", *keys],
                (
                    [name, *(f"{table[k]:.3f}" if k in table else "-" for k in keys)]
                    for name, table in metrics.benchmark_scores.items()
                ),
            ),
        ]
    if manifest.retrieval is not None and manifest.retrieval.never_worked:
        lines += [
            "",
            f"**Retrieval never worked: every one of the {manifest.retrieval.failed} searches failed, so "
            f"these are closed-book answers, not {metrics.setting} ones.** Fix the search backend and run "
            "the same command again.",
        ]
    if repeats:
        spreads = repeats.headline
        lines += [
            "",
            f"## Headline: mean ± sd over {repeats.n} repeats ({policy_title(failures)})",
            "",
            *markdown_table(
                ["metric", "mean ± sd", *(f"repeat {i}" for i in range(repeats.n))],
                (
                    [METRIC_TITLES[key], f"{s.mean:.3f} ± {s.std:.3f}", *(f"{v:.3f}" for v in s.values)]
                    for key in HEADLINE
                    if (s := spreads.get(key))
                ),
            ),
        ]
    of = " of repeat 0" if repeats else ""
    scored = {name: view for name, view in metrics.views.items() if view.n}
    lines += [
        "",
        f"## Scores{of} (95% bootstrap intervals; {policy_title(failures)})",
        "",
        *markdown_table(
            ["view", "n", "coverage", *(METRIC_TITLES[k] for k in HEADLINE), "ROC-AUC", "ECE"],
            (
                [
                    view.title,
                    view.n,
                    coverage_cell(view.coverage),
                    *(_ci(view, k) for k in HEADLINE),
                    _fmt(view.roc_auc_ovr),
                    _fmt(view.ece),
                ]
                for view in scored.values()
            ),
        ),
    ]
    macro = [f"{name}: {', '.join(view.macro_classes or [])}" for name, view in scored.items()]
    lines += ["", "Macro F1 averages over the classes " + "; ".join(macro) + "."]
    lines += [SCORING_CONVENTIONS]
    own = metrics.views.get(metrics.primary_view or "")
    if own is not None and not own.derived and metrics.primary_view not in PRIMARY_ORDER:
        lines += [f"The primary view `{own.view}` is the benchmark's own label space: {own.description}."]
    if any(v.derived for v in scored.values()):
        lines += [
            "A view marked (derived) is scored from the detector's 3-class answers, not asked as 2 classes."
        ]
    images = manifest.images
    if images:
        missing = f"{images.missing} missing" + (
            f" ({', '.join(images.missing_ids[:10])})" if images.missing_ids else ""
        )
        sent = (
            f"not sent (the detector does not read images; {images.expected} expected, {missing})"
            if images.sent is None
            else f"{images.sent} sent of {images.expected} expected, {missing}"
        )
        lines += ["", f"Images: {sent}."]
    primary = metrics.primary()
    if primary is not None:
        lines += [
            "",
            f"## Per class ({metrics.primary_view}{of}; {policy_title(failures)})",
            "",
            *markdown_table(
                ["class", "precision", "recall", "F1", "support"],
                (
                    [cls, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", s.support]
                    for cls, s in (primary.per_class or {}).items()
                ),
            ),
        ]
        cm = primary.confusion_matrix
        if cm is not None:
            lines += [
                "",
                "Confusion matrix (rows gold, columns predicted):",
                "",
                *markdown_table(
                    ["", *cm.labels],
                    ([label, *row] for label, row in zip(cm.labels, cm.matrix, strict=False)),
                ),
            ]
    lines += [
        "",
        "## Breakdowns",
        "",
        "Difficulty is the number of gold evidence items (paper Fig. S1). A group of one sample has no "
        "macro F1 (it would be 1 or 0 by chance).",
        "",
    ]
    for dimension, groups in metrics.breakdowns.items():
        lines += [
            f"**{dimension}**",
            "",
            *markdown_table(
                ["group", "n", "accuracy", "macro F1"],
                (
                    [group, s.n, f"{s.accuracy:.3f}", f"{s.macro_f1:.3f}" if s.n > 1 else "- (n=1)"]
                    for group, s in groups.items()
                ),
            ),
            "",
        ]
    cov, ledger, audit = metrics.coverage, metrics.ledger, metrics.audit
    lines += [
        "## Coverage, ledger, audit",
        "",
        f"- predictions with a label: {cov.predicted} of {metrics.n_samples}; "
        f"without: {cov.no_label} {cov.no_label_reasons or ''}",
        f"- probabilities not scored (outside [0, 1] or not summing to 1): "
        f"{cov.invalid_probabilities} {cov.invalid_probability_ids[:5] or ''}",
        f"- calls {ledger.calls} (model {ledger.model_calls}, tool {ledger.tool_calls}), tokens in "
        f"{ledger.tokens_in} / out {ledger.tokens_out}, latency {ledger.latency_s:.2f}s, "
        f"cost ${ledger.cost_usd:.4f} paid, ${ledger.list_cost_usd:.4f} at list price "
        f"(no cache) ({ledger.unpriced_calls} unpriced), cache hits {ledger.cache_hits}",
        f"- leakage audit: {audit.flagged} predictions cite a blocked domain {audit.domains or ''}",
    ]
    if audit.excluding_flagged and audit.excluding_flagged.model_fields_set:
        ex = audit.excluding_flagged
        lines.append("  - excluding them: " + ", ".join(f"{k} {_fmt(getattr(ex, k))}" for k in HEADLINE))
    leakage = manifest.leakage
    if leakage:
        reasons = ", ".join(f"{k} {v}" for k, v in leakage.by_reason.items()) or "none"
        block_list = leakage.block_list or manifest.blocked_domain_list
        lines.append(
            f"- leakage guard: {leakage.dropped} retrieved results dropped before the detector saw them, "
            f"in {leakage.predictions_with_drops} of {leakage.predictions} predictions (by reason: "
            f"{reasons}); block list {block_list.source if block_list else '-'}, "
            f"{block_list.count if block_list else '-'} domains"
        )
    lines += outage_notes(manifest, prefix="- ")
    explanations = metrics.explanations
    if explanations is not None:
        urls = explanations.evidence_urls
        recall = _fmt(urls.macro_recall) if urls.samples_citing else "-"  # no sample cites: nothing to recall
        lines.append(
            f"- evidence URLs vs gold: macro precision {_fmt(urls.macro_precision)}, macro recall "
            f"{recall} ({urls.samples_citing} samples cite URLs)"
        )
        kp = explanations.key_points
        if kp and kp.not_scored:
            lines.append(f"- key-point coverage: - (not scored: {kp.not_scored})")
        elif kp:
            lines.append(
                f"- key-point coverage: {_fmt(kp.coverage)} at cosine >= {kp.threshold} "
                f"(mean similarity {_fmt(kp.mean_similarity)}, {kp.samples} samples)"
            )
        else:
            lines.append(
                "- key-point coverage: - (not scored: key points off, --no-key-points or "
                "evaluate.key_points: false)"
            )
    if metrics.input_problems:
        lines.append(f"- input problems (see input_report.json): {metrics.input_problems}")
    if ledger.by_agent:
        lines += [
            "",
            "## Ledger per agent",
            "",
            *markdown_table(
                [
                    "agent",
                    "calls",
                    "model",
                    "tool",
                    "tokens in",
                    "tokens out",
                    "latency s",
                    "cost $",
                    "unpriced",
                    "cache hits",
                ],
                (
                    [
                        agent,
                        t.calls,
                        t.model_calls,
                        t.tool_calls,
                        t.tokens_in,
                        t.tokens_out,
                        f"{t.latency_s:.2f}",
                        f"{t.cost_usd:.4f}",
                        t.unpriced_calls,
                        t.cache_hits,
                    ]
                    for agent, t in ledger.by_agent.items()
                ),
            ),
        ]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}](plots/{p.name})" for p in plots]
    return "\n".join(lines) + "\n"
