"""``python -m rwpost.executors shard JOB TASK`` runs the shards of one task of a written job (a Slurm array
task, ``executor.slurm.shards_per_task`` of them); ``python -m rwpost.executors merge JOB`` merges them
(the job that depends on the arrays)."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from rwpost.errors import RwpostError
from rwpost.io import read_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rwpost.executors", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    shard = sub.add_parser("shard", help="run the shards of one task of a job")
    shard.add_argument("job", type=Path)
    shard.add_argument("index", type=int, help="the task's index in the job ($SLURM_ARRAY_TASK_ID + offset)")
    merge = sub.add_parser("merge", help="merge a job's shards (refused while one is missing)")
    merge.add_argument("job", type=Path)
    args = parser.parse_args(argv)
    try:
        job = read_json(args.job)
        module = importlib.import_module(job["module"])
        if args.command == "shard":
            tasks = job.get("tasks") or [[shard] for shard in job["shards"]]
            if not 0 <= args.index < len(tasks):
                raise RwpostError(f"{args.job}: task index {args.index} is not in 0..{len(tasks) - 1}")
            for name in tasks[args.index]:  # a requeued task finds its finished shards' markers: skipped
                module.run_shard(job["params"], name)
        else:
            report = module.merge(job["params"])
            print(getattr(report, "message", report))
    except RwpostError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
