"""Splits: 1 : 4.29 per label, stratified, deterministic, clusters never split; versions verify and diff."""

from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from rwpost.ids import record_id
from rwpost.labels import Label
from rwpost.publish import BuildInfo, diff_versions, verify_version, write_version
from rwpost.records import Provenance, Sample
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits, dev_fraction

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"
CATEGORIES = ["Fauxtography", "Politics", "Entertainment", "Junk News", "Viral Phenomena"]


def _sample(i: int, label: Label, category: str, cluster: str | None = None) -> Sample:
    return Sample(
        id=record_id(f"https://www.snopes.com/fact-check/s{i}/"),
        claim=f"claim {i}",
        news_url=f"https://www.snopes.com/fact-check/s{i}/",
        label=label,
        label_original=str(label).upper(),
        category=category,
        claim_time=date(2020, 1, 1),
        cluster_id=cluster,
        provenance=Provenance(backend="offline"),
    )


@pytest.fixture
def population() -> list[Sample]:
    sizes = {Label.FALSE: 400, Label.TRUE: 130, Label.UNPROVEN: 37, Label.MIXTURE: 90, Label.OUTDATED: 11}
    out, i = [], 0
    for label, n in sizes.items():
        for k in range(n):
            out.append(_sample(i, label, CATEGORIES[k % len(CATEGORIES)]))
            i += 1
    return out


def test_dev_test_ratio_holds_within_one_sample_per_label(population):
    result = assign_splits(population, seed=1)
    for label in Label:
        members = [s for s in result if s.label is label]
        dev = sum(s.split == "dev" for s in members)
        assert abs(dev - len(members) * dev_fraction()) <= 1, label


def test_categories_are_stratified_inside_each_label(population):
    result = assign_splits(population, seed=1)
    false = [s for s in result if s.label is Label.FALSE]
    dev = Counter(s.category for s in false if s.split == "dev")
    for category, total in Counter(s.category for s in false).items():
        assert abs(dev[category] - total * dev_fraction()) <= 1, category


def test_subsets_follow_labels(population):
    result = assign_splits(population, seed=1)
    assert {s.subset for s in result if s.label in (Label.MIXTURE, Label.OUTDATED)} == {"challenging"}
    assert {s.subset for s in result if s.label in (Label.TRUE, Label.FALSE, Label.UNPROVEN)} == {"main"}


def test_same_seed_same_split_other_seed_differs(population):
    a = {s.id: s.split for s in assign_splits(population, seed=7)}
    b = {s.id: s.split for s in assign_splits(list(reversed(population)), seed=7)}
    c = {s.id: s.split for s in assign_splits(population, seed=8)}
    assert a == b
    assert a != c


def test_near_duplicate_cluster_never_spans_both_splits(population):
    for i, sample in enumerate(population[:120]):
        population[i] = sample.model_copy(update={"cluster_id": f"c{i // 6}"})
    result = assign_splits(population, seed=3)
    by_cluster: dict[str, set[str]] = {}
    for s in result:
        if s.cluster_id:
            by_cluster.setdefault(s.cluster_id, set()).add(s.split)
    assert by_cluster and all(len(splits) == 1 for splits in by_cluster.values())
    assert {"dev", "test"} <= {next(iter(v)) for v in by_cluster.values()}


def test_excluded_ratings_are_not_assigned():
    samples = read_released(RELEASED / "rwpost_dev_other_labels.jsonl")
    result = assign_splits(samples, seed=1)
    assert len(result) == 46 and all(s.label_original != "SATIRE" for s in result)


def _info(version: str) -> BuildInfo:
    return BuildInfo(version=version, source="test", extractor_backend="released")


def test_version_checksums_verify_and_tampering_is_caught(tmp_path, population):
    out = tmp_path / "v1"
    write_version(assign_splits(population, seed=1), out, _info("v1"))
    assert verify_version(out) == []
    with open(out / "main" / "dev.parquet", "ab") as handle:
        handle.write(b"x")
    assert verify_version(out) == ["main/dev.parquet: checksum mismatch"]


def test_an_emptied_or_damaged_checksum_file_and_an_added_split_never_pass(tmp_path, population):
    out = tmp_path / "v1"
    write_version(assign_splits(population, seed=1), out, _info("v1"))
    sums = out / "SHA256SUMS"
    original = sums.read_text(encoding="utf-8")
    sums.write_text("", encoding="utf-8")
    problems = verify_version(out)
    assert "SHA256SUMS lists no files" in problems
    assert "main/dev.parquet: not in SHA256SUMS" in problems  # every split file is then unlisted
    sums.write_text(original + "garbage line\nabc\n", encoding="utf-8")
    first_bad = len(original.splitlines()) + 1
    assert verify_version(out) == [
        f"SHA256SUMS line {first_bad}: not '<sha256>  <file>'",
        f"SHA256SUMS line {first_bad + 1}: not '<sha256>  <file>'",
    ]
    sums.write_text(original, encoding="utf-8")
    (out / "main" / "extra.parquet").write_bytes((out / "main" / "dev.parquet").read_bytes())
    assert verify_version(out) == ["main/extra.parquet: not in SHA256SUMS"]
    sums.write_bytes(b"\xff\xfe")
    assert verify_version(out)[0].startswith(f"{sums}: unreadable")


def test_diff_lists_added_removed_and_changed_ids(tmp_path, population):
    first = assign_splits(population[:300], seed=1)
    write_version(first, tmp_path / "v1", _info("v1"))
    second = [s.model_copy(update={"claim": "edited"}) if i == 0 else s for i, s in enumerate(first[1:])]
    second += assign_splits(population[300:301], seed=1)
    write_version(second, tmp_path / "v2", _info("v2"))
    result = diff_versions(tmp_path / "v1", tmp_path / "v2")
    assert result["removed"] == [first[0].id]
    assert result["added"] == [population[300].id]
    assert result["changed"] == {first[1].id: ["claim"]}
