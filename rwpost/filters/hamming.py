"""Near neighbours among 64-bit hashes without comparing all pairs.

Three exact answers to "which pairs are within Hamming distance ``r``?", one set of pairs:

* :func:`pairs_within` / :func:`pairs_between`: multi-index hashing (Norouzi et al., 2012) in NumPy.
  The 64 bits are cut into 4 blocks of 16; two hashes within ``r`` differ in at most ``r // 4`` bits
  of at least one block (pigeonhole), so each hash is compared only with the hashes whose block value
  lies within ``r // 4`` bits of its own (137 probes of a dense bucket table per block at ``r = 10``)
  and every candidate is verified on all 64 bits. A bucket's first 14 members sit in dense level
  tables; members past them (at 1M hashes a bucket holds 15 on average) probe the block's hashes sorted
  by block value, so a full bucket costs its real size, never a scan against all. The one to use at
  100k+ (``benchmarks/neardup_scale.py``: 1M hashes).
* :func:`scan_pairs_within`: the chunked all-pairs scan (XOR, popcount); the baseline the benchmark
  times and the answer for small inputs.
* :class:`BKTree`: a Burkhard-Keller tree (metric tree); simple, incremental, pure Python.

All return the same pairs (tests hold them to it); ``benchmarks/neardup.py`` times them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import combinations

import numpy as np


class BKTree:
    """A BK-tree of ``(hash, item)`` under Hamming distance on Python ints."""

    __slots__ = ("_root", "_size")

    def __init__(self, entries: Iterable[tuple[int, object]] = ()) -> None:
        self._root: list | None = None  # node = [hash, items, {distance: child}]
        self._size = 0
        for value, item in entries:
            self.add(value, item)

    def __len__(self) -> int:
        return self._size

    def add(self, value: int, item: object) -> None:
        """Insert one hash; equal hashes share a node."""
        self._size += 1
        if self._root is None:
            self._root = [value, [item], {}]
            return
        node = self._root
        while True:
            distance = (node[0] ^ value).bit_count()
            if distance == 0:
                node[1].append(item)
                return
            child = node[2].get(distance)
            if child is None:
                node[2][distance] = [value, [item], {}]
                return
            node = child

    def query(self, value: int, radius: int) -> Iterator[tuple[int, object]]:
        """Yield ``(distance, item)`` for every stored hash within ``radius`` of ``value``."""
        if self._root is None:
            return
        stack = [self._root]
        while stack:
            node = stack.pop()
            distance = (node[0] ^ value).bit_count()
            if distance <= radius:
                for item in node[1]:
                    yield distance, item
            low, high = distance - radius, distance + radius
            stack.extend(child for key, child in node[2].items() if low <= key <= high)


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def popcount64(values: np.ndarray) -> np.ndarray:
    """Bit counts of a uint64 array (NumPy 2's ``bitwise_count`` when there, else a byte table)."""
    values = np.asarray(values, dtype=np.uint64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(values)
    as_bytes = np.ascontiguousarray(values).view(np.uint8).reshape(*values.shape, 8)
    return _POPCOUNT8[as_bytes].sum(axis=-1, dtype=np.uint16)


_NO_PAIRS = np.zeros((0, 2), dtype=np.int64)
WIDTH = 16
"""Bits per block: 4 blocks of a 64-bit hash, each a dense table of 65,536 buckets."""
LEVELS = (2, 4, 8)
"""Slots per bucket of each level's table: a bucket's first 2 members go to level 0, the next 4 to
level 1, the next 8 to level 2; members past that (a full bucket: at 1M hashes a bucket holds 15 on
average, and a skewed block many more) probe the block's sorted rows instead (:class:`_Block`)."""
CHUNK_CELLS = 1 << 18
"""Candidate cells verified per NumPy call (2 MiB of uint64): big enough to amortise the call."""
CANDIDATES = 1 << 21
"""Candidates of the overflow probes verified per NumPy pass (16 MiB of uint64)."""
PROBES = 1 << 19
"""Bucket probes of the overflow per call (each a few int64 arrays of this length)."""
SCAN_CELLS = 1 << 20
"""Distances per chunk of the all-pairs scan (8 MiB of uint64: the fastest chunk measured here)."""


def _ball(radius: int) -> np.ndarray:
    """Every ``WIDTH``-bit mask with at most ``radius`` bits set (0 first)."""
    return np.array(
        [sum(1 << b for b in bits) for d in range(radius + 1) for bits in combinations(range(WIDTH), d)],
        dtype=np.intp,
    )


def _scan(queries: np.ndarray, base: np.ndarray, radius: int, triangle: bool) -> np.ndarray:
    """(query, base) index pairs within ``radius``, a chunk of queries (``SCAN_CELLS`` cells) at a time
    into reused buffers; ``triangle`` (queries is base) keeps ``i < j`` only and skips the lower half."""
    rows = max(1, min(len(queries), SCAN_CELLS // max(1, len(base))))
    xor = np.empty((rows, len(base)), dtype=np.uint64)
    near = np.empty((rows, len(base)), dtype=bool)
    found = []
    for start in range(0, len(queries), rows):
        chunk = queries[start : start + rows]
        offset = start + 1 if triangle else 0
        x, hit = xor[: len(chunk), : len(base) - offset], near[: len(chunk), : len(base) - offset]
        np.bitwise_xor(chunk[:, None], base[None, offset:], out=x)
        np.less_equal(popcount64(x), radius, out=hit)
        i, j = np.nonzero(hit)
        i, j = i + start, j + offset
        if triangle:
            keep = i < j
            i, j = i[keep], j[keep]
        found.append(np.stack([i, j], axis=1))
    return np.concatenate(found).astype(np.int64) if found else _NO_PAIRS


def scan_pairs_within(hashes: np.ndarray, radius: int) -> np.ndarray:
    """All index pairs ``(i, j)``, ``i < j``, within ``radius``, by comparing every pair (chunked)."""
    values = np.asarray(hashes, dtype=np.uint64)
    if radius < 0 or len(values) < 2:
        return _NO_PAIRS
    return _scan(values, values, radius, triangle=True)


class _Level:
    """One level of one block: per slot, a dense table over the 65,536 block values of the member
    hashes (an empty slot holds a hash whose block is the bucket's complement) and of their indices
    (-1 when empty). Slot-major, so each probe is a 1-D gather."""

    def __init__(self, ids: np.ndarray, keys: np.ndarray, slots: np.ndarray, values: np.ndarray, shift: int):
        width = int(slots.max()) + 1
        complement = (~np.arange(1 << WIDTH, dtype=np.uint64)) & np.uint64((1 << WIDTH) - 1)
        self.hashes = np.repeat((complement << np.uint64(shift))[None, :], width, axis=0)
        self.hashes[slots, keys] = values[ids]
        self.ids = np.full((width, 1 << WIDTH), -1, dtype=np.intp)
        self.ids[slots, keys] = ids
        self.members, self.keys = ids, keys  # sorted by key


def _block(values: np.ndarray, shift: int) -> tuple[list[_Level], np.ndarray]:
    """The levels of the block at ``shift`` and the indices left over (ranks past every level)."""
    keys = ((values >> np.uint64(shift)) & np.uint64((1 << WIDTH) - 1)).astype(np.intp)
    order = np.argsort(keys.astype(np.uint16), kind="stable")  # a radix sort
    sorted_keys = keys[order]
    starts = np.searchsorted(sorted_keys, sorted_keys, side="left")
    rank = np.arange(len(order)) - starts
    levels, low = [], 0
    for slots in LEVELS:
        inside = (rank >= low) & (rank < low + slots)
        if not inside.any():
            return levels, order[rank >= low]
        levels.append(_Level(order[inside], sorted_keys[inside], rank[inside] - low, values, shift))
        low += slots
    return levels, order[rank >= low]


def _probe(
    ids: np.ndarray, keys: np.ndarray, values: np.ndarray, level: _Level, masks: np.ndarray, radius: int
) -> list[np.ndarray]:
    """(id, table id) of every hash of ``ids`` within ``radius`` of a table member whose bucket is its
    own block XOR one of ``masks``."""
    if not len(ids) or not len(masks):
        return []
    mine = values[ids]
    step = max(1, CHUNK_CELLS // len(ids))
    found = []
    for start in range(0, len(masks), step):
        buckets = masks[start : start + step, None] ^ keys[None, :]
        for hashes, table_ids in zip(level.hashes, level.ids, strict=True):
            candidates = np.take(hashes, buckets)
            np.bitwise_xor(candidates, mine[None, :], out=candidates)
            cells = np.flatnonzero(popcount64(candidates) <= radius)
            if len(cells):
                other = np.take(table_ids, buckets.ravel()[cells])
                keep = other >= 0
                found.append(np.stack([ids[cells[keep] % len(ids)], other[keep]], axis=1))
    return found


def _self_probe(level: _Level, values: np.ndarray, masks: np.ndarray, radius: int) -> list[np.ndarray]:
    """Pairs within one level's table, each found once: mask 0 inside a bucket (keeping ``i < j``), any
    other mask from the bucket whose key has the mask's top bit clear only."""
    found = [
        p[p[:, 0] < p[:, 1]] for p in _probe(level.members, level.keys, values, level, masks[:1], radius)
    ]
    top = np.array([int(m).bit_length() - 1 for m in masks[1:]])
    for bit in range(WIDTH):
        chosen = masks[1:][top == bit]
        if len(chosen):
            low = (level.keys >> bit) & 1 == 0
            found += _probe(level.members[low], level.keys[low], values, level, chosen, radius)
    return found


class _Block:
    """One block of the index: the hashes sorted by the block's bits, with the offset of each bucket
    (compressed sparse rows: no bucket has a cap, a bucket of 100k equal blocks is 100k rows)."""

    def __init__(self, values: np.ndarray, shift: int, width: int) -> None:
        self.shift, self.width = shift, width
        self.keys = ((values >> np.uint64(shift)) & np.uint64((1 << width) - 1)).astype(np.intp)
        self.order = np.argsort(self.keys, kind="stable")
        self.sorted = values[self.order]
        counts = np.bincount(self.keys, minlength=1 << width)
        self.offsets = np.zeros((1 << width) + 1, dtype=np.intp)
        np.cumsum(counts, out=self.offsets[1:])


def _expand(
    block: _Block, values: np.ndarray, queries: np.ndarray, masks: np.ndarray, radius: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, member, xor) of every member within ``radius`` of a query in the buckets ``key ^ mask``
    (each query against each mask), verified ``CANDIDATES`` at a time."""
    buckets = (block.keys[queries][:, None] ^ masks[None, :]).ravel()
    lo = block.offsets[buckets]
    counts = block.offsets[buckets + 1] - lo
    nonempty = np.flatnonzero(counts)
    if not len(nonempty):
        return _NO_PAIRS[:, 0], _NO_PAIRS[:, 0], _NO_PAIRS[:, 0].astype(np.uint64)
    probe_query = queries[nonempty // len(masks)]
    lo, counts = lo[nonempty], counts[nonempty]
    ends = np.cumsum(counts)
    found_i, found_j, found_x = [], [], []
    first = 0
    while first < len(counts):  # probes in runs of about CANDIDATES candidates
        base = ends[first - 1] if first else 0
        last = max(first + 1, int(np.searchsorted(ends, base + CANDIDATES, side="right")))
        run_counts, run_ends = counts[first:last], ends[first:last] - base
        total = int(run_ends[-1])
        position = np.repeat(lo[first:last] - (run_ends - run_counts), run_counts)
        position += np.arange(total, dtype=np.intp)
        x = block.sorted[position]
        x ^= np.repeat(values[probe_query[first:last]], run_counts)
        near = np.flatnonzero(popcount64(x) <= radius)
        if len(near):
            probe = np.searchsorted(run_ends, near, side="right")
            found_i.append(probe_query[first:last][probe])
            found_j.append(block.order[position[near]])
            found_x.append(x[near])
        first = last
    if not found_i:
        return _NO_PAIRS[:, 0], _NO_PAIRS[:, 0], _NO_PAIRS[:, 0].astype(np.uint64)
    return np.concatenate(found_i), np.concatenate(found_j), np.concatenate(found_x)


def pairs_within(hashes: np.ndarray, radius: int, scan_below: int = 2048) -> np.ndarray:
    """All index pairs ``(i, j)``, ``i < j``, with Hamming distance <= ``radius`` (multi-index hashing).

    ``hashes`` is a uint64 array. Returns an ``(n_pairs, 2)`` int64 array, sorted, without repeats:
    the pairs :func:`scan_pairs_within` returns. Fewer than ``scan_below`` hashes, or a radius past 19
    (where the probes outnumber a scan), are scanned.
    """
    values = np.asarray(hashes, dtype=np.uint64)
    if radius < 0 or len(values) < 2:
        return _NO_PAIRS
    if len(values) < scan_below or radius >= 20:
        return scan_pairs_within(values, radius)
    masks = _ball(radius // 4)
    found: list[np.ndarray] = []
    for shift in range(0, 64, WIDTH):
        levels, rest = _block(values, shift)
        for j, level in enumerate(levels):
            for lower in levels[:j]:
                found += _probe(level.members, level.keys, values, lower, masks, radius)
            found += _self_probe(level, values, masks, radius)
        if len(rest):  # members past the levels: against every member of the near buckets
            rows, step = _Block(values, shift, WIDTH), max(1, PROBES // len(masks))
            for start in range(0, len(rest), step):
                i, j, _x = _expand(rows, values, rest[start : start + step], masks, radius)
                keep = i != j
                found.append(np.stack([i[keep], j[keep]], axis=1))
    if not found:
        return _NO_PAIRS
    pairs = np.concatenate(found).astype(np.int64)
    codes = np.unique(
        np.minimum(pairs[:, 0], pairs[:, 1]) * len(values) + np.maximum(pairs[:, 0], pairs[:, 1])
    )
    return np.stack(np.divmod(codes, len(values)), axis=1)


def pairs_between(queries: np.ndarray, base: np.ndarray, radius: int, scan_below: int = 2048) -> np.ndarray:
    """All ``(query index, base index)`` pairs within ``radius``, sorted.

    Used to look extra hash variants of each image (e.g. with a caption bar cut off) up among the
    whole-image hashes; the pairs of the two sets joined (:func:`pairs_within`) that cross between them.
    """
    q = np.asarray(queries, dtype=np.uint64)
    b = np.asarray(base, dtype=np.uint64)
    pairs = pairs_within(np.concatenate([b, q]), radius, scan_below)
    cross = pairs[(pairs[:, 0] < len(b)) & (pairs[:, 1] >= len(b))]
    out = np.stack([cross[:, 1] - len(b), cross[:, 0]], axis=1)
    return out[np.lexsort((out[:, 1], out[:, 0]))]
