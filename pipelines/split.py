"""DVC stage `split`: samples -> versioned Parquet splits, dataset card and checksums."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.dataset import read_samples
from rwpost.io import write_jsonl
from rwpost.publish import BuildInfo, write_version
from rwpost.records import Reject
from rwpost.splits import assign_splits


def _funnel(samples_in: int, excluded: int, funnel_file: str | None) -> list[dict[str, Any]]:
    """The funnel of earlier stages (if a stage wrote one) plus this stage's exclusion step."""
    steps: list[dict[str, Any]] = []
    if funnel_file and Path(funnel_file).exists():
        steps = json.loads(Path(funnel_file).read_text(encoding="utf-8"))
    steps.append(
        {
            "step": "label mapping (Table II)",
            "in": samples_in,
            "removed": excluded,
            "out": samples_in - excluded,
            "reasons": {"rating not about factual accuracy": excluded} if excluded else {},
        }
    )
    return steps


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "split")
    meta = section(params, "dataset")
    samples = read_samples(cfg["input"])
    assigned = assign_splits(samples, seed=int(cfg["seed"]), ratio=float(cfg["ratio"]))
    kept = {s.id for s in assigned}
    excluded = [
        Reject(
            id=s.id,
            stage="split",
            reason=f"rating {s.label_original!r} is excluded (not factual accuracy)",
            data={"news_url": s.news_url, "label_original": s.label_original},
        )
        for s in samples
        if s.id not in kept
    ]
    out = Path(meta["root"]) / str(meta["version"])
    provenance = samples[0].provenance if samples else None
    info = BuildInfo(
        version=str(meta["version"]),
        source=meta["source_description"],
        extractor_backend=provenance.backend if provenance else "none",
        extractor_model=provenance.model if provenance else None,
        prompt_version=provenance.prompt_version if provenance else None,
        date_window=(meta.get("since"), meta.get("until")),
        seed=int(cfg["seed"]),
        ratio=float(cfg["ratio"]),
        funnel=_funnel(len(samples), len(excluded), cfg.get("funnel")),
        generated_notes=list(meta.get("generated_notes") or []),
    )
    manifest = write_version(assigned, out, info)
    write_jsonl(Path(cfg["rejects"]), excluded)
    print(f"split: {len(assigned)} samples -> {out} {manifest['counts']}")


if __name__ == "__main__":
    stage_main(run, __doc__)
