"""The DVC evaluate stage on the bundled sample: this tree against a baseline commit, in the same run.

    python -m benchmarks.evaluate_stage [--baseline 1944020] [--repeats 3] [--smoke]

Each round runs the stage (``python -m pipelines.evaluate --params ...``, each tree with its own params.yaml
``evaluate:`` section) in a fresh process from the baseline commit's tree (``git archive`` into a temporary
folder) and from this one, alternating which goes first: a cold run into an empty folder (``make demo`` on a
fresh clone), then a rerun over it (``dvc repro -f -s evaluate`` after ``make demo``: every run resumes from
the answers on disk). Every score of the baseline's metrics.json must be the same in this tree (keys this
tree adds, new reports, are listed; measured latencies and the format version aside); else it fails.

The data is the sample's published version (``make demo`` builds ``data/rwpost/<version>``); without it, a
main subset built here from the released head records (``data/sample/released``, every 4th record of the
id order in dev). Goal (issue 29): the stage's time at most 1/3 of the baseline's (``1944020``: 22 s).
``--smoke``: one round of this tree alone (its own baseline), the majority detector in cell T, 10 resamples.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from benchmarks import RESULTS, arguments, goal, load, save

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
MEASURED = ("latency_s", "wall_s", "log_version")
"""Keys of metrics.json that are no score: measured times, and the file's format version (which 1944020's
files lack): the only part two runs may differ in."""


def sample_version(params: dict[str, Any], work: Path) -> tuple[Path, list[str] | None]:
    """The published sample version and the subsets to score (None: params.yaml's), else a main subset
    written under ``work`` from the released head records."""
    dataset = params["dataset"]
    built = ROOT / dataset["root"] / dataset["version"]
    if (built / "main" / "test.parquet").exists():
        return built, None
    from rwpost.dataset import write_parquet
    from rwpost.rwpost_format import read_released

    samples = sorted(read_released(RELEASED), key=lambda s: s.id)
    version = work / "data" / "v0"
    write_parquet(version / "main" / "dev.parquet", samples[::4])
    write_parquet(version / "main" / "test.parquet", [s for i, s in enumerate(samples) if i % 4])
    print(f"no {built.relative_to(ROOT)} (make demo builds it): scoring {len(samples)} released records")
    return version, ["main"]


def tree_at(commit: str, work: Path) -> Path:
    """The files of ``commit`` (git archive), unpacked under ``work``."""
    folder = work / f"tree-{commit}"
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def stage_params(tree: Path, version: Path, subsets: list[str] | None, out: Path, smoke: bool) -> Path:
    """``tree``'s params.yaml with the dataset, the output folder (and for a smoke run, the plan) replaced."""
    params = yaml.safe_load((tree / "params.yaml").read_text(encoding="utf-8"))
    params["dataset"].update(root=str(version.parent), version=version.name)
    section = params["evaluate"]
    section.update(out=str(out / "evaluate"), summary=str(out / "summary.json"))
    if subsets:
        section["subsets"] = subsets
    if smoke:
        section.update(detectors=[{"name": "majority"}], settings=["T"], k=[], bootstrap=10)
    path = out / "params.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def run_stage(tree: Path, params: Path) -> float:
    """Seconds of one stage process in ``tree`` (its own rwpost first on the path)."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'crawlers'}", "HF_HUB_OFFLINE": "1"}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.evaluate", "--params", str(params)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - began
    if done.returncode:
        raise RuntimeError(f"the evaluate stage in {tree} failed:\n{done.stderr[-2000:]}")
    return seconds


def without_measured(value: Any) -> Any:
    """``value`` without the keys that are no score (:data:`MEASURED`)."""
    if isinstance(value, dict):
        return {k: without_measured(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [without_measured(v) for v in value]
    return value


def metrics_of(out: Path) -> dict[str, Any]:
    """Every run's metrics.json under the stage's output folder, by run folder, measured times removed."""
    folder = out / "evaluate"
    return {
        str(p.parent.relative_to(folder)): without_measured(json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("*/*/metrics.json"))
    }


def kept(base: Any, now: Any) -> bool:
    """Whether every value of ``base`` is in ``now`` unchanged (keys ``now`` adds, new reports, are not
    scores the baseline had)."""
    if isinstance(base, dict) and isinstance(now, dict):
        return all(k in now and kept(v, now[k]) for k, v in base.items())
    return base == now


def added_keys(base: Any, now: Any, path: str = "") -> list[str]:
    """The dotted keys ``now`` has and ``base`` lacks."""
    if not isinstance(base, dict) or not isinstance(now, dict):
        return []
    out = [f"{path}{k}" for k in now if k not in base]
    return out + [x for k in now if k in base for x in added_keys(base[k], now[k], f"{path}{k}.")]


def summary(seconds: list[float]) -> dict[str, float]:
    return {"min_s": min(seconds), "median_s": statistics.median(seconds), "runs_s": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="1944020", help="commit to compare with (default: 1944020)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (each: cold run, then rerun)")
    args = parser.parse_args(argv or [])
    if args.smoke:
        args.baseline, args.repeats = "this tree", 1
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    before = load()
    times: dict[str, dict[str, list[float]]] = {t: {"cold": [], "rerun": []} for t in ("baseline", "current")}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        work = Path(tmp)
        version, subsets = sample_version(params, work)
        trees = (
            {"current": ROOT} if args.smoke else {"baseline": tree_at(args.baseline, work), "current": ROOT}
        )
        metrics: dict[str, dict[str, Any]] = {}
        for round_ in range(args.repeats):
            order = sorted(trees, reverse=round_ % 2 == 1)  # baseline first, then current first
            for name in order:
                out = work / f"{name}-{round_}"
                path = stage_params(trees[name], version, subsets, out, args.smoke)
                loads.append(load())
                for kind in ("cold", "rerun"):
                    times[name][kind].append(run_stage(trees[name], path))
                metrics.setdefault(name, metrics_of(out))
                print(
                    f"round {round_ + 1} {name}: cold {times[name]['cold'][-1]:.1f} s, "
                    f"rerun {times[name]['rerun'][-1]:.1f} s [load {loads[-1]}]",
                    flush=True,
                )
    if args.smoke:  # this tree stands for its own baseline
        times["baseline"], metrics["baseline"] = times["current"], metrics["current"]
    runs = len(metrics["current"])
    added = sorted(
        {
            key
            for run, now in metrics["current"].items()
            for key in added_keys(metrics["baseline"].get(run), now)
        }
    )
    same = runs > 0 and all(
        kept(metrics["baseline"].get(run), now) for run, now in metrics["current"].items()
    )
    result: dict[str, Any] = {
        "baseline": args.baseline,
        "runs": runs,
        "metrics_identical": same,
        "metrics_keys_added": added,
        "load_before": before,
        "loads": loads,
        "load_after": load(),
    }
    for kind in ("cold", "rerun"):
        result[kind] = {name: summary(times[name][kind]) for name in times}
        base, now = result[kind]["baseline"], result[kind]["current"]
        result[kind]["ratio_min"] = now["min_s"] / base["min_s"]
        result[kind]["ratio_median"] = now["median_s"] / base["median_s"]
    rerun, cold = result["rerun"], result["cold"]
    goal(
        f"evaluate stage rerun (dvc repro -f) {rerun['current']['min_s']:.1f} s = "
        f"{rerun['ratio_min']:.2f}x (median {rerun['ratio_median']:.2f}x) of {args.baseline}'s "
        f"{rerun['baseline']['min_s']:.1f} s measured in this run (target <= 0.33); cold "
        f"{cold['current']['min_s']:.1f} s = {cold['ratio_min']:.2f}x; metrics of {runs} runs "
        f"{'identical' if same else 'DIFFER'}" + (f" (keys added: {', '.join(added)})" if added else ""),
        before,
    )
    save(RESULTS / "evaluate_stage.json", result, args.smoke)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
