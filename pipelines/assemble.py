"""DVC stage `assemble`: crawl + tagged + extraction + filter decisions -> samples (+ rejects, funnel)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.assemble import assemble
from rwpost.io import iter_jsonl, write_json, write_jsonl
from rwpost.records import CrawledArticle, Decision, Extraction, TaggedArticle


def _read(path: str | Path, model):  # noqa: ANN001, ANN202
    return [model.model_validate(obj) for _, obj in iter_jsonl(path)] if Path(path).exists() else []


def _funnel(filter_funnel: Path, assembled: int, removed_by: dict[str, int]) -> list[dict]:
    """The filter stage's funnel followed by what assembling removed."""
    steps: list[dict[str, Any]] = []
    if filter_funnel.exists():
        steps = json.loads(filter_funnel.read_text(encoding="utf-8"))
    extra = {
        k: v
        for k, v in removed_by.items()
        if k in ("extraction", "label mapping", "assemble", "human validation")
    }
    if extra:
        steps.append(
            {
                "step": "assemble",
                "in": assembled + sum(extra.values()),
                "removed": sum(extra.values()),
                "out": assembled,
                "reasons": extra,
            }
        )
    return steps


def run(params: dict[str, Any]) -> None:
    cfg = section(params, "assemble")
    crawl_root = Path(cfg["crawl"])
    tagged = _read(cfg["tagged"], TaggedArticle)
    extractions = {e.id: e for e in _read(cfg["extractions"], Extraction)}
    crawled = {c.id: c for c in _read(crawl_root / "articles.jsonl", CrawledArticle)}
    decisions: dict[str, list[Decision]] = defaultdict(list)
    for decision in _read(cfg["decisions"], Decision):
        decisions[decision.id].append(decision)
    result = assemble(
        tagged,
        extractions,
        crawled,
        decisions,
        crawl_root,
        filter_order=list(cfg.get("filter_order") or []),
    )
    out = Path(cfg["out"])
    write_jsonl(out / "samples.jsonl", result.samples)
    write_jsonl(out / "rejects.jsonl", result.rejects)
    write_json(
        out / "funnel.json",
        _funnel(Path(cfg["filter_funnel"]), len(result.samples), dict(result.removed_by)),
    )
    print(f"assemble: {len(result.samples)} samples, {len(result.rejects)} rejects -> {out}")


if __name__ == "__main__":
    stage_main(run, __doc__)
