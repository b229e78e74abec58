"""Local-model evaluation on the executors: the runs of a local model go to model replicas that each hold
the model (this process for the local executor; one Ray actor per GPU, one CPU actor here), loaded once
for every run they take, and give the plain run's outputs (timings aside), key-point similarities to the
byte, on a tiny scripted vision-language model built here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rwpost.errors import ConfigError
from rwpost.evaluate.data import EvalData
from rwpost.evaluate.encoders import lazy_encoder
from rwpost.evaluate.plan import DetectorEntry, plan_runs, run_plan, uses_local_model
from rwpost.executors import ExecutorParams, ShardStore
from rwpost.labels import Label
from tests.evaluate_helpers import build_tiny_vlm, evidence, make_sample
from tests.shard_helpers import ray_cluster

__all__ = ["ray_cluster"]  # the module's one Ray, a fixture

TIMINGS = ("wall_s", "latency_s", "started", "finished", "mean_detector_wall_s_per_sample")
"""Wall-clock fields: the only ones that may differ between executors."""


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("vlm") / "random"
    build_tiny_vlm(folder, scripted=True)  # explains every answer: key-point coverage is computed
    return folder


@pytest.fixture(scope="module")
def data() -> EvalData:
    gold = [Label.TRUE, Label.FALSE, Label.FALSE, Label.UNPROVEN, Label.TRUE]
    points = [["The image is miscaptioned.", f"The post {i} shows another event."] for i in range(5)]
    samples = [make_sample(i, g, evidence=evidence(2), key_points=points[i]) for i, g in enumerate(gold)]
    return EvalData(test=samples, train=None, info={"subset": "main", "split": "test"})


def plan(model: Path, out: Path) -> list:
    entry = DetectorEntry(
        name="local-vlm", config={"model": str(model), "batch_size": 2, "max_new_tokens": 8}, batch_size=3
    )
    return plan_runs([entry], ["T", "T+E"], out=out, n_resamples=10)


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def outputs(runs: list) -> dict[str, Any]:
    """Every run's predictions, scored rows and metrics (timings left out) and its explanations file."""
    found = {}
    for planned in runs:
        rows = {
            name: [json.loads(x) for x in (planned.out / name).read_text().splitlines()]
            for name in ("predictions.jsonl", "scored.jsonl")
        }
        metrics = json.loads((planned.out / "metrics.json").read_text())
        found[planned.out.name] = without_timings({**rows, "metrics": metrics}) | {
            "explanations.jsonl": (planned.out / "explanations.jsonl").read_bytes()
        }
    return found


@pytest.fixture(scope="module")
def local(model, data, tmp_path_factory) -> dict[str, Any]:
    runs = plan(model, tmp_path_factory.mktemp("local") / "evaluate")
    run_plan(runs, data, on_change="restart", encode=lazy_encoder())
    found = outputs(runs)
    assert all(run["metrics"]["explanations"]["key_points"]["samples"] == 5 for run in found.values())
    return found


def count_loads(monkeypatch) -> list[str]:
    from rwpost.llm import local

    loads: list[str] = []
    real = local.load_local_model

    def counted(*args, **kwargs):
        loads.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(local, "load_local_model", counted)
    return loads


def test_local_model_runs_are_recognised(model, tmp_path):
    specs = [p.spec for p in plan(model, tmp_path)]
    assert all(uses_local_model(s) for s in specs)
    vlm = plan_runs([DetectorEntry(name="vlm")], ["T"], out=tmp_path)[0].spec
    vlm_local = plan_runs([DetectorEntry(name="vlm", config={"backend": "local"})], ["T"], out=tmp_path)
    assert not uses_local_model(vlm) and uses_local_model(vlm_local[0].spec)
    assert not uses_local_model(plan_runs([DetectorEntry(name="majority")], ["T"], out=tmp_path)[0].spec)


def test_sharded_local_runs_load_the_model_once_and_give_the_same_outputs(
    model, data, local, tmp_path, monkeypatch
):
    loads = count_loads(monkeypatch)
    runs = plan(model, tmp_path / "evaluate")
    executor = ExecutorParams(name="local", shards=2)
    store = ShardStore(tmp_path / "evaluate.shards")
    run_plan(runs, data, executor=executor, store=store, encode=lazy_encoder())
    assert len(loads) == 1  # two runs (T, T+E), one model held for both
    assert outputs(runs) == local


def test_a_sharded_plan_refuses_a_bad_option_or_a_learner_without_training_data_before_any_shard(
    data, tmp_path
):
    # as the unsharded run refuses them before it writes: no worker, no Ray, no log, no folder
    store = ShardStore(tmp_path / "evaluate.shards")
    executor = ExecutorParams(name="local", shards=2)
    cases = [
        (DetectorEntry(name="majority", config={"foo": 1}), r"bad configuration \(foo.*options: none$"),
        (DetectorEntry(name="majority"), "detector 'majority' learns from labelled samples: give --train"),
        (DetectorEntry(name="no-such-detector"), "no-such-detector"),
    ]
    for entry, refusal in cases:
        runs = plan_runs([entry], ["T", "T+E"], out=tmp_path / "evaluate", n_resamples=10)
        with pytest.raises(ConfigError, match=refusal):
            run_plan(runs, data, executor=executor, store=store)
        assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ray_actor_holds_the_model_and_gives_the_local_outputs(ray_cluster, model, data, local, tmp_path):
    runs = plan(model, tmp_path / "evaluate")
    store = ShardStore(tmp_path / "evaluate.shards")
    run_plan(runs, data, executor=ExecutorParams(name="ray"), store=store, encode=lazy_encoder())
    assert outputs(runs) == local  # key-point similarities too: the workers use the driver's threads
    assert len(list((tmp_path / "evaluate.shards" / "done").iterdir())) == 2
