"""Executors: one protocol, three implementations. The local process pool (1 or 2 workers), a real local Ray
(2 CPUs, bound to 127.0.0.1) and the Slurm job arrays (their task commands run here, as Slurm would) give
the extract stage's outputs byte for byte as one plain local run."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from rwpost.cli import main as cli_main
from rwpost.errors import ConfigError, RwpostError
from rwpost.executors import ExecutorParams, ShardJob, ShardStore, run_job, shard_keys, shard_names
from rwpost.executors.base import driver_threads
from rwpost.executors.held import held
from rwpost.stages import extract as stage
from tests.shard_helpers import outputs, params, plain_run, ray_cluster, write_tagged_sample

__all__ = ["ray_cluster"]  # the module's one Ray, a fixture


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    return write_tagged_sample(tmp_path_factory.mktemp("tagged") / "articles.jsonl")


@pytest.fixture(scope="module")
def plain(tagged, tmp_path_factory) -> dict[str, bytes]:
    return plain_run(tagged, tmp_path_factory.mktemp("plain") / "extract")


def job_of(root: Path, shards: list[str], run, **fields) -> ShardJob:
    return ShardJob(
        name="demo", keys=dict.fromkeys(shards, "k"), pending=shards, run=run, root=root, **fields
    )


# --- local: a process pool -----------------------------------------------------------------------------


def test_local_one_and_two_workers_give_the_bytes_of_one_plain_run(tagged, plain, tmp_path):
    reported = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}" / "extract"
        seen: list[int] = []
        stage.run(params(tagged, out, shards=7, workers=workers), progress=seen.append)
        assert outputs(out) == plain
        reported[workers] = sum(seen)
    assert reported[2] == reported[1] > 0  # the pool's workers report their progress too


def test_local_pool_runs_shards_in_parallel_processes_and_names_each_failure(tmp_path):
    import multiprocessing

    together = multiprocessing.get_context("fork").Barrier(2, timeout=300)  # a and c must overlap

    def run(shard, progress):
        (tmp_path / f"{shard}.pid").write_text(str(os.getpid()))
        if shard in ("a", "c"):
            together.wait()
        if shard in ("b", "d"):
            raise RwpostError(f"bad record in {shard}")

    job = job_of(tmp_path, ["a", "b", "c", "d"], run)
    with pytest.raises(
        RwpostError, match=r"demo: 2 of 4 shards failed \(b: bad record in b; d: bad record in d\)"
    ):
        run_job(ExecutorParams(workers=2), job)
    pids = {(tmp_path / f"{s}.pid").read_text() for s in "abcd"}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # every shard ran, in two worker processes


def test_shards_run_largest_first_so_none_starts_last_alone(tmp_path):
    ran: list[str] = []
    sizes = {"a": 10, "b": 70, "c": 30, "d": 70, "e": 0}  # e's size unknown to the job: it goes last
    job = job_of(tmp_path, list("abcde"), lambda shard, progress: ran.append(shard), sizes=sizes)
    assert job.for_plain() == ["b", "d", "c", "a", "e"]  # ties keep the job's order
    run_job(ExecutorParams(workers=1), job)
    assert ran == ["b", "d", "c", "a", "e"]


STOPPED_POOL = """
import os, sys, threading
from pathlib import Path
from rwpost.errors import sigterm_interrupts
from rwpost.executors import ExecutorParams, ShardJob, run_job

root = Path(sys.argv[1])

def run(shard, progress):
    (root / f"{shard}.pid").write_text(str(os.getpid()))
    threading.Event().wait()  # until stopped

job = ShardJob(name="demo", keys=dict.fromkeys("abcd", "k"), pending=list("abcd"), run=run, root=root)
try:
    with sigterm_interrupts():
        run_job(ExecutorParams(workers=2), job)
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_stopped_local_run_stops_its_workers(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen(
        [sys.executable, "-c", STOPPED_POOL, str(tmp_path)], env=env, stdout=subprocess.PIPE
    )
    deadline = time.monotonic() + 300  # a loaded machine forks slowly: wait for both workers, however long
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
    workers = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert len(workers) == 2
    driver.send_signal(signal.SIGTERM)
    out, _ = driver.communicate(timeout=300)
    assert out.decode().strip() == "interrupted"
    for pid in workers:  # the workers are gone, not left running their shards
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}/status").exists() else ""
        assert "zombie" in status, f"worker {pid} still running"


def test_local_model_shards_share_one_held_model_in_this_process(tmp_path):
    built: list[int] = []

    def run(shard, progress):
        model = held("model", lambda: built.append(os.getpid()) or object())
        (tmp_path / shard).write_text(str(id(model)))

    job = job_of(tmp_path, ["a", "b", "c"], run, models=frozenset({"a", "b", "c"}))
    run_job(ExecutorParams(workers=2), job)
    assert built == [os.getpid()]  # loaded once, here, for the three shards
    assert len({(tmp_path / s).read_text() for s in "abc"}) == 1


def test_more_shards_than_records_are_refused_before_anything_is_written(tagged, tmp_path):
    lines = sum(1 for line in tagged.read_text().splitlines() if line.strip())
    with pytest.raises(
        ConfigError, match=rf"executor.shards: 100000 shards for {lines} records in .*give at most {lines}$"
    ):
        stage.run(params(tagged, tmp_path / "extract", shards=100000))
    assert list(tmp_path.iterdir()) == []


# --- ray: a real local cluster -------------------------------------------------------------------------


