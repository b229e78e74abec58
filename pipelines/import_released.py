"""DVC stage `import`: the authors' released JSONL files -> Sample records (+ rejects)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.io import write_json, write_jsonl
from rwpost.records import Reject
from rwpost.rwpost_format import read_released


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "import")
    out = Path(cfg["out"])
    samples, rejects = [], []
    for path in cfg["files"]:
        bad: list[Reject] = []
        samples += read_released(path, rejects=bad if cfg.get("skip_bad", True) else None)
        rejects += bad
    write_jsonl(out / "samples.jsonl", samples)
    write_jsonl(out / "rejects.jsonl", rejects)
    write_json(out / "report.json", {"files": cfg["files"], "samples": len(samples), "rejects": len(rejects)})
    print(f"import: {len(samples)} samples, {len(rejects)} rejects -> {out}")


if __name__ == "__main__":
    stage_main(run, __doc__)
