"""No params key falls out of a DVC stage's key (issue 27): DVC's run cache leaves every key named ``size``
or ``nfiles`` out of the key it looks a stage's earlier runs up by (treeverse/dvc#10296). With the size
filter's thresholds under ``filter.size``, a changed ``min_words`` found the old run ("Stage 'filter' is
cached - skipping run"), published the old samples and recorded the new value in dvc.lock.

The every-leaf test changes each leaf of params.yaml in turn and computes, with DVC's own stage loading,
params reading and hash (``dvc.stage.cache._get_cache_hash`` over ``to_single_stage_lockfile``, as
``StageCache`` does), the run-cache key of every stage: each stage whose typed ``Params`` read the
changed value must get a new key. One real ``dvc repro`` shows a changed ``min_words`` reaching the
published version (tests/e2e/test_dvc_pipeline.py, in the e2e checkout the other `dvc repro` tests built).
"""

from __future__ import annotations

import copy
import importlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rwpost.errors import ConfigError
from rwpost.stages import STAGES
from rwpost.stages.base import load_params

ROOT = Path(__file__).resolve().parents[1]
PARAMS = load_params(ROOT / "params.yaml")

Leaf = tuple[str | int, ...]

CHANGES: dict[str, list[Any]] = {
    "crawl.start_url": ["http://127.0.0.1:8000/fact-check/"],
    "crawl.since": ["2017-01-01"],
    "crawl.until": ["2024-01-01"],
    "crawl.user_agent": ["another-agent/1.0"],
    "crawl.contact": ["someone@example.org"],
    "dataset.since": ["2015-01-01"],
    "dataset.until": ["2030-01-01"],
    "extract.backend": ["llm"],
    "filter.watermark.combine": ["both", "llm"],
    "filter.neardup.index": ["brute", "linear", "bktree"],
    "filter.necessity.keep_answers.0": ["no"],
    "evaluate.blocked_domains": ["more-blocked.txt"],
    "evaluate.failures": ["exclude"],
    "evaluate.subsets.0": ["challenging"],
    "evaluate.subsets.1": ["main"],
    "evaluate.settings.0": ["T+I"],
    "evaluate.settings.1": ["T+I+E"],
    "evaluate.detectors.0.name": ["vlm"],
    "evaluate.detectors.1.name": ["vlm"],
    "evaluate.detectors.2.name": ["vlm"],
    "evaluate.detectors.3.name": ["vlm"],
    "evaluate.detectors.3.subsets.0": ["challenging"],
    "multisite.start_url": ["https://factuel.afp.com/"],
    "multisite.feed": ["claimreview-feed.json"],
    "multisite.contact": ["someone@example.org"],
    "multisite.backend": ["llm"],
}
"""Changes that keep a leaf valid where the generic ones cannot (a choice among names, a None)."""

WHO_RUNS = ("executor",)
"""Sections that choose who runs a stage, never what it writes (the outputs are the same bytes whatever
the executor and shard count: tests/test_shards.py), so they are deliberately no DVC dependency."""


class Swap:
    """A list entry's change that keeps the list valid where no other value can: it trades places with its
    neighbour (``filter.order`` names every filter once)."""


def leaves(node: Any, path: Leaf = ()) -> Iterator[tuple[Leaf, Any]]:
    """Every scalar of a params tree with its path (keys and list positions)."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield from leaves(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from leaves(child, (*path, index))
    else:
        yield path, node


def dotted(path: Leaf) -> str:
    return ".".join(map(str, path))


def candidates(path: Leaf, value: Any) -> list[Any]:
    """Other values for one leaf, the likeliest valid first."""
    if dotted(path) in CHANGES:
        return CHANGES[dotted(path)]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1]
    if isinstance(value, float):
        return [value / 2, value + 1]
    if isinstance(value, str):
        return [f"{value}2", *([Swap()] if isinstance(path[-1], int) else [])]
    return []


def with_leaf(params: dict[str, Any], path: Leaf, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(params)
    node = changed
    for part in path[:-1]:
        node = node[part]
    if isinstance(value, Swap):
        other = path[-1] + 1 if path[-1] + 1 < len(node) else path[-1] - 1
        node[path[-1]], node[other] = node[other], node[path[-1]]
    else:
        node[path[-1]] = value
    return changed


def what_stages_read(params: dict[str, Any]) -> dict[str, Any]:
    """Each stage's typed Params from ``params`` (ConfigError when one refuses them)."""
    stages = {name: importlib.import_module(f"rwpost.stages.{name}") for name in STAGES}
    return {name: stage.Params.from_params(params).model_dump(mode="json") for name, stage in stages.items()}


