"""Stage ``split``: samples -> a published version: Parquet splits, dataset card, checksums, manifest.

Assigns main/challenging and dev/test (:mod:`rwpost.splits`), writes the version folder
``<dataset.root>/<dataset.version>/`` (:mod:`rwpost.publish`) and sets aside, in ``rejects``, the samples
whose rating is not about factual accuracy (no RW-Post label, paper Table II). The card's funnel is
the earlier stages' (``funnel``) followed by this stage's step.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from rwpost.dataset import read_samples
from rwpost.errors import RwpostError
from rwpost.extract.offline import RULE_CHANGES
from rwpost.io import sorted_rejects, write_jsonl
from rwpost.publish import BuildInfo, write_version
from rwpost.records import FunnelStep, Reject, Sample
from rwpost.splits import DEV_TEST_RATIO, assign_splits
from rwpost.stages.base import DatasetParams, StageParams, StageReport, funnel_so_far


class Params(StageParams):
    """The ``split:`` section of params.yaml, with the ``dataset:`` section it publishes under."""

    section = "split"
    shared = ("dataset",)
    upstream = {"input": "annotate.out/samples.jsonl", "funnel": "assemble.out/funnel.json"}
    reads = ("input", "funnel")
    writes = ("rejects",)
    file_kinds = {"rejects": "rejects"}

    input: Path = Path("data/work/annotated/samples.jsonl")
    seed: int = 13
    ratio: float = Field(DEV_TEST_RATIO, gt=0, allow_inf_nan=False)
    """dev : test = 1 : ratio (paper section III)."""
    funnel: Path | None = Path("data/work/assemble/funnel.json")
    """The funnel of the earlier stages (written by assemble)."""
    rejects: Path = Path("data/work/split/rejects.jsonl")
    dataset: DatasetParams

    def paths_written(self) -> dict[str, Path]:
        return {**super().paths_written(), "dataset.version": self.dataset.version_dir}


def _excluded(sample: Sample) -> Reject:
    return Reject(
        id=sample.id,
        stage="split",
        reason=f"rating {sample.label_original!r} is excluded (not factual accuracy)",
        data={"news_url": sample.news_url, "label_original": sample.label_original},
    )


def run(params: Params) -> StageReport:
    samples = read_samples(params.input)
    assigned = assign_splits(samples, seed=params.seed, ratio=params.ratio)
    kept = {s.id for s in assigned}
    excluded = [_excluded(s) for s in samples if s.id not in kept]
    if not assigned:  # a version with no samples is never what was meant: the stages before removed all
        why = f"all {len(samples)} samples have an excluded rating" if samples else "no samples"
        raise RwpostError(f"{params.input}: {why}: nothing to publish as {params.dataset.version}")
    reasons = {"rating not about factual accuracy": len(excluded)} if excluded else {}
    report = StageReport(
        stage="split",
        counts={"samples": len(samples), "assigned": len(assigned), "excluded": len(excluded)},
        funnel=[FunnelStep.of("label mapping (Table II)", len(samples) - len(excluded), reasons)],
    )
    meta = params.dataset
    provenance = samples[0].provenance if samples else None
    info = BuildInfo(
        version=meta.version,
        source=meta.source_description,
        extractor_backend=provenance.backend if provenance else "none",
        extractor_model=provenance.model if provenance else None,
        prompt_version=provenance.prompt_version if provenance else None,
        prompt_changes=RULE_CHANGES.get(provenance.prompt_version or "")
        if provenance and provenance.backend == "offline"
        else None,
        date_window=tuple(d.isoformat() if d else None for d in (meta.since, meta.until)),  # type: ignore[arg-type]
        seed=params.seed,
        ratio=params.ratio,
        funnel=[step.row() for step in funnel_so_far(params.funnel, report)],
        generated_notes=meta.generated_notes,
    )
    manifest = write_version(assigned, meta.version_dir, info)
    write_jsonl(params.rejects, sorted_rejects(excluded))
    report.counts["published"] = manifest["counts"]
    report.message = f"split: {len(assigned)} samples -> {meta.version_dir} {manifest['counts']}"
    return report
