"""DVC stage `filter`: size, image necessity, watermark and near-duplicate filters (paper III-A, III-C).

Reads the tagged articles, the extractions and the crawl store named in the `filter:` section of
params.yaml; writes `decisions.jsonl`, `verdicts.jsonl`, `rejects.jsonl`, `funnel.json`,
`summary.json` and the measurement cache under `filter.out`. With `filter.llm: true` the necessity
and watermark filters also ask an LLM (Tables S2, S1) with the credentials from the environment
(OPENAI_API_KEY, OPENAI_BASE_URL, RWPOST_LLM_MODEL); without it they run offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.commands.filter import print_funnel
from rwpost.filters.stage import run_stage


def _judges(cfg: dict[str, Any], out: Path) -> dict[str, Any]:
    """LLM judges from the environment when ``filter.llm`` is on (the only place that reads it)."""
    if not cfg.get("llm"):
        return {}
    from rwpost.filters.llm import client_judges
    from rwpost.llm import client_from, settings_from_env

    client = client_from(settings_from_env(), cache_path=cfg.get("cache") or "data/cache/llm.sqlite")
    vision, text = client_judges(client)
    return {"vision_judge": vision, "text_judge": text, "judge_id": client.model}


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "filter")
    crawl = Path(cfg["crawl"])
    out = Path(cfg["out"])
    result = run_stage(
        cfg["tagged"],
        cfg["extractions"],
        crawl / "articles.jsonl",
        out,
        cfg,
        crawl_root=crawl,
        **_judges(cfg, out),
    )
    print_funnel(result.funnel())


if __name__ == "__main__":
    stage_main(run, __doc__.splitlines()[0])
