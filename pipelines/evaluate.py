"""DVC stage `evaluate`: score the configured detectors on a published version's splits.

For each subset (main, challenging) every detector is trained on the ``train_split`` (dev) and scored
on the ``test_split`` (test), in each of its settings; each run writes its folder
``<out>/<subset>/<detector>-<setting>/`` (metrics.json, report.md, plots, predictions), and the stage
writes ``<out>/leaderboard/`` and the ``summary`` file (headline scores per run, the DVC metrics file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipelines.common import section, stage_main
from rwpost.errors import ConfigError
from rwpost.evaluate import BlockList, RunSpec, Setting, evaluate
from rwpost.evaluate.data import lazy_encoder
from rwpost.evaluate.leaderboard import write_leaderboard
from rwpost.io import sha256_file, write_json
from rwpost.llm.config import detector_secrets_from_env


def run(params: dict[str, Any]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from rwpost.dataset import read_parquet, split_file

    meta = section(params, "dataset")
    cfg = section(params, "evaluate")
    version_dir = Path(meta["root"]) / str(meta["version"])
    out_root = Path(cfg["out"])
    seed = int(cfg.get("seed", 0))
    blocklist = BlockList.from_file(cfg.get("blocked_domains"))
    encode = lazy_encoder() if cfg.get("key_points", True) else None
    run_dirs: list[Path] = []
    summary: dict[str, dict[str, Any]] = {}
    for subset in cfg.get("subsets", ["main"]):
        train_path = split_file(version_dir, subset, cfg.get("train_split", "dev"))
        test_path = split_file(version_dir, subset, cfg.get("test_split", "test"))
        train = [s for s in read_parquet(train_path) if s.label is not None]
        test = [s for s in read_parquet(test_path) if s.label is not None]
        data_info = {
            "path": str(test_path),
            "sha256": sha256_file(test_path),
            "train": {"path": str(train_path), "sha256": sha256_file(train_path)},
            "version": str(meta["version"]),
            "subset": subset,
        }
        for entry in cfg.get("detectors", []):
            name = entry["name"]
            if subset not in entry.get("subsets", [subset]):
                continue
            for setting in entry.get("settings", ["closed-book"]):
                config = dict(entry.get("config") or {})
                secrets = detector_secrets_from_env(name, config)
                spec = RunSpec(
                    detector=name,
                    config=config,
                    setting=Setting(setting),
                    seed=seed,
                    repeats=int(entry.get("repeats", 1)),
                    batch_size=int(entry.get("batch_size", 16)),
                    n_resamples=int(cfg.get("bootstrap", 1000)),
                    name=f"{name}/{setting}",
                    prices=cfg.get("prices") or None,
                    blocklist=blocklist,
                    secrets=secrets,
                )
                out = out_root / subset / f"{name}-{setting}"
                try:
                    metrics = evaluate(
                        test,
                        spec,
                        out,
                        train=train,
                        data_info=data_info,
                        encode=encode,
                        replace_different=True,
                    )
                except ConfigError as exc:
                    raise ConfigError(f"evaluate {subset}/{name}/{setting}: {exc}") from exc
                run_dirs.append(out)
                summary.setdefault(subset, {})[f"{name}/{setting}"] = {
                    k: metrics.get(k) for k in ("accuracy", "macro_f1", "weighted_f1")
                }
                print(f"evaluate: {subset} {name}/{setting}: macro F1 {metrics.get('macro_f1')}")
    if run_dirs:
        write_leaderboard(run_dirs, out_root / "leaderboard")
    write_json(Path(cfg.get("summary", f"{out_root}-summary.json")), summary)


if __name__ == "__main__":
    stage_main(run, __doc__)
