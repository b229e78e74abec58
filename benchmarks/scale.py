"""Scaling out (issue 28): the Ray executor's overhead against ``local`` on the bundled sample (and that
the outputs are the same bytes), and the time to merge 100k records from shards.

- extract (offline backend) on the sample's tagged articles: one plain local run, then the same with
  ``executor: {name: ray, shards: 4}`` on a local Ray with 2 CPUs (its start-up timed apart); skipped,
  and said so, when ray is not installed (``pip install 'rwpost[ray]'``);
- merge: 16 shard folders holding 100k extraction-sized records (1,000 with ``--smoke``) joined in id
  order by :func:`rwpost.extract.run.merge_outputs`, as the stage's last step does.

- evaluate: local-model evaluation (the ``local-vlm`` detector) in samples/s, run by ``local`` (in this
  process) and by one Ray actor holding the model (``num_gpus=1`` where there is a GPU, else a CPU actor;
  its start and model load timed apart), and whether the outputs are the same (timings aside). The model
  is ``--model FOLDER`` (a Hugging Face image-text-to-text folder, e.g. Qwen2-VL-2B-Instruct, on a GPU);
  without one, a tiny random Idefics3 built here (the test suite's), which says nothing of a real
  model's speed, only of the executor's overhead; on CPU both run one thread (the actor computes with
  the driver's thread count; two threads on a loaded 2-core machine ran the tiny model 10x slower). The
  samples are the bundled released sample (``--data``), text only (cell ``T``: the sample ships no
  images) unless ``--cell`` says otherwise.

Goal: outputs identical under every executor; the merge of 100k records well under a minute; one actor
on one GPU as fast as ``local`` on it, start-up aside.

    python -m benchmarks.scale [--smoke] [--model /models/Qwen2-VL-2B-Instruct] [--samples 46]
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save

ROOT = Path(__file__).resolve().parents[1]
COMPARED = ("extractions.jsonl", "rejects.jsonl", "summary.json", "funnel.json")
SAMPLE = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
TIMINGS = ("wall_s", "latency_s", "started", "finished", "mean_detector_wall_s_per_sample")
"""Wall-clock fields: the only ones an executor may change in an evaluation's outputs."""


def _outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in COMPARED if (folder / name).exists()}


def spread(values: list[float]) -> dict[str, float]:
    """The min and median of repeated timings, rounded."""
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}


def ray_overhead(tmp: Path, smoke: bool, repeats: int) -> dict:
    """Seconds of a plain local extract and of the same on Ray (start-up apart; ``repeats`` times each,
    in fresh folders), and whether the outputs are the same bytes."""
    from benchmarks.extract_quality import load_sample
    from rwpost.io import write_jsonl
    from rwpost.stages import extract as stage

    _, articles = load_sample(ROOT / "data" / "sample" / "site")
    tagged = tmp / "articles.jsonl"
    write_jsonl(tagged, articles[:8] if smoke else articles)
    local = []
    for i in range(repeats):
        began = time.perf_counter()
        stage.run(stage.Params.of(input=tagged, out=tmp / f"local{i}", backend="offline"))
        local.append(time.perf_counter() - began)
    result = {"articles": 8 if smoke else len(articles), "local_s": spread(local)}
    try:
        import ray

        from rwpost.executors.ray_executor import init_local
    except ImportError:
        return {**result, "ray": "not installed (pip install 'rwpost[ray]')"}
    began = time.perf_counter()
    init_local(ray, num_cpus=2)  # bound to 127.0.0.1, as the executor starts it
    result["ray_start_s"] = round(time.perf_counter() - began, 2)
    remote = []
    try:
        for i in range(repeats):
            began = time.perf_counter()
            executor = {"name": "ray", "shards": 4}
            out = tmp / f"ray{i}"
            stage.run(stage.Params.of(input=tagged, out=out, backend="offline", executor=executor))
            remote.append(time.perf_counter() - began)
    finally:
        ray.shutdown()
    result["ray_s"] = spread(remote)
    result["identical"] = all(_outputs(tmp / f"ray{i}") == _outputs(tmp / "local0") for i in range(repeats))
    result["ray_overhead_s"] = round(result["ray_s"]["median"] - result["local_s"]["median"], 2)
    return result


