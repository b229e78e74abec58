"""The local executor's process pool (issue 35): a sharded extraction of the bundled sample (offline
backend, ``executor: {shards: 8}``) with ``workers: 2`` against ``workers: 1`` (the shards one after the
other in this process), both measured here in fresh folders, alternating, ``--repeats`` times each; the
fastest of each is compared (the least disturbed by a shared machine). The outputs of both must be the
bytes of one plain run, or the benchmark fails.

The outputs go to the temp folder's disk, as a real run's do. A shard's files are not fsynced (its
marker's SHA-256s vouch for them; the merged outputs are); until issue 35 each record was fsynced, about
half of a run, and then each shard's five files. ``--tmpfs`` writes to ``/dev/shm`` instead (fsync free:
the CPUs' share alone, which needs 2 idle cores).

Goal: 2 workers take at most 0.6x the time of 1, on a machine with 2 free cores (the load is printed
beside the figure: on a loaded machine the second worker finds no free core).

    python -m benchmarks.executors [--smoke] [--repeats 15] [--shards 8]
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save

ROOT = Path(__file__).resolve().parents[1]
COMPARED = ("extractions.jsonl", "rejects.jsonl", "summary.json", "funnel.json")
TARGET = 0.6


def _outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in COMPARED if (folder / name).exists()}


def main(argv: list[str] | None = None) -> dict | str:
    parser = arguments(__doc__)
    parser.add_argument("--repeats", type=int, help="runs of each worker count (default 15; smoke 1)")
    parser.add_argument("--shards", type=int, default=8, help="shards of the extraction")
    parser.add_argument("--tmpfs", action="store_true", help="write to /dev/shm, not the temp folder's disk")
    args = parser.parse_args(argv or [])
    repeats = args.repeats or (1 if args.smoke else 15)
    from benchmarks.extract_quality import load_sample
    from rwpost.io import write_jsonl
    from rwpost.stages import extract as stage

    _, articles = load_sample(ROOT / "data" / "sample" / "site")
    articles = articles[:20] if args.smoke else articles
    load_before = load()
    seconds: dict[int, list[float]] = {1: [], 2: []}
    memory = Path("/dev/shm")  # tmpfs: fsync is free there, so the figure is the CPUs', not the disk's
    where = str(memory) if args.tmpfs and memory.is_dir() and os.access(memory, os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        root = Path(tmp)
        tagged = root / "articles.jsonl"
        write_jsonl(tagged, articles)
        stage.run(stage.Params.of(input=tagged, out=root / "plain", backend="offline"))
        plain = _outputs(root / "plain")
        identical = True
        for i in range(repeats):
            for workers in (1, 2):
                out = root / f"w{workers}-{i}" / "extract"
                executor = {"shards": args.shards, "workers": workers}
                began = time.perf_counter()
                stage.run(stage.Params.of(input=tagged, out=out, backend="offline", executor=executor))
                seconds[workers].append(time.perf_counter() - began)
                identical = identical and _outputs(out) == plain
    best = {workers: min(values) for workers, values in seconds.items()}
    ratio = round(best[2] / best[1], 3)
    result = {
        "load_before": load_before,
        "articles": len(articles),
        "folder": "tmpfs (/dev/shm)" if where else "disk (the temp folder)",
        "shards": args.shards,
        "repeats": repeats,
        "seconds": {str(w): [round(s, 3) for s in values] for w, values in seconds.items()},
        "best_s": {str(w): round(s, 3) for w, s in best.items()},
        "ratio_2_to_1": ratio,
        "identical": identical,
    }
    print(json.dumps(result, indent=2))
    goal(
        f"local executor, {len(articles)} articles in {args.shards} shards ({result['folder']}): "
        f"2 workers {best[2]:.3f} s vs 1 worker {best[1]:.3f} s (fastest of {repeats}): {ratio}x "
        f"(target <= {TARGET}); outputs identical to one plain run: {identical}",
        load_before,
    )
    if not identical:
        return "the outputs of 1 and 2 workers differ from one plain run's"
    save(RESULTS / "executors.json", result, args.smoke)
    return result


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
