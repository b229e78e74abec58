"""CPU the LLM client spends per call, against the client of a baseline commit, on a quiet and a busy machine.

The extraction workload of ``benchmarks/extract.py`` (102 articles, 3 chained calls each, 32 in flight,
the loopback server answering after 200 ms in a process of its own) runs in a fresh child process per
round, once with this tree's ``rwpost`` and once with the tree of ``--baseline`` (``git archive``; default
7a62fe2), taking turns. The child's own CPU time (``time.process_time``: the server's process is not in it)
divided by the server's chat requests is the client's CPU per call; calls/s is divided by the workload's
FIFO ceiling at 200 ms (``benchmarks.extract.ceiling``). Each round runs twice: alone, and with a
CPU-bound process (a pure-Python busy loop) beside it ("busy"). Min and median of ``--repeats``, the load
beside each. Goal (issue 40): <= 1 ms of CPU per call at 32 in flight, >= 90 % of the ceiling when busy.
Then one more run of each tree under cProfile (CPU time) gives where a call's CPU goes, as shares by layer
(:data:`LAYERS`: aiohttp's connections, the SDK, httpx, httpcore/h11/anyio, jsonschema, rwpost, asyncio).

    python -m benchmarks.llm_cpu [--repeats 3] [--smoke]

Writes ``benchmarks/results/llm_cpu.json``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.evaluate_stage import tree_at
from benchmarks.extract import ceiling

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7a62fe2"
LATENCY_S = 0.2

CHILD = """
import cProfile, json, pstats, sys, time
from pathlib import Path
from benchmarks.extract import ServerProcess
from benchmarks.extract_quality import load_sample
from rwpost.extract import LLMExtractor
from rwpost.llm import LLMClient

if __name__ == "__main__":
    site, count = Path(sys.argv[1]), int(sys.argv[2])
    latency, in_flight = float(sys.argv[3]), int(sys.argv[4])
    profile = cProfile.Profile(time.process_time) if sys.argv[5:] == ["profile"] else None
    _, articles = load_sample(site)
    articles = articles[:count]
    with ServerProcess(latency) as server:
        LLMExtractor(LLMClient(model="bench", base_url=server.base_url, api_key="b", concurrency=4)).run(
            articles[:2]
        )  # warm: imports, the first connections
        client = LLMClient(model="bench", base_url=server.base_url, api_key="b", concurrency=in_flight)
        before, _ = server.counts(reset=True)
        cpu, wall = time.process_time(), time.perf_counter()
        if profile is not None:
            profile.enable()
        LLMExtractor(client).run(articles)
        if profile is not None:
            profile.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        calls = server.counts()[0] - before
    own = {}
    if profile is not None:
        for (path, _, name), row in pstats.Stats(profile).stats.items():
            where = name if path == "~" else path  # a built-in: by its name
            own[where] = own.get(where, 0.0) + row[2]
    print(json.dumps({"calls": calls, "cpu_s": cpu, "wall_s": wall, "own_s_by_file": own}))
"""

LAYERS = (
    (
        "aiohttp (connections), yarl, multidict",
        ("/aiohttp/", "/httpx_aiohttp/", "/yarl/", "/multidict/", "aiohttp."),
    ),
    ("jsonschema (answer validation)", "/jsonschema/"),
    ("rwpost (client, extractor)", "/rwpost/"),
    ("openai SDK", "/openai/"),
    ("httpx2 / httpx", "/httpx"),
    ("httpcore2 / httpcore, h11, anyio", ("/httpcore", "/h11/", "/anyio/")),
    ("asyncio and the event loop", "/asyncio/"),
    ("socket and epoll system calls", ("_socket.socket", "select.epoll", "_ssl.")),
    ("json (stdlib)", ("/json/", "_json.")),
)
"""Where the CPU of a profiled call goes: the first layer whose marker is in a function's file."""


def _tuple(marks: str | tuple[str, ...]) -> tuple[str, ...]:
    return (marks,) if isinstance(marks, str) else marks


