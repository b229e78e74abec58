"""Stage ``stats``: the statistics report (JSON, Markdown, plots; paper Figure 3) of a published version."""

from __future__ import annotations

from pathlib import Path

from rwpost.publish import load_version_samples
from rwpost.stages.base import DatasetParams, StageParams, StageReport
from rwpost.stats import compute_stats, write_report


class Params(StageParams):
    """The ``stats:`` section of params.yaml, with the ``dataset:`` section naming the version."""

    section = "stats"
    shared = ("dataset",)
    writes = ("out",)

    out: Path = Path("reports/stats")
    dataset: DatasetParams

    def paths_read(self) -> dict[str, Path]:
        return {"dataset.version": self.dataset.version_dir}


def run(params: Params) -> StageReport:
    meta = params.dataset
    samples = list(load_version_samples(meta.version_dir).values())
    write_report(compute_stats(samples), params.out, title=f"RW-Post {meta.version}")
    return StageReport(
        stage="stats",
        counts={"samples": len(samples)},
        message=f"stats: {len(samples)} samples -> {params.out}",
    )
