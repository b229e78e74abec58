"""Near-duplicate clusters: exact Hamming indexes (BK-tree and multi-index hashing), images and claims."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data as skdata

from rwpost.errors import ConfigError
from rwpost.filters.hamming import BKTree, pairs_between, pairs_within, scan_pairs_within
from rwpost.filters.neardup import NearDuplicateFilter, components, normalise_claim, text_pairs
from rwpost.records import Candidate


def _brute_pairs(values: list[int], radius: int) -> set[tuple[int, int]]:
    return {
        (i, j)
        for i in range(len(values))
        for j in range(i + 1, len(values))
        if (values[i] ^ values[j]).bit_count() <= radius
    }


def _hashes_with_near_copies(n: int, seed: int) -> list[int]:
    """Random 64-bit hashes, every fifth one a copy of an earlier one with 0..12 bits flipped."""
    rng = np.random.default_rng(seed)
    values: list[int] = []
    for i in range(n):
        if i % 5 == 4:
            value = values[int(rng.integers(0, i))]
            for bit in rng.choice(64, size=int(rng.integers(0, 13)), replace=False):
                value ^= 1 << int(bit)
            values.append(value)
        else:
            values.append(int(rng.integers(0, 2**63, dtype=np.int64)) * 2 + int(rng.integers(0, 2)))
    return values


def test_bktree_finds_exactly_the_hashes_within_radius() -> None:
    values = _hashes_with_near_copies(400, seed=1)
    tree = BKTree((v, i) for i, v in enumerate(values))
    assert len(tree) == 400
    for radius in (0, 4, 10):
        found = {
            (min(i, j), max(i, j)) for i, v in enumerate(values) for _d, j in tree.query(v, radius) if j != i
        }
        assert found == _brute_pairs(values, radius)


@pytest.mark.parametrize("radius", [0, 3, 10, 14])
@pytest.mark.parametrize("scan_below", [0, 2048], ids=["index", "scan"])
def test_multi_index_hashing_agrees_with_brute_force(radius: int, scan_below: int) -> None:
    values = _hashes_with_near_copies(500, seed=radius)
    values += values[:10]  # exact repeats share every block
    pairs = {tuple(p) for p in pairs_within(np.array(values, dtype=np.uint64), radius, scan_below).tolist()}
    assert pairs == _brute_pairs(values, radius)


def test_multi_index_hashing_finds_the_planted_pairs_the_all_pairs_scan_finds() -> None:
    """20k random hashes with planted near copies, and a skewed corner: 300 hashes sharing one 16-bit
    block (more than a bucket's levels hold, so they take the full-scan path) with copies of their own."""
    rng = np.random.default_rng(29)
    values = np.array(_hashes_with_near_copies(20_000, seed=29), dtype=np.uint64)
    skewed = (
        rng.integers(0, 2**48, size=300, dtype=np.int64).astype(np.uint64) << np.uint64(16)
    ) | np.uint64(0xBEEF)
    skewed[1::3] = skewed[::3][: len(skewed[1::3])] ^ np.uint64(0b1011 << 20)  # 3 bits away from a sibling
    values = np.concatenate([values, skewed, values[:50] ^ np.uint64(1 << 63)])
    pairs = pairs_within(values, 10)
    assert np.array_equal(pairs, scan_pairs_within(values, 10))
    assert len(pairs) > 4_000 and {(20_000, 20_001), (20_003, 20_004)} <= {tuple(p) for p in pairs.tolist()}
    assert np.array_equal(pairs_within(values, 3), scan_pairs_within(values, 3))


@pytest.mark.parametrize("scan_below", [0, 2048], ids=["index", "scan"])
def test_multi_index_lookup_between_two_sets_agrees_with_brute_force(scan_below: int) -> None:
    base = _hashes_with_near_copies(300, seed=5)
    queries = [v ^ (1 << (i % 64)) ^ (1 << ((3 * i) % 64)) for i, v in enumerate(base[::3])] + [0, 2**64 - 1]
    found = {
        tuple(p)
        for p in pairs_between(
            np.array(queries, dtype=np.uint64), np.array(base, dtype=np.uint64), 8, scan_below
        ).tolist()
    }
    expected = {(i, j) for i, q in enumerate(queries) for j, b in enumerate(base) if (q ^ b).bit_count() <= 8}
    assert found == expected and len(found) >= 100


def _variants(tmp_path: Path, name: str, array: np.ndarray) -> list[Path]:
    """The photo, a half-size copy and a JPEG re-encode at quality 40."""
    image = Image.fromarray(array).convert("RGB")
    paths = [tmp_path / f"{name}.png", tmp_path / f"{name}-half.png", tmp_path / f"{name}-q40.jpg"]
    image.save(paths[0])
    image.resize((image.width // 2, image.height // 2)).save(paths[1])
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=40)
    paths[2].write_bytes(buffer.getvalue())
    return paths


@pytest.mark.parametrize("index", ["mih", "bktree"])
def test_transformed_copies_share_a_cluster_and_distinct_photos_do_not(tmp_path: Path, index: str) -> None:
    photos = {"astronaut": skdata.astronaut(), "coffee": skdata.coffee(), "chelsea": skdata.chelsea()}
    candidates = []
    for name, array in photos.items():
        for k, path in enumerate(_variants(tmp_path, name, array)):
            candidates.append(
                Candidate(id=f"rw-{name}-{k}", image_path=str(path), claim=f"A photo of {name} number {k}")
            )
    flt = NearDuplicateFilter()
    decisions = flt.decide_all({c.id: flt.measure(c) for c in candidates}, flt.Params(index=index))
    clusters = {rid: d.details["cluster_id"] for rid, d in decisions.items()}
    for name in photos:
        assert {clusters[f"rw-{name}-{k}"] for k in range(3)} == {f"cl-rw-{name}-0"}
    assert len(set(clusters.values())) == 3
    assert all(d.keep for d in decisions.values())  # recorded, not dropped, by default
    dropped = flt.decide_all({c.id: flt.measure(c) for c in candidates}, flt.Params(drop_duplicates=True))
    assert sorted(rid for rid, d in dropped.items() if d.keep) == [f"rw-{n}-0" for n in sorted(photos)]
    assert dropped["rw-coffee-2"].reason == "near_duplicate"


def test_near_identical_claims_cluster_without_images() -> None:
    claims = [
        "A photograph shows Pope Francis in a white puffer jacket.",
        "A photograph shows Pope Francis in a white puffer jacket!",
        "A PHOTOGRAPH shows Pope Francis in a white, puffer jacket",
        "A photograph shows a dog named Captain who slept next to his owner's grave.",
    ]
    assert normalise_claim(claims[2]) == normalise_claim(claims[0])
    assert text_pairs([normalise_claim(c) for c in claims], 0.8) == [(0, 1), (0, 2), (1, 2)]
    flt = NearDuplicateFilter()
    candidates = [Candidate(id=f"rw-{i}", claim=c) for i, c in enumerate(claims)]
    decisions = flt.decide_all({c.id: flt.measure(c) for c in candidates}, flt.Params())
    assert decisions["rw-2"].details["cluster_id"] == "cl-rw-0" and decisions["rw-2"].details[
        "linked_by"
    ] == ["claim"]
    assert decisions["rw-3"].details["cluster_id"] == "cl-rw-3"


def test_a_repost_with_a_caption_bar_joins_its_original(tmp_path: Path) -> None:
    original = Image.fromarray(skdata.rocket())
    bar = original.height // 5
    repost = Image.new("RGB", (original.width, original.height + bar), "white")
    repost.paste(original, (0, 0))
    paths = [tmp_path / "original.png", tmp_path / "repost.jpg", tmp_path / "other.png"]
    original.save(paths[0])
    repost.save(paths[1], quality=80)
    Image.fromarray(skdata.astronaut()).save(paths[2])
    flt = NearDuplicateFilter()
    measurements = {
        f"rw-{i}": flt.measure(Candidate(id=f"rw-{i}", image_path=str(p))) for i, p in enumerate(paths)
    }
    with_crops = flt.decide_all(measurements, NearDuplicateFilter.Params())
    assert with_crops["rw-1"].details["cluster_id"] == "cl-rw-0" != with_crops["rw-2"].details["cluster_id"]
    without = flt.decide_all(measurements, NearDuplicateFilter.Params(caption_crops=False))
    assert without["rw-1"].details["cluster_id"] == "cl-rw-1"


def _card(text: str, colour: tuple[int, int, int]) -> Image.Image:
    """A generated tweet-like screenshot: white card, avatar, one line of text."""
    from PIL import ImageDraw, ImageFont

    card = Image.new("RGB", (600, 300), "white")
    draw = ImageDraw.Draw(card)
    draw.ellipse((20, 20, 70, 70), fill=colour)
    font = ImageFont.load_default(size=30)
    for k, line in enumerate(text.split("|")):
        draw.text((20, 100 + 40 * k), line, fill="black", font=font)
    return card


def test_distinct_screenshots_do_not_merge_but_their_copies_do(tmp_path: Path) -> None:
    texts = [
        "The flood waters reached|the second floor today",
        "Share this before|it gets deleted!!!",
        "Gas prices are out of|control again",
        "A rare white moose|spotted near the highway",
    ]
    flt = NearDuplicateFilter()
    measurements = {}
    for i, text in enumerate(texts):
        card = _card(text, ((60 * i) % 255, 90, 150))
        card.save(tmp_path / f"c{i}.png")
        card.resize((300, 150)).save(tmp_path / f"c{i}-half.jpg", quality=85)
        for name in (f"c{i}.png", f"c{i}-half.jpg"):
            measurements[name] = flt.measure(Candidate(id=name, image_path=str(tmp_path / name)))
    assert all(m["flat_share"] >= 0.8 for m in measurements.values())
    decisions = flt.decide_all(measurements, NearDuplicateFilter.Params())
    clusters = {rid: d.details["cluster_id"] for rid, d in decisions.items()}
    assert len(set(clusters.values())) == len(texts)
    assert all(clusters[f"c{i}-half.jpg"] == clusters[f"c{i}.png"] for i in range(len(texts)))
    unguarded = flt.decide_all(
        measurements, flt.Params.model_construct(flat_share=1.01)
    )  # without the guard they collapse
    assert len({d.details["cluster_id"] for d in unguarded.values()}) < len(texts)


def test_components_link_transitively_and_leave_unlinked_records_alone():
    labels = components(6, [(0, 3), (3, 5), (5, 0), (1, 2)])
    groups = {}
    for node, label in enumerate(labels):
        groups.setdefault(int(label), []).append(node)
    assert sorted(groups.values()) == [[0, 3, 5], [1, 2], [4]]
    assert list(components(2, [])) == [0, 1] and len(components(0, [])) == 0


def test_an_unknown_index_is_a_config_error_naming_the_key() -> None:
    measurements = {"a": {"claim_norm": "", "phash": "0" * 16, "dhash": "0" * 16}}
    with pytest.raises(ConfigError, match=r"filter\.neardup\.index"):
        NearDuplicateFilter().decide_all(
            measurements, NearDuplicateFilter.Params.model_construct(index="faiss")
        )
