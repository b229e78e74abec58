"""Main/challenging sets and dev/test splits (paper section III: 335 dev / 1,436 test, a 1 : 4.29 ratio).

Splitting is deterministic for a seed, stratified by label (and by category inside a label where counts
allow), and works on near-duplicate clusters: every member of a cluster lands in the same split, so a
model never sees the test claim's twin in dev.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rwpost.ids import stable_seed
from rwpost.labels import Label, subset_of
from rwpost.records import Sample

DEV_TEST_RATIO = 4.29
"""Test samples per dev sample (paper section III: 335 dev and 1,436 test samples)."""


def dev_fraction(ratio: float = DEV_TEST_RATIO) -> float:
    """Share of samples that go to dev for a 1 : ``ratio`` dev/test split."""
    return 1.0 / (1.0 + ratio)


@dataclass(frozen=True)
class Cluster:
    """Samples that must stay together (near-duplicates), with the stratum they are assigned by."""

    key: str
    members: tuple[Sample, ...]
    label: Label
    category: str

    @property
    def size(self) -> int:
        return len(self.members)


def build_clusters(samples: Iterable[Sample]) -> list[Cluster]:
    """Group samples by ``cluster_id`` (a sample without one is its own cluster).

    A cluster's stratum is its most common label (ties broken by label name) and its most common category.
    """
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        groups[sample.cluster_id or sample.id].append(sample)
    clusters = []
    for key, members in groups.items():
        labels = sorted((str(m.label) for m in members if m.label), key=lambda x: x)
        label = max(set(labels), key=lambda lab: (labels.count(lab), lab))
        cats = sorted(m.category or "unknown" for m in members)
        category = max(set(cats), key=lambda c: (cats.count(c), c))
        clusters.append(Cluster(key, tuple(sorted(members, key=lambda m: m.id)), Label(label), category))
    return clusters


def _quota(counts: dict[str, int], total: int) -> dict[str, int]:
    """Split ``total`` over keys in proportion to ``counts`` by largest remainder (ties by key)."""
    size = sum(counts.values())
    if size == 0:
        return {k: 0 for k in counts}
    exact = {k: total * c / size for k, c in counts.items()}
    quota = {k: int(v) for k, v in exact.items()}
    left = total - sum(quota.values())
    for key in sorted(exact, key=lambda k: (-(exact[k] - quota[k]), k))[:left]:
        quota[key] += 1
    return quota


def _split_stratum(
    clusters: list[Cluster], fraction: float, seed: int
) -> tuple[list[Cluster], list[Cluster]]:
    """Choose dev clusters of one label: per-category quotas first, then fill to the label's target."""
    target = round(sum(c.size for c in clusters) * fraction)
    ordered = sorted(clusters, key=lambda c: stable_seed(seed, c.key))  # a seeded, machine-stable order
    by_category: dict[str, list[Cluster]] = defaultdict(list)
    for cluster in ordered:
        by_category[cluster.category].append(cluster)
    quota = _quota({cat: sum(c.size for c in cs) for cat, cs in by_category.items()}, target)
    dev: list[Cluster] = []
    taken = 0
    for category in sorted(by_category):
        got = 0
        for cluster in by_category[category]:
            if got + cluster.size <= quota[category] and taken + cluster.size <= target:
                dev.append(cluster)
                got += cluster.size
                taken += cluster.size
    chosen = {c.key for c in dev}
    for cluster in ordered:  # fill what per-category quotas could not (cluster sizes, rounding)
        if cluster.key not in chosen and taken + cluster.size <= target:
            dev.append(cluster)
            chosen.add(cluster.key)
            taken += cluster.size
    test = [c for c in ordered if c.key not in chosen]
    return dev, test


def assign_splits(samples: Iterable[Sample], seed: int, ratio: float = DEV_TEST_RATIO) -> list[Sample]:
    """Samples with ``subset`` (main/challenging) and ``split`` (dev/test) set; excluded labels dropped.

    Samples without a label (excluded ratings) are not part of any set and are not returned: the
    caller keeps them in its rejects with their reason.
    """
    labelled = [s for s in samples if s.label is not None]
    strata: dict[Label, list[Cluster]] = defaultdict(list)
    for cluster in build_clusters(labelled):
        strata[cluster.label].append(cluster)
    out: list[Sample] = []
    fraction = dev_fraction(ratio)
    for label in sorted(strata, key=str):
        dev, test = _split_stratum(strata[label], fraction, seed)
        for split, clusters in (("dev", dev), ("test", test)):
            for cluster in clusters:
                for member in cluster.members:
                    member_label = member.label or label
                    out.append(member.model_copy(update={"split": split, "subset": subset_of(member_label)}))
    return sorted(out, key=lambda s: (s.subset or "", s.split or "", s.id))
