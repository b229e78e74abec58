"""Start-up of the command line: ``rwpost --help``, every ``rwpost CMD --help`` and every ``rwpost GROUP
SUB --help`` (``filter run``, ``annotate push``, ...) against a bare ``python -c "import typer"``, in the
same run.

Each is a fresh ``python -m rwpost ... --help`` process (wall and CPU seconds, user + sys of the child),
taking turns with the typer floor and with the same commands in the tree of ``--baseline`` (``git
archive``; default 7a62fe2, before issue 40, whose ``rwpost`` imported every command module and their
libraries; a command it lacks is left out of its side). Min and median of ``--repeats``, the load
beside each. Goal (issue 40): every help at <= 3x the floor's wall time (median against median).

    python -m benchmarks.cli_start [--repeats 3] [--no-baseline] [--smoke]

Writes ``benchmarks/results/cli_start.json``.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.evaluate_stage import tree_at
from rwpost.cli import COMMANDS, load_commands

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7a62fe2"


def timed(args: list[str], tree: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one Python child run in ``tree`` (its rwpost first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "100"}
    before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - began, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} in {tree} exited {done.returncode}: {done.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def every_command() -> list[str]:
    """``""`` (the root), each command of :data:`COMMANDS`, and each group's subcommands as ``GROUP SUB``."""
    names = [""]
    groups = {}
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        groups.update(load_commands(module))
    for name in COMMANDS:
        names += [name, *(f"{name} {sub}" for sub in getattr(groups[name], "commands", {}))]
    return names


def _has_command(tree: Path, name: str) -> bool:
    """Whether ``rwpost NAME --help`` runs in ``tree`` (the baseline lacks the commands added since)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [sys.executable, "-m", "rwpost", *name.split(), "--help"]
    return subprocess.run(args, cwd=tree, env=env, capture_output=True).returncode == 0


def _stats(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--no-baseline", action="store_true", help="time this tree and the floor only")
    parser.add_argument("--out", type=Path, default=RESULTS / "cli_start.json")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats, commands, args.no_baseline = 1, ["", "labels"], True
    else:
        commands = every_command()
    started = load()
    with tempfile.TemporaryDirectory(prefix="rwpost-cli-bench-") as tmp:
        trees = {"this tree": ROOT}
        if not args.no_baseline:
            trees["baseline"] = tree_at(args.baseline, Path(tmp))
        cases: dict[str, list[str]] = {"import typer": ["-c", "import typer"]}
        for name in commands:
            for side, tree in trees.items():
                if side == "baseline" and not _has_command(tree, name):
                    continue
                cases[f"{side}: rwpost {name} --help".replace("  ", " ")] = [
                    "-m",
                    "rwpost",
                    *name.split(),
                    "--help",
                ]
        runs: dict[str, dict[str, list[float]]] = {
            case: {"wall_s": [], "cpu_s": [], "load": []} for case in cases
        }
        for round_ in range(args.repeats):
            order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
            for case in order:
                tree = trees["baseline"] if case.startswith("baseline") else ROOT
                wall, cpu = timed(cases[case], tree)
                runs[case]["wall_s"].append(round(wall, 3))
                runs[case]["cpu_s"].append(round(cpu, 3))
                runs[case]["load"].append(load())
    floor = _stats(runs["import typer"]["wall_s"])
    table = {
        case: {
            "wall_s": _stats(r["wall_s"]),
            "cpu_s": _stats(r["cpu_s"]),
            "loads": r["load"],
            "x_typer_median": round(statistics.median(r["wall_s"]) / floor["median"], 2),
        }
        for case, r in runs.items()
    }
    for case, row in table.items():
        print(f"  {case:45s} wall {row['wall_s']}  cpu {row['cpu_s']}  {row['x_typer_median']}x typer")
    mine = {case: row for case, row in table.items() if case.startswith("this tree")}
    worst = max(mine, key=lambda case: mine[case]["x_typer_median"])
    top = table["this tree: rwpost --help"]["x_typer_median"]
    over = sum(row["x_typer_median"] > 3 for row in mine.values())
    text = (
        f"rwpost --help at {top}x `import typer` (median wall; floor {floor['median']} s); slowest "
        f"{worst.removeprefix('this tree: ')} at {mine[worst]['x_typer_median']}x; {over} of {len(mine)} "
        "helps over the target of <= 3x"
    )
    if "baseline" in trees:
        text += f"; {args.baseline}'s rwpost --help at {table['baseline: rwpost --help']['x_typer_median']}x"
    result = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "repeats": args.repeats,
        "baseline": None if args.no_baseline else args.baseline,
        "floor_import_typer": floor,
        "runs": table,
        "load": [started, load()],
    }
    result["goal"] = goal(text, started)
    save(args.out, result, args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
