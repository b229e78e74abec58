"""Write a run's reports: metrics JSON, Markdown, per-sample scores, plots, manifest.

Files in the run folder::

    run.json                what the run is (a restart must match it)
    predictions.jsonl       every answer, appended as it comes (resume point)
    metrics.json            headline keys (accuracy, macro_f1, weighted_f1, ...) + views, breakdowns,
                            ledger, audit, explanations, repeats
    manifest.json           code version, data checksum, detector config, prompt hashes, seed, device
    scored.jsonl            per sample: gold, predicted, correct, flagged, ledger
    explanations.jsonl      paired explanations (gold + this system) for human evaluation
    input_report.json       problems found in the detector's inputs (predictions files)
    report.md, plots/*.png
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.evaluate.explanations import paired_explanations
from rwpost.evaluate.metrics import FAILURE_POLICIES, HEADLINE
from rwpost.evaluate.plots import category_plot, confusion_plot, reliability_plot
from rwpost.evaluate.runner import RunResult, RunSpec
from rwpost.evaluate.scoring import combine_repeats, score_run, scored_rows
from rwpost.io import write_json, write_jsonl, write_text
from rwpost.records import Sample


def write_reports(
    samples: Sequence[Sample],
    spec: RunSpec,
    result: RunResult,
    out: Path,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    """Score every repeat and write the run folder's reports."""
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
        )
        for i, preds in enumerate(result.predictions)
    ]
    metrics = {
        "system": spec.system,
        "detector": spec.detector,
        "setting": str(spec.setting),
        **combine_repeats(runs),
    }
    if result.input_report is not None:
        metrics["input_problems"] = result.input_report.get("problems", {})
        write_json(out / "input_report.json", result.input_report)
    first = result.predictions[0]
    write_json(out / "metrics.json", metrics)
    write_json(out / "manifest.json", result.manifest)
    write_jsonl(
        out / "scored.jsonl",
        scored_rows(samples, first, set(runs[0]["audit"]["flagged_ids"]), spec.prices, result.predictions),
    )
    write_jsonl(out / "explanations.jsonl", paired_explanations(samples, first, spec.system))
    plots = write_plots(metrics, out / "plots")
    write_text(out / "report.md", markdown(metrics, result.manifest, plots))
    return metrics


def _partial(metrics: dict[str, Any]) -> bool:
    cov = metrics.get("coverage") or {}
    return bool(cov) and cov.get("answered", 0) < cov.get("total", 0)


def write_plots(metrics: dict[str, Any], folder: Path) -> list[Path]:
    """Confusion matrix and reliability diagram of each non-empty view, F1 per category."""
    paths = []
    for name, view in metrics["views"].items():
        if not view.get("n"):
            continue
        paths.append(confusion_plot(view, folder / f"confusion_{name}.png", f"{metrics['system']}: {name}"))
        if view.get("reliability"):
            paths.append(
                reliability_plot(
                    view["reliability"], folder / f"reliability_{name}.png", f"{name} calibration"
                )
            )
    categories = metrics["breakdowns"].get("category")
    if categories:
        paths.append(
            category_plot(categories, folder / "category_f1.png", f"{metrics['system']}: F1 per category")
        )
    return paths


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _ci(view: dict[str, Any], key: str) -> str:
    ci = (view.get("ci95") or {}).get(key)
    return f"{view[key]:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else _fmt(view.get(key))


METRIC_NAMES = {
    "weighted_f1": "weighted F1",
    "accuracy": "accuracy",
    "weighted_recall": "weighted recall",
    "weighted_precision": "weighted precision",
    "macro_f1": "macro F1",
}
"""Column titles of the headline metrics (paper Table III order, then macro F1)."""


def coverage_cell(coverage: dict[str, Any] | None) -> str:
    """``answered/total``, marked ``(!)`` below 100 %."""
    if not coverage:
        return "-"
    mark = " (!)" if coverage["answered"] < coverage["total"] else ""
    return f"{coverage['answered']}/{coverage['total']}{mark}"


