"""DVC stage `stats`: statistics report (JSON, Markdown, plots) of a published version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.publish import load_version_samples
from rwpost.stats import compute_stats, write_report


def run(params: dict[str, Any]) -> None:
    meta = section(params, "dataset")
    cfg = section(params, "stats")
    version_dir = Path(meta["root"]) / str(meta["version"])
    samples = list(load_version_samples(version_dir).values())
    write_report(compute_stats(samples), Path(cfg["out"]), title=f"RW-Post {meta['version']}")
    print(f"stats: {len(samples)} samples -> {cfg['out']}")


if __name__ == "__main__":
    stage_main(run, __doc__)