def run_cache_keys(root: Path) -> dict[str, str]:
    """Per stage of ``root/dvc.yaml``, the key DVC's run cache looks its earlier runs up by, computed by
    DVC from ``root/params.yaml`` (file deps and outs get one fixed hash: only params and paths vary)."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo
    from dvc.stage.cache import _get_cache_hash
    from dvc.stage.serialize import to_single_stage_lockfile
    from dvc_data.hashfile.hash_info import HashInfo
    from dvc_data.hashfile.meta import Meta

    keys = {}
    with Repo(str(root)) as repo:
        for stage in repo.index.stages:
            for item in [*stage.deps, *stage.outs]:
                if isinstance(item, ParamsDependency):
                    item.hash_info = item.get_hash()
                else:
                    item.hash_info, item.meta = HashInfo("md5", "0" * 32), Meta()
            keys[stage.name] = _get_cache_hash(to_single_stage_lockfile(stage), key=True)
    return keys


def dvc_project(root: Path) -> Path:
    """A DVC project holding only this checkout's dvc.yaml (no git: stages load without their files)."""
    root.mkdir()
    shutil.copy(ROOT / "dvc.yaml", root / "dvc.yaml")
    (root / ".dvc").mkdir()
    (root / ".dvc" / "config").write_text("[core]\n    no_scm = true\n    analytics = false\n")
    return root


def test_a_params_key_dvc_leaves_out_of_the_run_cache_key_is_refused_in_one_line():
    from rwpost.stages import evaluate
    from rwpost.stages import filter as filter_stage

    old = copy.deepcopy(PARAMS)
    old["filter"]["size"] = old["filter"].pop("size_limits")
    with pytest.raises(ConfigError, match=r"^params.yaml: filter.size: renamed to filter.size_limits$"):
        filter_stage.Params.from_params(old)
    price = with_leaf(PARAMS, ("evaluate", "prices", "size"), {"input_per_mtok": 1, "output_per_mtok": 1})
    with pytest.raises(ConfigError, match=r"^params.yaml: evaluate.prices.size: DVC's run cache ignores "):
        evaluate.Params.from_params(price)
    nested = with_leaf(PARAMS, ("evaluate", "detectors", 0, "config"), {"a": [{"nfiles": 1}]})
    with pytest.raises(ConfigError, match=r"^params.yaml: evaluate.detectors.0.config.a.0.nfiles: "):
        evaluate.Params.from_params(nested)


@pytest.mark.slow
def test_every_leaf_of_params_yaml_reaches_the_run_cache_key_of_each_stage_that_reads_it(tmp_path):
    project = dvc_project(tmp_path / "project")
    (project / "params.yaml").write_text(yaml.safe_dump(PARAMS), encoding="utf-8")
    keys = run_cache_keys(project)
    reads = what_stages_read(PARAMS)
    unchanged, unread, stuck = [], [], []
    for path, value in leaves(PARAMS):
        if path[0] in WHO_RUNS:
            continue
        for candidate in candidates(path, value):
            changed = with_leaf(PARAMS, path, candidate)
            try:
                now = what_stages_read(changed)
            except ConfigError:
                continue
            break
        else:
            stuck.append(dotted(path))
            continue
        readers = [name for name in STAGES if now[name] != reads[name]]
        if not readers:
            unread.append(dotted(path))
            continue
        (project / "params.yaml").write_text(yaml.safe_dump(changed), encoding="utf-8")
        new_keys = run_cache_keys(project)
        unchanged += [f"{dotted(path)} (stage {name})" for name in readers if new_keys[name] == keys[name]]
    assert not stuck, f"no valid change known for {stuck}: add one to CHANGES"
    dvc_params = (project / "dvc.yaml").read_text(encoding="utf-8")
    assert not any(f"- {section}" in dvc_params for section in WHO_RUNS)  # and DVC is not told otherwise
    assert not unread, f"leaves no stage reads: {unread}"
    assert not unchanged, f"changed without a new run-cache key, so dvc repro would skip the run: {unchanged}"