def policy_title(failures: str) -> str:
    """The failure policy as a table header names it."""
    return f"failures: {failures}, {FAILURE_POLICIES.get(failures, '?')}"


def markdown(metrics: dict[str, Any], manifest: dict[str, Any], plots: Sequence[Path]) -> str:
    """The human-readable report of one run."""
    data = manifest["data"]
    failures = metrics.get("failures", "wrong")
    repeats = metrics.get("repeats")
    lines = [
        f"# {metrics['system']}",
        "",
        f"Detector `{metrics['detector']}`, setting **{metrics['setting']}**, "
        f"{metrics['n_samples']} samples, seed {manifest['seed']}, code {manifest['code_version']}, "
        f"device {manifest['device']}.",
        f"Data: {data.get('path', '-')} (sha256 {str(data.get('sha256', '-'))[:12]}).",
        f"Answered: {coverage_cell(metrics.get('coverage'))}"
        + (" - below 100 %: read the scores with the failure policy below." if _partial(metrics) else "."),
    ]
    if repeats:
        spreads = repeats["headline"]
        lines += [
            "",
            f"## Headline: mean ± sd over {repeats['n']} repeats ({policy_title(failures)})",
            "",
            "| metric | mean ± sd | " + " | ".join(f"repeat {i}" for i in range(repeats["n"])) + " |",
            "|---|---|" + "---|" * repeats["n"],
        ]
        for key in HEADLINE:
            if key in spreads:
                s = spreads[key]
                values = " | ".join(f"{v:.3f}" for v in s["values"])
                lines.append(f"| {METRIC_NAMES[key]} | {s['mean']:.3f} ± {s['std']:.3f} | {values} |")
    of = " of repeat 0" if repeats else ""
    lines += [
        "",
        f"## Scores{of} (95% bootstrap intervals; {policy_title(failures)})",
        "",
        "| view | n | coverage | " + " | ".join(METRIC_NAMES[k] for k in HEADLINE) + " | ROC-AUC | ECE |",
        "|---|---|---|" + "---|" * (len(HEADLINE) + 2),
    ]
    macro = []
    for name, view in metrics["views"].items():
        if view.get("n"):
            cells = " | ".join(_ci(view, k) for k in HEADLINE)
            calibration = f"{_fmt(view.get('roc_auc_ovr'))} | {_fmt(view.get('ece'))}"
            title = view.get("title", name)
            lines.append(
                f"| {title} | {view['n']} | {coverage_cell(view.get('coverage'))} | {cells} | {calibration} |"
            )
            macro.append(f"{name}: {', '.join(view.get('macro_classes') or [])}")
    lines += ["", "Macro F1 averages over the classes " + "; ".join(macro) + "."]
    if any(v.get("derived") for v in metrics["views"].values() if v.get("n")):
        lines += [
            "A view marked (derived) is scored from the detector's 3-class answers, not asked as 2 classes."
        ]
    images = manifest.get("images")
    if images:
        lines += [
            "",
            f"Images: {images.get('sent')} sent of {images.get('expected')} expected, "
            f"{images.get('missing')} missing"
            + (f" ({', '.join(images['missing_ids'][:10])})" if images.get("missing_ids") else "")
            + ".",
        ]
    primary = metrics.get("primary_view")
    if primary:
        view = metrics["views"][primary]
        lines += [
            "",
            f"## Per class ({primary}{of}; {policy_title(failures)})",
            "",
            "| class | precision | recall | F1 | support |",
            "|---|---|---|---|---|",
        ]
        for cls, s in view["per_class"].items():
            lines.append(
                f"| {cls} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['support']} |"
            )
        cm = view["confusion_matrix"]
        lines += [
            "",
            "Confusion matrix (rows gold, columns predicted):",
            "",
            "| | " + " | ".join(cm["labels"]) + " |",
        ]
        lines.append("|---|" + "---|" * len(cm["labels"]))
        for label, row in zip(cm["labels"], cm["matrix"], strict=False):
            lines.append(f"| {label} | " + " | ".join(str(v) for v in row) + " |")
    lines += ["", "## Breakdowns", ""]
    for dimension, groups in metrics["breakdowns"].items():
        lines += [f"**{dimension}**", "", "| group | n | accuracy | macro F1 |", "|---|---|---|---|"]
        for group, s in groups.items():
            lines.append(f"| {group} | {s['n']} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |")
        lines.append("")
    cov, ledger, audit = metrics["coverage"], metrics["ledger"], metrics["audit"]
    lines += [
        "## Coverage, ledger, audit",
        "",
        f"- predictions with a label: {cov['predicted']} of {metrics['n_samples']}; "
        f"without: {cov['no_label']} {cov['no_label_reasons'] or ''}",
        f"- probabilities not scored (outside [0, 1] or not summing to 1): "
        f"{cov.get('invalid_probabilities', 0)} {cov.get('invalid_probability_ids', [])[:5] or ''}",
        f"- calls {ledger['calls']} (model {ledger['model_calls']}, tool {ledger['tool_calls']}), tokens in "
        f"{ledger['tokens_in']} / out {ledger['tokens_out']}, latency {ledger['latency_s']:.2f}s, "
        f"cost ${ledger['cost_usd']:.4f} paid, ${ledger.get('list_cost_usd', 0.0):.4f} at list price "
        f"(no cache) ({ledger['unpriced_calls']} unpriced), cache hits {ledger['cache_hits']}",
        f"- leakage audit: {audit['flagged']} predictions cite a blocked domain {audit['domains'] or ''}",
    ]
    if audit.get("excluding_flagged"):
        ex = audit["excluding_flagged"]
        lines.append("  - excluding them: " + ", ".join(f"{k} {_fmt(ex.get(k))}" for k in HEADLINE))
    leakage = manifest.get("leakage")
    if leakage:
        reasons = ", ".join(f"{k} {v}" for k, v in leakage["by_reason"].items()) or "none"
        block_list = leakage.get("block_list") or manifest.get("blocked_domain_list") or {}
        lines.append(
            f"- leakage guard: {leakage['dropped']} retrieved results dropped before the detector saw them, "
            f"in {leakage['predictions_with_drops']} of {leakage['predictions']} predictions (by reason: "
            f"{reasons}); block list {block_list.get('source', '-')}, {block_list.get('count', '-')} domains"
        )
    urls = metrics["explanations"]["evidence_urls"]
    lines.append(
        f"- evidence URLs vs gold: macro precision {_fmt(urls['macro_precision'])}, macro recall "
        f"{_fmt(urls['macro_recall'])} ({urls['samples_citing']} samples cite URLs)"
    )
    kp = metrics["explanations"].get("key_points")
    if kp:
        lines.append(
            f"- key-point coverage: {_fmt(kp['coverage'])} at cosine >= {kp['threshold']} "
            f"(mean similarity {_fmt(kp['mean_similarity'])}, {kp['samples']} samples)"
        )
    if metrics.get("input_problems"):
        lines.append(f"- input problems (see input_report.json): {metrics['input_problems']}")
    if ledger.get("by_agent"):
        lines += [
            "",
            "## Ledger per agent",
            "",
            "| agent | calls | model | tool | tokens in | tokens out | latency s | cost $ | unpriced "
            "| cache hits |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for agent, t in ledger["by_agent"].items():
            lines.append(
                f"| {agent} | {t['calls']} | {t['model_calls']} | {t['tool_calls']} | {t['tokens_in']} | "
                f"{t['tokens_out']} | {t['latency_s']:.2f} | {t['cost_usd']:.4f} | {t['unpriced_calls']} | "
                f"{t['cache_hits']} |"
            )
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}](plots/{p.name})" for p in plots]
    return "\n".join(lines) + "\n"
