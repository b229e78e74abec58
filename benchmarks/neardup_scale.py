"""Near-duplicate search at 100k and 1M hashes: the index against a blocked all-pairs scan at C speed.

The baseline is the all-pairs scan done as well as NumPy does it: tiles of ``TILE_ROWS`` x ``TILE_COLS``
(in L2), XOR into a reused buffer, ``np.bitwise_count`` into a reused buffer, ``<=``, and ``nonzero`` only
for tiles with a hit; upper triangle only. At up to ``--full-below`` hashes it runs in full; above, on
``--bands`` row bands spread evenly over the triangle, and its time is the measured time per cell times
the triangle's cells (the scan is linear in cells by construction; the sampled rows' pairs are checked
against the index's pairs of those rows). The index is :func:`rwpost.filters.hamming.pairs_within`; its
peak memory is measured with ``tracemalloc`` (NumPy reports its buffers there), and the 7a62fe2 index
(levels, then a scan of every overflowing hash against all) is timed beside it up to ``--old-below``.
CPU seconds (``time.process_time``); min and median of ``--repeats``, interleaved. Goal (issue 40):
scan / index >= 20x at 1M and at 100k hashes, radius 10, identical pairs.

    python -m benchmarks.neardup_scale [--sizes 100000 1000000] [--repeats 3] [--smoke]

Writes ``benchmarks/results/neardup_scale.json``.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import types
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.neardup import synthetic_hashes
from rwpost.filters.hamming import pairs_within

ROOT = Path(__file__).resolve().parents[1]
TILE_ROWS, TILE_COLS = 64, 4096
"""The scan's tile: 64 x 4096 uint64 = 2 MiB of XOR (L2-sized), the fastest measured here."""
OLD = "7a62fe2"


def tiled_scan(values: np.ndarray, radius: int, bands: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Pairs ``(i, j)``, ``i < j``, within ``radius`` whose ``i`` lies in the row bands ``bands`` (all when
    None), by XOR and popcount over every cell of those rows; and how many cells were compared."""
    n = len(values)
    xor = np.empty((TILE_ROWS, TILE_COLS), dtype=np.uint64)
    count = np.empty((TILE_ROWS, TILE_COLS), dtype=np.uint8)
    found, cells = [], 0
    starts = np.arange(0, n, TILE_ROWS) if bands is None else bands * TILE_ROWS
    for row in starts.tolist():
        rows = values[row : row + TILE_ROWS, None]
        for col in range(row, n, TILE_COLS):
            cols = values[None, col : col + TILE_COLS]
            x, c = xor[: len(rows), : cols.shape[1]], count[: len(rows), : cols.shape[1]]
            np.bitwise_xor(rows, cols, out=x)
            np.bitwise_count(x, out=c)
            cells += c.size
            hit = c <= radius
            if hit.any():
                i, j = np.nonzero(hit)
                i, j = i + row, j + col
                keep = i < j
                found.append(np.stack([i[keep], j[keep]], axis=1))
    pairs = np.concatenate(found).astype(np.int64) if found else np.zeros((0, 2), dtype=np.int64)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))], cells


def old_index() -> types.ModuleType | None:
    """``rwpost/filters/hamming.py`` of 7a62fe2 as a module (None outside a git checkout)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{OLD}:rwpost/filters/hamming.py"],
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("old_hamming")
    exec(compile(source, f"{OLD}:rwpost/filters/hamming.py", "exec"), module.__dict__)  # noqa: S102
    return module


def cpu(call: Any) -> tuple[float, Any]:
    began = time.process_time()
    result = call()
    return time.process_time() - began, result


def size_row(
    n: int, radius: int, repeats: int, full_below: int, bands: int, old_below: int
) -> dict[str, Any]:
    values = synthetic_hashes(n, seed=1)
    total_cells = n * (n - 1) // 2
    all_bands = (n + TILE_ROWS - 1) // TILE_ROWS
    sampled = None if n < full_below else np.unique(np.linspace(0, all_bands - 1, bands).astype(np.int64))
    old = old_index() if n < old_below else None
    before = load()
    scan_s, index_s, old_s, identical = [], [], [], True
    pairs = np.zeros((0, 2), dtype=np.int64)
    for round_ in range(repeats):
        steps = ["scan", "index", "old"] if round_ % 2 == 0 else ["old", "index", "scan"]
        for step in steps:
            if step == "index":
                seconds, pairs = cpu(lambda: pairs_within(values, radius))
                index_s.append(seconds)
            elif step == "scan":
                seconds, (reference, cells) = cpu(lambda: tiled_scan(values, radius, sampled))
                scan_s.append(seconds * total_cells / cells)
            elif old is not None:
                seconds, _ = cpu(lambda: old.pairs_within(values, radius))
                old_s.append(seconds)
        mine = pairs if sampled is None else pairs[np.isin(pairs[:, 0] // TILE_ROWS, sampled)]
        identical &= bool(np.array_equal(mine, reference))
    tracemalloc.start()
    pairs_within(values, radius)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    row: dict[str, Any] = {
        "hashes": n,
        "radius": radius,
        "pairs": int(len(pairs)),
        "identical_pairs": identical,
        "scan": "full" if sampled is None else f"{len(sampled)} of {all_bands} row bands, cells extrapolated",
        "scan_cpu_s": [round(x, 2) for x in scan_s],
        "index_cpu_s": [round(x, 3) for x in index_s],
        "old_index_cpu_s": [round(x, 3) for x in old_s],
        "scan_over_index_min": round(min(scan_s) / min(index_s), 1),
        "scan_over_index_median": round(statistics.median(scan_s) / statistics.median(index_s), 1),
        "index_peak_bytes": peak,
        "hashes_bytes": values.nbytes,
        "load": [before, load()],
    }
    if old_s:
        row["old_over_index_median"] = round(statistics.median(old_s) / statistics.median(index_s), 2)
    print(
        f"{n:>9,} hashes: scan {statistics.median(scan_s):.1f} CPU-s ({row['scan']}), index "
        f"{statistics.median(index_s):.2f} CPU-s, {row['scan_over_index_median']}x; old index "
        f"{statistics.median(old_s) if old_s else float('nan'):.2f}; peak {peak / 2**20:.0f} MiB; "
        f"{row['pairs']:,} pairs, identical {identical}; load {row['load']}",
        flush=True,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--radius", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full-below", type=int, default=200_000, help="scan every row below this size")
    parser.add_argument("--bands", type=int, default=200, help="row bands the scan samples above it")
    parser.add_argument("--old-below", type=int, default=200_000, help="time the 7a62fe2 index below this")
    parser.add_argument("--out", type=Path, default=RESULTS / "neardup_scale.json")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats, args.full_below, args.bands = [5_000, 20_000], 1, 10_000, 20
    started = load()
    rows = [
        size_row(n, args.radius, args.repeats, args.full_below, args.bands, args.old_below)
        for n in args.sizes
    ]
    result = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "tile": [TILE_ROWS, TILE_COLS],
        "sizes": rows,
        "load": [started, load()],
    }
    text = "; ".join(
        f"{r['hashes']:,} hashes: scan / index {r['scan_over_index_median']}x median "
        f"({r['scan_over_index_min']}x min), index peak {r['index_peak_bytes'] / 2**20:.0f} MiB, "
        f"identical {r['identical_pairs']}"
        for r in rows
    )
    result["goal"] = goal(f"{text} (target >= 20x, radius {args.radius})", started)
    save(args.out, result, args.smoke)
    return 0 if all(r["identical_pairs"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
