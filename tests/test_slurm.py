"""The Slurm executor without Slurm: the written job arrays are run here as Slurm runs them (the same
script, one ``SLURM_ARRAY_TASK_ID`` per task), then the merge job; the outputs are one plain run's bytes.
Arrays longer than ``max_array_size`` are split, a task runs ``shards_per_task`` shards, and a preempted
task requeues itself (``scontrol`` here is a recorder on PATH: the one Slurm command a task calls)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.cli import main as cli_main
from rwpost.executors import ShardStore, shard_keys
from rwpost.stages import extract as stage
from tests.shard_helpers import outputs, params, plain_run, write_tagged_sample


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    return write_tagged_sample(tmp_path_factory.mktemp("tagged") / "articles.jsonl")


@pytest.fixture(scope="module")
def plain(tagged, tmp_path_factory) -> dict[str, bytes]:
    return plain_run(tagged, tmp_path_factory.mktemp("plain") / "extract")


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """This checkout importable, and an ``scontrol`` that writes its arguments to ``requeued``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "requeued"}\n')
    scontrol.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), os.environ["PATH"]])
    pythonpath = os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PATH": path, "PYTHONPATH": pythonpath, "SLURM_ARRAY_JOB_ID": "77"}


def bash(script: Path, env: dict[str, str], task: int | None = None) -> subprocess.CompletedProcess:
    extra = {} if task is None else {"SLURM_ARRAY_TASK_ID": str(task)}
    return subprocess.run(["bash", str(script)], env={**env, **extra}, capture_output=True, text=True)


def array_size(script: Path) -> int:
    """The tasks of an array script (``#SBATCH --array=0-N%M`` or ``=0``)."""
    found = re.search(r"^#SBATCH --array=0(?:-(\d+))?", script.read_text(), re.MULTILINE)
    assert found, script.read_text()
    return int(found[1] or 0) + 1


def test_arrays_split_at_max_array_size_and_tasks_with_several_shards_give_the_plain_bytes(
    tagged, plain, tmp_path, env
):
    out = tmp_path / "extract"
    slurm = {"max_array_size": 2, "shards_per_task": 2, "max_parallel": 2, "partition": "gpu"}
    report = stage.run(params(tagged, out, name="slurm", shards=9, slurm=slurm))
    folder = tmp_path / "extract.shards" / "slurm"
    assert (
        report.submitted
        and f"9 of 9 shards to run; submit with: bash {folder / 'submit.sh'}" in report.message
    )
    arrays = sorted(folder.glob("array-*.sbatch"))
    assert [array_size(a) for a in arrays] == [2, 2, 1]  # 5 tasks of at most 2 shards, arrays of at most 2
    assert (
        "#SBATCH --array=0-1%2" in arrays[0].read_text()
        and "#SBATCH --partition=gpu" in arrays[0].read_text()
    )
    submit = (folder / "submit.sh").read_text()
    assert 'sbatch --dependency=afterok:"${array0%%;*}:${array1%%;*}:${array2%%;*}" merge.sbatch' in submit
    assert not out.exists()  # nothing runs until the scripts are submitted
    merge = bash(folder / "merge.sbatch", env)
    assert merge.returncode == 1 and "9 of 9 shards have not finished" in merge.stderr  # refused: none ran
    for array in arrays:  # what Slurm does: each array's script once per task id, from 0
        for task in range(array_size(array)):
            run = bash(array, env, task)
            assert run.returncode == 0, run.stderr
    assert bash(folder / "merge.sbatch", env).returncode == 0
    assert outputs(out) == plain
    assert not (tmp_path / "requeued").exists()


