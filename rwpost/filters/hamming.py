"""Near neighbours among 64-bit hashes without comparing all pairs.

Two exact indexes over Hamming distance, one answer:

* :class:`BKTree`: a Burkhard-Keller tree (metric tree); simple, incremental, exact. Fine for a
  Snopes-sized corpus (about 13k images).
* :func:`pairs_within`: multi-index hashing (Norouzi et al., 2012) in NumPy. By the pigeonhole
  principle two hashes within distance ``r`` agree exactly on at least one of ``r + 1`` disjoint bit
  blocks, so only hashes sharing a block value are compared. Vectorised; the one to use at 100k+.

Both return the same pairs (a test holds them to it); ``benchmarks/neardup.py`` times them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

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


def _blocks(radius: int, bits: int = 64) -> list[tuple[int, int]]:
    """``radius + 1`` disjoint (shift, width) bit blocks covering ``bits``."""
    count = radius + 1
    widths = [bits // count + (1 if i < bits % count else 0) for i in range(count)]
    out, shift = [], 0
    for width in widths:
        out.append((shift, width))
        shift += width
    return out


def pairs_within(hashes: np.ndarray, radius: int, max_cells: int = 4_000_000) -> np.ndarray:
    """All index pairs ``(i, j)``, ``i < j``, with Hamming distance <= ``radius`` (multi-index hashing).

    ``hashes`` is a uint64 array. Returns an ``(n_pairs, 2)`` int64 array, sorted, without repeats.
    A big bucket is compared in slabs of at most ``max_cells`` distances to bound memory.
    """
    values = np.asarray(hashes, dtype=np.uint64)
    found: list[np.ndarray] = []
    for shift, width in _blocks(radius):
        keys = (values >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        ends = np.r_[starts[1:], len(order)]
        for start, end in zip(starts, ends, strict=True):
            if end - start < 2:
                continue
            members = order[start:end]
            member_values = values[members]
            step = max(1, max_cells // len(members))
            for slab in range(0, len(members), step):
                rows = members[slab : slab + step]
                distances = popcount64(member_values[slab : slab + step, None] ^ member_values[None, :])
                r, c = np.nonzero(distances <= radius)
                left, right = rows[r], members[c]
                keep = left < right
                if keep.any():
                    found.append(np.stack([left[keep], right[keep]], axis=1))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found).astype(np.int64), axis=0)


def pairs_between(
    queries: np.ndarray, base: np.ndarray, radius: int, max_cells: int = 4_000_000
) -> np.ndarray:
    """All ``(query index, base index)`` pairs within ``radius`` (multi-index hashing, two sets).

    Used to look extra hash variants of each image (e.g. with a caption bar cut off) up among the
    whole-image hashes without indexing the variants against each other.
    """
    q = np.asarray(queries, dtype=np.uint64)
    b = np.asarray(base, dtype=np.uint64)
    found: list[np.ndarray] = []
    for shift, width in _blocks(radius):
        mask = np.uint64((1 << width) - 1)
        q_keys = (q >> np.uint64(shift)) & mask
        b_keys = (b >> np.uint64(shift)) & mask
        q_order, b_order = np.argsort(q_keys, kind="stable"), np.argsort(b_keys, kind="stable")
        q_sorted, b_sorted = q_keys[q_order], b_keys[b_order]
        for key in np.intersect1d(q_sorted, b_sorted):
            q_members = q_order[np.searchsorted(q_sorted, key) : np.searchsorted(q_sorted, key, side="right")]
            b_members = b_order[np.searchsorted(b_sorted, key) : np.searchsorted(b_sorted, key, side="right")]
            step = max(1, max_cells // len(b_members))
            for slab in range(0, len(q_members), step):
                rows = q_members[slab : slab + step]
                distances = popcount64(q[rows][:, None] ^ b[b_members][None, :])
                r, c = np.nonzero(distances <= radius)
                if len(r):
                    found.append(np.stack([rows[r], b_members[c]], axis=1))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found).astype(np.int64), axis=0)
