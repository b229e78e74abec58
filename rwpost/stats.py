"""Dataset statistics (paper Figure 3): labels, ratings, categories, evidence counts and modalities, years.

:func:`compute_stats` is pure (samples in, a JSON-ready dict out); :func:`write_report` writes the JSON,
a Markdown summary and PNG plots.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rwpost.errors import RwpostError
from rwpost.io import write_json, write_text
from rwpost.markdown import markdown_table
from rwpost.records import Evidence, Sample

MODALITIES = ("text", "image", "video", "mixed", "other")
"""Evidence modality classes; the release writes free-form types ("Web Link", "Text/Image", ...)."""

_TEXTUAL = ("text", "web", "article", "statement", "tweet", "link", "webpage", "document", "post")


def evidence_modality(evidence: Evidence) -> str:
    """Map a free-form evidence type to text / image / video / mixed / other."""
    parts = {p.strip().lower() for p in evidence.type.replace("&", "/").split("/") if p.strip()}
    kinds = set()
    for part in parts:
        if "image" in part or "photo" in part or "screenshot" in part:
            kinds.add("image")
        elif "video" in part:
            kinds.add("video")
        elif any(word in part for word in _TEXTUAL):
            kinds.add("text")
        else:
            kinds.add("other")
    if len(kinds) > 1:
        return "mixed"
    return kinds.pop() if kinds else "other"


def sample_modality(sample: Sample) -> str:
    """A sample's evidence mix: the one modality of all its items, ``mixed``, or ``none``."""
    kinds = {evidence_modality(e) for e in sample.evidence}
    if not kinds:
        return "none"
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _sorted_counts(counter: Counter[Any]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))}


def compute_stats(samples: Iterable[Sample]) -> dict[str, Any]:
    """Figure 3 statistics of a set of samples, JSON-ready."""
    rows = list(samples)
    labels = Counter(str(s.label) if s.label else "excluded" for s in rows)
    per_category: dict[str, list[int]] = defaultdict(list)
    for s in rows:
        per_category[s.category or "unknown"].append(len(s.evidence))
    evidence_counts = Counter(len(s.evidence) for s in rows)
    years = Counter(str(s.claim_time.year) if s.claim_time else "unknown" for s in rows)
    by_subset: dict[str, Counter[str]] = defaultdict(Counter)
    for s in rows:
        by_subset[s.subset or "unassigned"][str(s.label) if s.label else "excluded"] += 1
    return {
        "count": len(rows),
        "labels": _sorted_counts(labels),
        "ratings": _sorted_counts(Counter(s.label_original or "unknown" for s in rows)),
        "categories": _sorted_counts(Counter(s.category or "unknown" for s in rows)),
        "evidence_per_sample": {str(k): evidence_counts[k] for k in sorted(evidence_counts)},
        "evidence_total": sum(len(s.evidence) for s in rows),
        "evidence_modalities": {
            m: c for m, c in Counter(evidence_modality(e) for s in rows for e in s.evidence).most_common()
        },
        "sample_modalities": _sorted_counts(Counter(sample_modality(s) for s in rows)),
        "median_evidence_per_category": {
            cat: statistics.median(counts) for cat, counts in sorted(per_category.items())
        },
        "claim_years": dict(sorted(years.items())),
        "subsets": _sorted_counts(Counter(s.subset or "unassigned" for s in rows)),
        "splits": _sorted_counts(
            Counter(f"{s.subset or 'unassigned'}/{s.split or 'unassigned'}" for s in rows)
        ),
        "labels_by_subset": {subset: _sorted_counts(c) for subset, c in sorted(by_subset.items())},
    }


def render_markdown(stats: dict[str, Any], title: str) -> str:
    """A Markdown summary of :func:`compute_stats` output."""
    lines = [
        f"# Statistics: {title}",
        "",
        f"Samples: **{stats['count']}**, evidence items: **{stats['evidence_total']}**",
        "",
    ]
    subsets = stats.get("labels_by_subset") or {}
    if subsets:  # main and challenging have different labels: one column each, never pooled
        labels = list(dict.fromkeys(label for counts in subsets.values() for label in counts))
        rows = ([label, *(counts.get(label, 0) for counts in subsets.values())] for label in labels)
        columns = ["count"] if list(subsets) == ["unassigned"] else list(subsets)
        lines += [*markdown_table(["RW-Post label", *columns], rows, "l" + "r" * len(subsets)), ""]
    if stats.get("splits"):
        lines += [*markdown_table(["subset/split", "count"], stats["splits"].items(), "lr"), ""]
    for key, heading, value in (
        ("ratings", "original rating", "count"),
        ("categories", "category", "count"),
        ("evidence_modalities", "evidence modality (items)", "count"),
        ("sample_modalities", "evidence mix (samples)", "count"),
        ("claim_years", "claim year", "count"),
        ("evidence_per_sample", "evidence items per sample", "samples"),
        ("median_evidence_per_category", "category", "median evidence items"),
    ):
        lines += [*markdown_table([heading, value], stats[key].items(), "lr"), ""]
    return "\n".join(lines)


PLOTS = {
    "labels": "RW-Post labels",
    "categories": "Categories",
    "evidence_per_sample": "Evidence items per sample",
    "evidence_modalities": "Evidence modality",
    "claim_years": "Claims by year",
}
"""Bar charts :func:`plot_stats` draws: the stats key (also the PNG name) and the title."""


def plot_stats(stats: dict[str, Any], out_dir: Path) -> list[Path]:
    """Bar charts of the main distributions as PNG files; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rwpost.io import atomic_path

    paths = []
    for name, title in PLOTS.items():
        # labels: one panel per subset (main and challenging have their own labels), never pooled
        panels = stats.get("labels_by_subset") if name == "labels" else None
        panels = panels or {"": stats[name]}
        width = sum(max(2.5, 0.45 * len(c) + 1.5) for c in panels.values())
        fig, axes = plt.subplots(1, len(panels), figsize=(max(4.0, width), 3.2), squeeze=False)
        for ax, (subset, counts) in zip(axes[0], panels.items(), strict=True):
            ax.bar(list(counts), list(counts.values()), color="#3b6ea5")
            ax.set_title(f"{title}: {subset}" if subset else title)
            ax.set_ylabel("count")
            ax.tick_params(axis="x", labelrotation=60 if len(counts) > 5 else 0, labelsize=8)
        fig.tight_layout()
        path = out_dir / f"{name}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        paths.append(path)
    return paths


REPORT_FILES = ("stats.json", "stats.md", *(f"{name}.png" for name in PLOTS))
"""The files :func:`write_report` may write into its folder."""


def write_report(stats: dict[str, Any], out_dir: Path, title: str, plots: bool = True) -> list[Path]:
    """Write ``stats.json``, ``stats.md`` and (optionally) PNG plots into ``out_dir``."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RwpostError(f"{out_dir}: cannot create the folder ({exc.strerror or exc})") from exc
    write_json(out_dir / "stats.json", stats)
    write_text(out_dir / "stats.md", render_markdown(stats, title))
    written = [out_dir / "stats.json", out_dir / "stats.md"]
    if plots:
        written += plot_stats(stats, out_dir)
    return written