def merge_time(tmp: Path, records: int, shards: int = 16) -> dict:
    """Seconds to merge ``records`` extraction-sized rows from ``shards`` folders into one sorted file."""
    from rwpost.executors import shard_of
    from rwpost.extract.run import merge_outputs
    from rwpost.io import write_json

    filler = "x" * 1500  # about the size of one extraction record
    parts = [tmp / f"shard-{i}" for i in range(shards)]
    handles = []
    for part in parts:
        part.mkdir()
        handles.append(open(part / "extractions.jsonl", "w", encoding="utf-8"))
    for n in range(records):
        rid = f"rw-{(n * 2654435761) % (1 << 64):016x}"
        handles[shard_of(rid, shards)].write(
            json.dumps({"id": rid, "hallucinated_urls": [], "text": filler}) + "\n"
        )
    for handle in handles:
        handle.close()
    for part in parts:
        (part / "extractions.jsonl").write_bytes(
            b"".join(sorted((part / "extractions.jsonl").read_bytes().splitlines(keepends=True)))
        )
        write_json(
            part / "cost.json", {"backend": "offline", "prompt_version": "p", "counts": {"extracted": 1}}
        )
    out = tmp / "merged"
    began = time.perf_counter()
    merge_outputs(parts, out)
    seconds = time.perf_counter() - began
    size = (out / "extractions.jsonl").stat().st_size
    return {"records": records, "shards": shards, "seconds": round(seconds, 2), "mb": round(size / 1e6, 1)}


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _run_outputs(runs) -> list:
    """Every run's predictions and metrics, timings left out."""
    found = []
    for planned in runs:
        rows = [json.loads(x) for x in (planned.out / "predictions.jsonl").read_text().splitlines()]
        found.append(_untimed([rows, json.loads((planned.out / "metrics.json").read_text())]))
    return found


def _samples_per_s(runs) -> float:
    """Samples per second of detector time in finished runs (the rows' wall time: no start, no load)."""
    walls = [json.loads(x)["wall_s"] for p in runs for x in (p.out / "predictions.jsonl").open()]
    return len(walls) / sum(walls)