def _listening(port: int) -> set[str]:
    """The local addresses listening on TCP ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hexport = local.rpartition(":")
            if state == "0A" and int(hexport, 16) == port:
                found.add(address)
    return found


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
"""127.0.0.1 in /proc/net/tcp, as an IPv4-mapped IPv6 address, and ::1."""


@pytest.mark.slow
def test_ray_started_by_rwpost_listens_on_loopback_only(ray_cluster):
    node = ray_cluster.nodes()[0]
    assert node["NodeManagerAddress"] == "127.0.0.1"
    gcs_port = int(ray_cluster.get_runtime_context().gcs_address.rpartition(":")[2])
    for port in (gcs_port, node["NodeManagerPort"], node["ObjectManagerPort"]):
        assert _listening(port) and _listening(port) <= LOOPBACK, (port, _listening(port))


@pytest.mark.slow
def test_the_local_rays_workers_run_at_this_processs_priority(ray_cluster):
    """Ray starts its workers at nice 15; the Ray rwpost starts runs them at the driver's priority, or any
    busy process on the machine starves them (the Ray evaluate test: 4.9 s quiet, 408-530 s beside four
    busy loops on 2 cores)."""
    niceness = ray_cluster.remote(lambda: os.nice(0))
    assert ray_cluster.get(niceness.remote(), timeout=60) == os.nice(0)


def test_ray_gives_the_bytes_of_one_plain_run_and_a_rerun_sends_nothing(ray_cluster, tagged, plain, tmp_path):
    out = tmp_path / "extract"
    stage.run(params(tagged, out, name="ray", shards=7))
    assert outputs(out) == plain
    assert ShardStore(tmp_path / "extract.shards").pending(shard_keys(tagged, 7)) == []
    logs = tmp_path / "extract.shards" / "logs"
    assert sorted(p.stem for p in logs.iterdir()) == shard_names(7)  # one log per shard, kept


@pytest.mark.slow
def test_ray_replicas_hold_one_model_each_and_workers_compute_with_the_drivers_threads(ray_cluster, tmp_path):
    def run(shard, progress):
        held("model", lambda: (tmp_path / f"built-{os.getpid()}").touch())
        (tmp_path / shard).write_text(os.environ["OMP_NUM_THREADS"])

    shards = [f"s{i}" for i in range(5)]
    run_job(ExecutorParams(name="ray", actors=2), job_of(tmp_path, shards, run, models=frozenset(shards)))
    assert len(list(tmp_path.glob("built-*"))) == 2  # two replicas, five shards
    assert {(tmp_path / s).read_text() for s in shards} == {str(driver_threads())}  # Ray's default is 1


@pytest.mark.slow
def test_a_killed_replica_is_restarted_and_its_lost_shard_sent_again(ray_cluster, tmp_path):
    import signal

    def run(shard, progress):
        held("model", lambda: (tmp_path / f"loaded-{os.getpid()}").touch())
        if shard == "b" and not (tmp_path / "killed").exists():
            (tmp_path / "killed").touch()
            os.kill(os.getpid(), signal.SIGKILL)  # the replica dies mid-shard (out of memory, a kill -9)
        (tmp_path / shard).touch()

    shards = ["a", "b", "c", "d"]
    run_job(ExecutorParams(name="ray", actors=1), job_of(tmp_path, shards, run, models=frozenset(shards)))
    assert all((tmp_path / s).exists() for s in shards)
    assert len(list(tmp_path.glob("loaded-*"))) == 2  # the restarted replica loaded its model again


@pytest.mark.slow
def test_ray_names_failures_stops_a_shard_at_its_time_limit_and_honours_the_cap(ray_cluster, tmp_path):
    def run(shard, progress):
        import threading
        import time

        began = time.monotonic()  # the system's clock: comparable across the workers
        print(f"shard {shard} says hello")
        try:
            if shard == "b":
                raise RwpostError("bad record in b")
            threading.Event().wait(None if shard == "c" else 0.5)  # c never ends: the time limit stops it
        finally:
            (tmp_path / f"{shard}.span").write_text(f"{began} {time.monotonic()}")

    executor = ExecutorParams(name="ray", ray={"max_concurrency": 1, "time_limit_s": 5, "memory": "200M"})
    with pytest.raises(
        RwpostError,
        match=r"2 of 4 shards failed \(b: bad record in b; c: stopped after the time limit of 5 s",
    ):
        run_job(executor, job_of(tmp_path, ["a", "b", "c", "d"], run))
    spans = sorted(tuple(map(float, (tmp_path / f"{s}.span").read_text().split())) for s in "abcd")
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans  # one at a time
    assert "shard a says hello" in (tmp_path / "logs" / "a.log").read_text()


@pytest.mark.slow
def test_ray_evaluate_runs_are_tasks_with_markers(ray_cluster, tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
    args = ["evaluate", "--data", str(data), "--detector", "majority", "--detector", "stratified"]
    args += ["--train-fraction", "0.5", "--bootstrap", "20", "--no-key-points", "--no-progress"]
    assert cli_main([*args, "--out", str(tmp_path / "local")]) == 0
    assert cli_main([*args, "--out", str(tmp_path / "ray"), "--executor", "ray"]) == 0
    for run in ("majority-TI", "stratified-TI"):
        local = (tmp_path / "local" / run / "metrics.json").read_text()
        remote = (tmp_path / "ray" / run / "metrics.json").read_text()
        assert json.loads(remote) == json.loads(local)  # every view, metric and interval
    assert len(list((tmp_path / "ray.shards" / "done").iterdir())) == 2
