"""DVC stage `extract`: tagged articles -> post, rationale, evidence (LLM when a key is set, else offline).

Credentials come from the environment here, at the edge (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_*``); everything else from the ``extract:`` section of params.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.extract.stages import extract_tagged, make_extractor, price_table
from rwpost.llm import settings_from_env


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "extract")
    settings = settings_from_env(model=cfg.get("model"), concurrency=cfg.get("concurrency"))
    extractor = make_extractor(
        str(cfg.get("backend", "auto")),
        settings,
        cache_path=cfg.get("cache", "data/cache/llm.sqlite"),
        prices=price_table(cfg.get("prices")),
        max_article_chars=int(cfg.get("max_article_chars", 60_000)),
    )
    report = extract_tagged(Path(cfg["input"]), Path(cfg["out"]), extractor)
    print(f"extract ({report['backend']}): {report['counts']} -> {cfg['out']}")


if __name__ == "__main__":
    stage_main(run, __doc__ or "")
