"""Explanation scoring statistics (paper V-D, Table IV).

Scores are 0 (no error) to 2 (severe). Per source, the table shows the normalised score 1 - s/2
(higher is better) averaged over annotators and instances. Two detectors are compared on the original
0-2 scale: per instance, the annotators' mean score of A minus that of B (Delta_i = A_i - B_i), the
mean of those differences, the paired Wilcoxon signed-rank test and a 95% percentile bootstrap
confidence interval of the mean difference.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rwpost.annotate.agreement import EXPLANATION_QUESTIONS, explanation_agreement
from rwpost.markdown import markdown_table
from rwpost.records import ExplanationScore

if TYPE_CHECKING:  # numpy (and rwpost.resampling, on it) are imported by the functions that compute: the
    # annotate_merge stage imports this module (through rwpost.annotate.report) and, without explanation
    # scores, computes nothing here
    import numpy as np

CRITERION_TITLES = {
    "reasoning_hallucination": "Reasoning",
    "evidence_hallucination": "Evidence",
    "label_justification": "Label",
}


def normalise(score: float) -> float:
    """Paper V-D: score_norm = 1 - score_orig / 2, so 1 is best."""
    return 1.0 - score / 2.0


def instance_means(scores: Sequence[ExplanationScore], criterion: str) -> dict[str, dict[str, float]]:
    """source -> record id -> the annotators' mean 0-2 score on one criterion."""
    sums: dict[tuple[str, str], list[int]] = defaultdict(list)
    for s in scores:
        sums[(s.source, s.id)].append(getattr(s, criterion))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (source, rid), values in sums.items():
        out[source][rid] = sum(values) / len(values)
    return dict(out)


def bootstrap_ci(
    diffs: np.ndarray, *, resamples: int = 10_000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (:mod:`rwpost.resampling`)."""
    from rwpost.resampling import mean_interval

    if diffs.size == 0:
        return (math.nan, math.nan)
    if diffs.size == 1:  # one difference: every resample is that difference
        return (float(diffs[0]), float(diffs[0]))
    interval = mean_interval(diffs, n_resamples=resamples, seed=seed, confidence_level=confidence)
    assert interval is not None  # size >= 2 and resamples > 0
    return interval


def wilcoxon_p(diffs: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test on paired differences (1.0 when all are zero)."""
    import numpy as np

    if diffs.size == 0:
        return math.nan
    if not np.any(diffs):
        return 1.0
    from scipy.stats import wilcoxon  # scipy.stats takes about a second to import: only when tested

    return float(wilcoxon(diffs).pvalue)


def paired_comparison(
    means: dict[str, dict[str, float]], a: str, b: str, *, resamples: int = 10_000, seed: int = 0
) -> dict:
    """Delta = a - b on the original 0-2 scale over the instances both were scored on."""
    import numpy as np

    common = sorted(set(means.get(a, {})) & set(means.get(b, {})))
    diffs = np.array([means[a][rid] - means[b][rid] for rid in common], dtype=float)
    low, high = bootstrap_ci(diffs, resamples=resamples, seed=seed)
    return {
        "a": a,
        "b": b,
        "instances": len(common),
        "mean_delta": float(diffs.mean()) if diffs.size else None,
        "wilcoxon_p": wilcoxon_p(diffs),
        "ci95": [low, high],
    }


def explanation_report(
    scores: Sequence[ExplanationScore],
    *,
    compare: tuple[str, str] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """Table IV as data: normalised means per source and criterion, the paired comparison, agreement."""
    import numpy as np

    sources = sorted({s.source for s in scores})
    table: dict[str, dict] = {}
    for criterion in EXPLANATION_QUESTIONS:
        means = instance_means(scores, criterion)
        row = {
            "normalised": {
                src: float(np.mean([normalise(v) for v in means[src].values()]))
                for src in sources
                if src in means
            }
        }
        if compare:
            row["comparison"] = paired_comparison(means, *compare, resamples=resamples, seed=seed)
        table[criterion] = row
    return {
        "sources": sources,
        "instances": len({s.id for s in scores}),
        "annotators": sorted({s.annotator for s in scores}),
        "criteria": table,
        "agreement": explanation_agreement(scores),
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": 0.95},
    }


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def explanation_markdown(report: dict) -> str:
    """The report as a Markdown table in the layout of paper Table IV."""
    sources = report["sources"]
    compare = next(iter(report["criteria"].values())).get("comparison")
    head = ["Criteria", *sources]
    if compare:
        head += [f"Delta ({compare['a']} - {compare['b']})", "p-value", "95% CI"]
    lines = [
        f"Human evaluation of explanations: {report['instances']} instances, "
        f"{len(report['annotators'])} annotators. Scores normalised as 1 - s/2 (higher is better); "
        "Delta, p (Wilcoxon signed-rank) and the bootstrap CI are on the original 0-2 scale "
        "(lower is better).",
        "",
    ]
    rows = []
    for criterion, row in report["criteria"].items():
        cells = [CRITERION_TITLES[criterion], *(_fmt(row["normalised"].get(s)) for s in sources)]
        if compare:
            c = row["comparison"]
            p = c["wilcoxon_p"]
            cells += [
                _fmt(c["mean_delta"], 2),
                "n/a" if p is None or math.isnan(p) else f"{p:.2g}",
                f"[{_fmt(c['ci95'][0], 2)}, {_fmt(c['ci95'][1], 2)}]",
            ]
        rows.append(cells)
    lines += markdown_table(head, rows)
    agreement = [
        [CRITERION_TITLES[criterion], _fmt(agr["cohen_kappa"]), _fmt(agr["krippendorff_alpha"])]
        for criterion, agr in report["agreement"].items()
    ]
    lines += ["", "Agreement (units = instance x output):", ""]
    lines += markdown_table(["Criterion", "Cohen's kappa", "Krippendorff's alpha (ordinal)"], agreement)
    return "\n".join(lines) + "\n"
