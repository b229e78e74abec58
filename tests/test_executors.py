"""Executors: the Ray executor (a local Ray started here, 2 CPUs) and the Slurm job array (its per-task
command run here) give the extract stage's outputs byte for byte as one plain local run."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from rwpost.cli import main as cli_main
from rwpost.errors import RwpostError
from rwpost.executors import ExecutorParams, ShardStore, ShardTask, run_shards, shard_keys
from rwpost.extract import shards
from rwpost.stages import extract as stage
from tests.shard_helpers import outputs, params, plain_run, write_tagged_sample

RAY_BUDGET_S = 120
"""The Ray tests' time bound (starting a local Ray takes about 10 s on 2 cores)."""


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    return write_tagged_sample(tmp_path_factory.mktemp("tagged") / "articles.jsonl")


@pytest.fixture(scope="module")
def plain(tagged, tmp_path_factory) -> dict[str, bytes]:
    return plain_run(tagged, tmp_path_factory.mktemp("plain") / "extract")


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray with 2 CPUs for this module; shut down after it."""
    why = "ray is not installed (pip install 'rwpost[ray]'); CI installs the dev extra only"
    ray = pytest.importorskip("ray", reason=why)
    began = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield began
    ray.shutdown()
    assert time.monotonic() - began < RAY_BUDGET_S


@pytest.mark.slow
def test_ray_tasks_give_the_bytes_of_one_plain_run(ray_local, tagged, plain, tmp_path):
    out = tmp_path / "extract"
    stage.run(params(tagged, out, name="ray", shards=7))
    assert outputs(out) == plain
    # a rerun finds every marker: nothing is sent to Ray, the merge alone runs
    store = ShardStore(tmp_path / "extract.shards")
    assert store.pending(shard_keys(tagged, 7)) == []


@pytest.mark.slow
def test_ray_actors_hold_one_model_each_and_take_many_shards(ray_local, tagged, plain, tmp_path):
    # backend local would load a model folder: the actor path is exercised with the offline extractor
    # held instead (num_gpus=0 on this CPU machine), exactly as a GPU actor holds its LocalChatModel
    out = tmp_path / "extract"
    p = params(tagged, out, name="ray", shards=5, actors=2)
    from rwpost.executors.ray_executor import run_ray

    built = tmp_path / "built"
    built.mkdir()

    def hold():
        (built / f"{os.getpid()}-{time.monotonic_ns()}").touch()
        return shards.extractor_of(p)

    task = ShardTask(
        name="extract",
        shards=list(shard_keys(tagged, 5)),
        run=lambda shard, held: shards.run_shard(p, shard, held),
        hold=hold,
    )
    run_ray(task, actors=2)
    assert len(list(built.iterdir())) == 2  # two replicas for five shards
    stage.merge(p)
    assert outputs(out) == plain


@pytest.mark.slow
def test_ray_names_every_failed_shard(ray_local, tmp_path):
    def run(shard, held):
        if shard in ("b", "c"):
            raise RwpostError(f"bad record in {shard}")
        (tmp_path / shard).touch()

    with pytest.raises(RwpostError, match=r"2 of 3 shards failed \(b: bad record in b; c: bad record in c\)"):
        run_shards(ExecutorParams(name="ray"), ShardTask(name="demo", shards=["a", "b", "c"], run=run))
    assert (tmp_path / "a").exists()  # the others still ran


def test_slurm_writes_an_array_whose_task_command_runs_here(tagged, plain, tmp_path):
    out = tmp_path / "extract"
    p = params(tagged, out, name="slurm", shards=3, slurm={"partition": "gpu", "max_parallel": 2})
    report = stage.run(p)
    folder = tmp_path / "extract.shards" / "slurm"
    assert f"bash {folder / 'submit.sh'}" in report.message
    array = (folder / "array.sbatch").read_text()
    assert "#SBATCH --array=0,1,2%2" in array and "#SBATCH --partition=gpu" in array
    submit = (folder / "submit.sh").read_text()
    assert "--dependency=afterok:" in submit and "merge.sbatch" in submit
    assert not out.exists()  # nothing runs until the scripts are submitted
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    merge = subprocess.run(["bash", str(folder / "merge.sbatch")], env=env, capture_output=True, text=True)
    assert merge.returncode == 1 and "3 of 3 shards have not finished" in merge.stderr  # refused: none ran
    for index in range(3):  # what Slurm does: the same script, one SLURM_ARRAY_TASK_ID per task
        task = subprocess.run(
            ["bash", str(folder / "array.sbatch")],
            env={**env, "SLURM_ARRAY_TASK_ID": str(index)},
            capture_output=True,
            text=True,
        )
        assert task.returncode == 0, task.stderr
    merge = subprocess.run(["bash", str(folder / "merge.sbatch")], env=env, capture_output=True, text=True)
    assert merge.returncode == 0, merge.stderr
    assert outputs(out) == plain
    stage.run(p)  # a rerun with every shard done submits the merge alone
    assert not (folder / "array.sbatch").exists()
    assert "sbatch merge.sbatch" in (folder / "submit.sh").read_text()


def test_cli_extract_takes_executor_and_shards(tagged, plain, tmp_path, capsys):
    out = tmp_path / "extract"
    args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "offline", "--shards", "4"]
    assert cli_main([*args, "--executor", "local"]) == 0
    assert outputs(out) == plain
    assert cli_main([*args, "--executor", "slurm"]) == 0
    assert "submit with: bash" in capsys.readouterr().out
    assert cli_main([*args, "--executor", "cloud"]) != 0


@pytest.mark.slow
def test_ray_evaluate_runs_are_tasks_with_markers(ray_local, tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
    args = ["evaluate", "--data", str(data), "--detector", "majority", "--detector", "stratified"]
    args += ["--train-fraction", "0.5", "--bootstrap", "20", "--no-key-points", "--no-progress"]
    assert cli_main([*args, "--out", str(tmp_path / "local")]) == 0
    assert cli_main([*args, "--out", str(tmp_path / "ray"), "--executor", "ray"]) == 0
    for run in ("majority-TI", "stratified-TI"):
        local = json.loads((tmp_path / "local" / run / "metrics.json").read_text())
        remote = json.loads((tmp_path / "ray" / run / "metrics.json").read_text())
        assert remote["macro_f1"] == local["macro_f1"] and remote["views"] == local["views"]
    assert len(list((tmp_path / "ray.shards" / "done").iterdir())) == 2