def actor_speed(tmp: Path, args) -> dict:
    """Samples/s of local-model evaluation run by ``local`` and by one Ray actor holding the model
    (``args.repeats`` runs each, in fresh folders; the actor's start and model load timed apart)."""
    import torch

    from rwpost.evaluate.data import load_eval_data
    from rwpost.evaluate.plan import DetectorEntry, plan_runs, run_plan
    from rwpost.executors import ExecutorParams, ShardStore

    model = args.model
    if model is None:  # the test suite's tiny random model: the executor's overhead, not a model's speed
        from tests.evaluate_helpers import build_tiny_vlm

        model = tmp / "tiny-vlm"
        build_tiny_vlm(model, scripted=False)
    data = load_eval_data(args.data)
    data.test = data.test[: args.samples or (8 if args.smoke else None)]
    options = {"model": str(model), "batch_size": args.batch_size, "max_new_tokens": args.new_tokens}
    entry = DetectorEntry(name="local-vlm", config=options, batch_size=args.batch_size)

    def plan(name: str):
        return plan_runs([entry], [args.cell], out=tmp / name, n_resamples=10)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    result = {"model": Path(model).name, "device": device, "samples": len(data.test), "cell": args.cell}
    threads = torch.get_num_threads()
    if device == "cpu":  # as the actor: Ray runs a num_cpus=1 actor with one thread (OMP_NUM_THREADS=1)
        torch.set_num_threads(1)
        result["cpu_threads"] = 1
    local, local_rate, total = [], [], []
    for i in range(args.repeats):
        local.append(plan(f"local{i}"))
        began = time.perf_counter()
        run_plan(local[-1], data, on_change="restart")
        total.append(time.perf_counter() - began)
        local_rate.append(_samples_per_s(local[-1]))
    result["local_s"] = spread(total)
    result["local_samples_per_s"] = spread(local_rate)
    try:
        import ray

        from rwpost.executors.ray_executor import init_local
    except ImportError:
        torch.set_num_threads(threads)
        return {**result, "ray": "not installed (pip install 'rwpost[ray]')"}
    if args.smoke:  # the tests run a model replica on Ray (tests/test_executors_evaluate.py)
        torch.set_num_threads(threads)
        return {**result, "ray": "skipped in a smoke run"}
    began = time.perf_counter()
    init_local(ray, num_cpus=2)  # bound to 127.0.0.1, as the executor starts it
    result["ray_start_s"] = round(time.perf_counter() - began, 2)
    remote, remote_rate, total = [], [], []
    try:
        result["actor_gpus"] = 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0
        for i in range(args.repeats):
            remote.append(plan(f"ray{i}"))
            store = ShardStore(tmp / f"ray{i}.shards")
            began = time.perf_counter()
            run_plan(remote[-1], data, executor=ExecutorParams(name="ray", actors=1), store=store)
            total.append(time.perf_counter() - began)
            remote_rate.append(_samples_per_s(remote[-1]))
    finally:
        ray.shutdown()
        torch.set_num_threads(threads)  # the actor computed with the driver's threads: 1 on CPU, as local
    result["ray_s"] = spread(total)  # with the actor's start and its model load
    result["actor_samples_per_s"] = spread(remote_rate)
    result["identical"] = all(_run_outputs(r) == _run_outputs(local[0]) for r in remote + local)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = arguments(__doc__)
    parser.add_argument("--model", type=Path, help="a local VLM folder (default: a tiny random one)")
    parser.add_argument("--data", type=Path, default=SAMPLE, help="released JSONL samples to evaluate")
    parser.add_argument("--samples", type=int, help="evaluate at most this many (default: all; smoke 8)")
    parser.add_argument("--cell", default="T", help="the input cell (the bundled sample has no images)")
    parser.add_argument("--batch-size", type=int, default=16, help="samples per detector call")
    parser.add_argument("--new-tokens", type=int, default=64, help="the longest answer")
    parser.add_argument("--repeats", type=int, help="each measurement this many times (default 3; smoke 1)")
    args = parser.parse_args(argv or [])
    args.repeats = args.repeats or (1 if args.smoke else 3)
    smoke = args.smoke
    load_before = load()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("ray", "merge", "actor"):
            (root / name).mkdir()
        ray = ray_overhead(root / "ray", smoke, args.repeats)
        merges = []
        for i in range(args.repeats):
            (root / "merge" / str(i)).mkdir()
            merges.append(merge_time(root / "merge" / str(i), 1_000 if smoke else 100_000))
            shutil.rmtree(root / "merge" / str(i))
        merge = {**merges[0], "seconds": spread([m["seconds"] for m in merges])}
        actor = actor_speed(root / "actor", args)
    result = {"load_before": load_before, "ray": ray, "merge": merge, "evaluate_actor": actor}
    print(json.dumps(result, indent=2))
    if "ray_s" in ray:
        head = (
            f"ray executor {ray['ray_s']['median']} s vs local {ray['local_s']['median']} s (median) on "
            f"{ray['articles']} articles "
            f"(+{ray['ray_start_s']} s to start Ray; outputs identical: {ray['identical']})"
        )
    else:
        head = f"local {ray['local_s']['median']} s on {ray['articles']} articles (ray {ray['ray']})"
    if "actor_samples_per_s" in actor:
        head += (
            f"; local-vlm ({actor['model']}, {actor['device']}) one actor "
            f"{actor['actor_samples_per_s']['median']} samples/s vs local "
            f"{actor['local_samples_per_s']['median']} (median; identical: {actor['identical']})"
        )
    goal(
        f"{head}; merge of {merge['records']:,} records from {merge['shards']} shards in "
        f"{merge['seconds']['median']} s (median; target < 60 s)",
        load_before,
    )
    gpu = actor["device"] == "cuda"
    save(RESULTS / ("scale-cuda.json" if gpu else "scale.json"), result, smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