def layers(own_s_by_file: dict[str, float]) -> dict[str, float]:
    """The profiled child's own CPU time, by layer (:data:`LAYERS`), as shares of the whole."""
    total = sum(own_s_by_file.values()) or 1.0
    shares: dict[str, float] = {}
    for path, seconds in own_s_by_file.items():
        found = (name for name, marks in LAYERS if any(m in path for m in _tuple(marks)))
        name = next(found, "other (re, sqlite, other built-ins)")
        shares[name] = shares.get(name, 0.0) + seconds / total
    return {name: round(share, 3) for name, share in sorted(shares.items(), key=lambda kv: -kv[1])}


def one(
    tree: Path, articles: int, latency: float, in_flight: int, busy: bool, profile: bool = False
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    load_before = load()
    try:
        args = [str(ROOT / "data" / "sample" / "site"), str(articles), str(latency), str(in_flight)]
        args += ["profile"] if profile else []
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args], cwd=tree, env=env, capture_output=True, text=True
        )
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    if done.returncode:
        raise RuntimeError(f"the extraction child in {tree} failed:\n{done.stderr[-2000:]}")
    run = json.loads(done.stdout.strip().splitlines()[-1])
    top = ceiling(articles, in_flight, latency)
    if profile:
        profiled = round(1000 * run["cpu_s"] / run["calls"], 3)
        return {"cpu_ms_per_call_profiled": profiled, **layers(run["own_s_by_file"])}
    return {
        "calls": run["calls"],
        "cpu_ms_per_call": round(1000 * run["cpu_s"] / run["calls"], 3),
        "calls_per_s": round(run["calls"] / run["wall_s"], 1),
        "share_of_ceiling": round(run["calls"] / run["wall_s"] / top, 3),
        "load": [load_before, load()],
    }


def _stats(rows: list[dict[str, Any]], key: str) -> dict[str, float]:
    values = [r[key] for r in rows]
    return {"min": min(values), "median": round(statistics.median(values), 3), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--articles", type=int, default=102)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--out", type=Path, default=RESULTS / "llm_cpu.json")
    args = parser.parse_args(argv)
    latency = LATENCY_S
    if args.smoke:
        args.repeats, args.articles, args.in_flight, latency = 1, 8, 8, 0.02
    started = load()
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="rwpost-llm-bench-") as tmp:
        trees = {"this tree": ROOT, "baseline": tree_at(args.baseline, Path(tmp))}
        for round_ in range(args.repeats):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for side in order:
                for busy in (False, True):
                    case = f"{side}, {'busy' if busy else 'alone'}"
                    row = one(trees[side], args.articles, latency, args.in_flight, busy)
                    runs.setdefault(case, []).append(row)
                    print(f"  {case} round {round_ + 1}: {row}", flush=True)
        where = {  # one more run of each, profiled: where a call's CPU goes
            side: one(tree, args.articles, latency, args.in_flight, False, profile=True)
            for side, tree in trees.items()
        }
        for side, shares in where.items():
            print(f"  where {side}'s CPU goes (cProfile, own time): {shares}", flush=True)
    table = {
        case: {
            "cpu_ms_per_call": _stats(rows, "cpu_ms_per_call"),
            "share_of_ceiling": _stats(rows, "share_of_ceiling"),
            "runs": rows,
        }
        for case, rows in runs.items()
    }
    mine, base = table["this tree, alone"], table["baseline, alone"]
    text = (
        f"{args.in_flight} in flight: {mine['cpu_ms_per_call']['median']} ms of CPU per call "
        f"(baseline {base['cpu_ms_per_call']['median']}; target <= 1); "
        f"{100 * table['this tree, busy']['share_of_ceiling']['median']:.1f}% of the ceiling with a busy "
        f"process beside it (baseline {100 * table['baseline, busy']['share_of_ceiling']['median']:.1f}%; "
        f"target >= 90%), {100 * mine['share_of_ceiling']['median']:.1f}% alone"
    )
    result = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "baseline": args.baseline,
        "latency_s": latency,
        "articles": args.articles,
        "in_flight": args.in_flight,
        "cases": table,
        "cpu_by_layer": where,
        "load": [started, load()],
    }
    result["goal"] = goal(text, started)
    save(args.out, result, args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
