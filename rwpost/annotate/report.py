"""The annotation report: agreement per question, verdict counts, explanation scores (JSON + Markdown)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rwpost.annotate.agreement import validation_agreement
from rwpost.annotate.explanations import explanation_markdown, explanation_report
from rwpost.annotate.merge import resolve_verdicts
from rwpost.markdown import markdown_table
from rwpost.records import ExplanationScore, HumanVerdict, Sample, ValidationVerdict


def annotation_report(
    verdicts: Sequence[ValidationVerdict],
    scores: Sequence[ExplanationScore],
    *,
    compare: tuple[str, str] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
) -> dict:
    """Everything the human-validation section reports, as one JSON-ready dict."""
    report: dict = {}
    if verdicts:
        human = resolve_verdicts(verdicts)
        final = [v for v in human if v.status in ("agreed", "adjudicated")]
        report["validation"] = {
            "records": len(human),
            "status": dict(sorted(Counter(v.status for v in human).items())),
            "agreement": validation_agreement(verdicts),
            # Paper III-D reports these shares over the final (consensus) verdicts.
            "final_image_role": dict(sorted(Counter(v.image_role or "none" for v in final).items())),
            "final_post_extraction": dict(
                sorted(Counter(v.post_extraction or "none" for v in final).items())
            ),
        }
    if scores:
        report["explanations"] = explanation_report(scores, compare=compare, resamples=resamples, seed=seed)
    return report


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_markdown(report: dict) -> str:
    """The report as Markdown tables."""
    lines: list[str] = ["# Human validation report", ""]
    validation = report.get("validation")
    if validation:
        lines += [
            f"## Post and image validation ({validation['records']} records)",
            "",
            "Status: " + ", ".join(f"{k} {v}" for k, v in validation["status"].items()),
            "",
        ]
        head = [
            "Question",
            "Paired records",
            "Agreement %",
            "Cohen's kappa",
            "Krippendorff's alpha (nominal)",
        ]
        rows = [
            [
                question,
                agr["paired_units"],
                "n/a" if agr["percent_agreement"] is None else f"{agr['percent_agreement']:.1f}",
                _fmt(agr["cohen_kappa"]),
                _fmt(agr["krippendorff_alpha"]),
            ]
            for question, agr in validation["agreement"].items()
        ]
        lines += markdown_table(head, rows)
        lines += ["", "Final verdicts (agreed or adjudicated):", ""]
        for name in ("final_image_role", "final_post_extraction"):
            counts = validation[name]
            total = sum(counts.values()) or 1
            shares = ", ".join(f"{k} {v} ({100 * v / total:.0f}%)" for k, v in counts.items())
            lines.append(f"- {name.removeprefix('final_')}: {shares}")
        lines.append("")
    if report.get("explanations"):
        lines += ["## Explanation evaluation", "", explanation_markdown(report["explanations"])]
    return "\n".join(lines).rstrip() + "\n"


def post_link_rates(verdicts: Sequence[HumanVerdict], samples: Sequence[Sample]) -> dict:
    """Paper III-D's post-link figures over final verdicts, from the samples as extracted (before merge).

    An article contains a post link when the extraction was judged correct *with* a link, missing or
    incorrect; it has none when judged false positive or correct *without* a link. The paper reports the
    correct share of the first group (76.39%) and the false-positive share of the second (14.29%).
    """
    has_link = {s.id: bool(s.post_url) for s in samples}
    counts: Counter[str] = Counter()
    for v in verdicts:
        if v.status not in ("agreed", "adjudicated") or v.post_extraction is None or v.id not in has_link:
            continue
        if v.post_extraction == "correct":
            counts["correct_with_link" if has_link[v.id] else "correct_without_link"] += 1
        else:
            counts[v.post_extraction] += 1
    containing = counts["correct_with_link"] + counts["missing"] + counts["incorrect"]
    absent = counts["false_positive"] + counts["correct_without_link"]
    return {
        "link_containing": containing,
        "link_absent": absent,
        "correct_rate": counts["correct_with_link"] / containing if containing else None,
        "false_positive_rate": counts["false_positive"] / absent if absent else None,
        "counts": dict(sorted(counts.items())),
    }