def test_a_preempted_task_requeues_itself_and_its_requeue_skips_the_finished_shards(
    tagged, plain, tmp_path, env
):
    out = tmp_path / "extract"
    wrapper = tmp_path / "python-preempted"  # the task's interpreter, preempted after its first shard:
    # Slurm signals the batch shell (B:USR1) while the task runs; this one does it once, deterministically
    wrapper.write_text(
        "#!/bin/bash\n"
        f'"{sys.executable}" "$@"; status=$?\n'
        f"if [ ! -e {tmp_path / 'signalled'} ]; then\n"
        f"  touch {tmp_path / 'signalled'}; kill -USR1 $PPID; exec sleep 60  # until the trap stops it\n"
        "fi\n"
        "exit $status\n"
    )
    wrapper.chmod(0o755)
    slurm = {"shards_per_task": 3, "python": str(wrapper)}
    p = params(tagged, out, name="slurm", shards=3, slurm=slurm)
    stage.run(p)
    folder = tmp_path / "extract.shards" / "slurm"
    script = folder / "array-000.sbatch"
    assert "#SBATCH --requeue" in script.read_text() and "#SBATCH --signal=B:USR1@90" in script.read_text()
    first = bash(script, env, 0)
    assert first.returncode == 0, first.stderr
    assert "preempted: stopping task 0 and requeueing it" in first.stderr
    assert (tmp_path / "requeued").read_text() == "requeue 77_0\n"
    store = ShardStore(tmp_path / "extract.shards")
    assert store.pending(shard_keys(tagged, 3)) == []  # the shards had finished before the signal
    stamps = {m: m.stat().st_mtime_ns for m in (store.root / "done").iterdir()}
    again = bash(script, env, 0)  # the requeued task: every marker there, nothing redone, no new requeue
    assert again.returncode == 0, again.stderr
    assert {m: m.stat().st_mtime_ns for m in stamps} == stamps
    assert (tmp_path / "requeued").read_text() == "requeue 77_0\n"
    assert bash(folder / "merge.sbatch", env).returncode == 0
    assert outputs(out) == plain


def test_a_task_preempted_before_its_shards_requeues_without_running_them(tagged, tmp_path, env):
    p = params(tagged, tmp_path / "extract", name="slurm", shards=2, slurm={"setup": ["kill -USR1 $$"]})
    stage.run(p)
    folder = tmp_path / "extract.shards" / "slurm"
    run = bash(folder / "array-000.sbatch", env, 1)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "requeued").read_text() == "requeue 77_1\n"
    assert not (tmp_path / "extract.shards" / "done").exists()


def test_nothing_pending_says_so_and_submit_without_sbatch_is_one_line(tagged, tmp_path, env):
    p = params(tagged, tmp_path / "extract", shards=2)
    stage.run(p)  # every shard done locally
    report = stage.run(params(tagged, tmp_path / "extract", name="slurm", shards=2))
    folder = tmp_path / "extract.shards" / "slurm"
    assert report.counts == {"shards": 2, "pending": 0}
    assert report.message.startswith("extract: all 2 shards have finished, nothing to run; merge here with: ")
    assert not list(folder.glob("array-*.sbatch"))
    submit = subprocess.run(
        [shutil.which("bash"), str(folder / "submit.sh")],
        env={**env, "PATH": "/nonexistent"},  # no sbatch
        capture_output=True,
        text=True,
    )
    assert submit.returncode == 127
    assert submit.stderr.strip().splitlines() == [
        f"{folder / 'submit.sh'}: sbatch not found: run this on a Slurm login node. Without Slurm: run each "
        "task with SLURM_ARRAY_TASK_ID=i bash array-NNN.sbatch, then bash merge.sbatch"
    ]


def test_cli_extract_takes_executor_and_shards(tagged, plain, tmp_path, capsys):
    out = tmp_path / "extract"
    args = ["extract", "--in", str(tagged), "--out", str(out), "--backend", "offline", "--shards", "4"]
    assert cli_main([*args, "--executor", "local"]) == 0
    assert outputs(out) == plain
    assert cli_main([*args, "--executor", "slurm"]) == 0
    assert "all 4 shards have finished" in capsys.readouterr().out
    assert cli_main([*args, "--executor", "cloud"]) != 0
