"""Scaling out (issue 28): the Ray executor's overhead against ``local`` on the bundled sample (and that
the outputs are the same bytes), and the time to merge 100k records from shards.

- extract (offline backend) on the sample's tagged articles: one plain local run, then the same with
  ``executor: {name: ray, shards: 4}`` on a local Ray with 2 CPUs (its start-up timed apart); skipped,
  and said so, when ray is not installed (``pip install 'rwpost[ray]'``);
- merge: 16 shard folders holding 100k extraction-sized records (1,000 with ``--smoke``) joined in id
  order by :func:`rwpost.extract.run.merge_outputs`, as the stage's last step does.

Goal: outputs identical under every executor; the merge of 100k records well under a minute.

    python -m benchmarks.scale [--smoke]
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, goal, load, no_options, save

ROOT = Path(__file__).resolve().parents[1]
COMPARED = ("extractions.jsonl", "rejects.jsonl", "summary.json", "funnel.json")


def _outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in COMPARED if (folder / name).exists()}


def ray_overhead(tmp: Path, smoke: bool) -> dict:
    """Seconds of a plain local extract and of the same on Ray (start-up apart), and whether equal."""
    from benchmarks.extract_quality import load_sample
    from rwpost.io import write_jsonl
    from rwpost.stages import extract as stage

    _, articles = load_sample(ROOT / "data" / "sample" / "site")
    tagged = tmp / "articles.jsonl"
    write_jsonl(tagged, articles[:8] if smoke else articles)
    began = time.perf_counter()
    stage.run(stage.Params.of(input=tagged, out=tmp / "local", backend="offline"))
    result = {"articles": 8 if smoke else len(articles), "local_s": round(time.perf_counter() - began, 2)}
    try:
        import ray
    except ImportError:
        return {**result, "ray": "not installed (pip install 'rwpost[ray]')"}
    began = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    result["ray_start_s"] = round(time.perf_counter() - began, 2)
    try:
        began = time.perf_counter()
        executor = {"name": "ray", "shards": 4}
        stage.run(stage.Params.of(input=tagged, out=tmp / "ray", backend="offline", executor=executor))
        result["ray_s"] = round(time.perf_counter() - began, 2)
    finally:
        ray.shutdown()
    result["identical"] = _outputs(tmp / "ray") == _outputs(tmp / "local")
    result["ray_overhead_s"] = round(result["ray_s"] - result["local_s"], 2)
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


def main(argv: list[str] | None = None) -> dict:
    smoke = no_options(__doc__, argv).smoke
    load_before = load()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ray").mkdir()
        (root / "merge").mkdir()
        ray = ray_overhead(root / "ray", smoke)
        merge = merge_time(root / "merge", 1_000 if smoke else 100_000)
    result = {"load_before": load_before, "ray": ray, "merge": merge}
    print(json.dumps(result, indent=2))
    if "ray_s" in ray:
        head = (
            f"ray executor {ray['ray_s']} s vs local {ray['local_s']} s on {ray['articles']} articles "
            f"(+{ray['ray_start_s']} s to start Ray; outputs identical: {ray['identical']})"
        )
    else:
        head = f"local {ray['local_s']} s on {ray['articles']} articles (ray {ray['ray']})"
    goal(
        f"{head}; merge of {merge['records']:,} records from {merge['shards']} shards in "
        f"{merge['seconds']} s (target < 60 s)",
        load_before,
    )
    save(RESULTS / "scale.json", result, smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
