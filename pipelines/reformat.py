"""DVC stage `reformat`: crawl store -> tagged articles (text with tagged URLs + link table), rejects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.extract.stages import reformat_store


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "reformat")
    report = reformat_store(Path(cfg["crawl"]), Path(cfg["out"]), min_words=int(cfg.get("min_words", 1)))
    print(f"reformat: {report['kept']} tagged, {sum(report['rejected'].values())} rejected -> {cfg['out']}")


if __name__ == "__main__":
    stage_main(run, __doc__ or "")
