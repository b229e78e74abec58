"""Near-duplicate clusters of post images and claims, so a cluster never straddles a split.

Measure (per record, cached): pHash and dHash (imagehash, 64 bits each) of the post image decoded to
RGB, and of its caption crops (:data:`CAPTION_CROPS`). Decide (over the corpus): two records are linked
when their images are within ``dhash_radius`` dHash bits (the searched index) *and* ``phash_radius``
pHash bits, whole image against whole image or a caption crop of one against the whole of the other;
screenshot-like images (mostly one flat colour, :func:`flat_share`) link only at ``flat_*_radius``,
because distinct screenshots hash alike; or when their normalised claims are near-identical
(MinHash over word 3-grams, LSH banding, then the exact Jaccard >= ``text_jaccard``). Clusters are the
connected components; the image search is multi-index hashing (:mod:`rwpost.filters.hamming`; under
2,048 hashes a plain all-pairs scan, which is faster there and finds the same pairs). Every record gets a
``cluster_id`` (``cl-`` + the smallest member id, so ids are stable across runs); by default nothing is
dropped (``drop_duplicates: false``) and the split stage keeps each cluster on one side.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import NonNegativeInt

from rwpost.errors import ConfigError
from rwpost.filters.base import (
    KEEP,
    FilterContext,
    FilterDecision,
    Share,
    Thresholds,
    content_key,
    image_inputs,
)
from rwpost.images import ImageRefused
from rwpost.records import Candidate

if TYPE_CHECKING:  # numpy, Pillow, imagehash and scipy are imported where used: start-up time
    import numpy as np
    from PIL import Image

_WORD = re.compile(r"[a-z0-9]+")
_PRIME = (1 << 31) - 1
_PERMUTATIONS = 64
_BANDS = 16


@functools.cache
def _coefficients() -> tuple[np.ndarray, np.ndarray]:
    """The MinHash permutations' (a, b), from a fixed seed: signatures must be identical across runs."""
    import numpy as np

    rng = np.random.default_rng(20240607)
    a = rng.integers(1, _PRIME, size=_PERMUTATIONS, dtype=np.uint64)
    return a, rng.integers(0, _PRIME, size=_PERMUTATIONS, dtype=np.uint64)


HASH_SIDE = 512
"""Images are shrunk to fit HASH_SIDE x HASH_SIDE before hashing: the same hashes, several times faster."""

CAPTION_CROPS: dict[str, tuple[str, float]] = {
    "top85": ("top", 0.85),
    "top70": ("top", 0.70),
    "bottom85": ("bottom", 0.85),
    "bottom70": ("bottom", 0.70),
}
"""Extra hashes of each image with a band cut off below (top*) or above (bottom*): a repost that added a
caption bar of 10-35% of its height matches its original through one of them."""


def image_hashes(path: str) -> dict[str, Any]:
    """pHash and dHash (hex) of an image decoded to RGB, and of its caption crops; raises ImageRefused."""
    import imagehash
    from PIL import Image

    from rwpost.filters.images import open_rgb

    image = open_rgb(path)
    image.thumbnail((HASH_SIDE, HASH_SIDE), Image.Resampling.BILINEAR)  # hashes look at 32x32 anyway
    out: dict[str, Any] = {
        "phash": str(imagehash.phash(image)),
        "dhash": str(imagehash.dhash(image)),
        "crops": {},
    }
    for name, (side, share) in CAPTION_CROPS.items():
        keep = max(1, round(image.height * share))
        box = (
            (0, 0, image.width, keep)
            if side == "top"
            else (0, image.height - keep, image.width, image.height)
        )
        part = image.crop(box)
        out["crops"][name] = [str(imagehash.phash(part)), str(imagehash.dhash(part))]
    out["flat_share"] = flat_share(image)
    return out


def flat_share(image: Image.Image) -> float:
    """Share of a 64x64 grey thumbnail within 8 levels of its commonest grey: near 1 for screenshots of
    posts and documents, whose perceptual hashes say little (distinct ones often differ by 2-4 bits)."""
    import numpy as np

    grey = np.asarray(image.convert("L").resize((64, 64)), dtype=np.int16)
    mode = int(np.bincount(grey.ravel(), minlength=256).argmax())
    return round(float((np.abs(grey - mode) <= 8).mean()), 4)


def normalise_claim(text: str | None) -> str:
    """Lower case, NFKC, accents and punctuation removed, spaces collapsed."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text or "").lower())
    return " ".join(_WORD.findall("".join(c for c in folded if not unicodedata.combining(c))))


def shingles(normalised: str, n: int = 3) -> set[str]:
    """Word n-grams of a normalised text (the whole text when shorter)."""
    words = normalised.split()
    if len(words) <= n:
        return {normalised} if normalised else set()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def minhash(shingle_set: set[str]) -> np.ndarray:
    """A 64-value MinHash signature of a shingle set."""
    import numpy as np

    _A, _B = _coefficients()
    if not shingle_set:
        return np.full(_PERMUTATIONS, _PRIME, dtype=np.uint64)
    x = np.array(
        [
            int.from_bytes(hashlib.blake2b(s.encode(), digest_size=4).digest(), "big") & _PRIME
            for s in shingle_set
        ],
        dtype=np.uint64,
    )
    return ((x[:, None] * _A[None, :] + _B[None, :]) % np.uint64(_PRIME)).min(axis=0)


def text_pairs(claims: list[str], threshold: float) -> list[tuple[int, int]]:
    """Index pairs of claims with word-3-gram Jaccard >= threshold (MinHash LSH, then exact check)."""
    sets = [shingles(c) for c in claims]
    rows = _PERMUTATIONS // _BANDS
    buckets: dict[tuple[int, bytes], list[int]] = {}
    for i, s in enumerate(sets):
        if not s:
            continue
        signature = minhash(s)
        for band in range(_BANDS):
            key = (band, signature[band * rows : (band + 1) * rows].tobytes())
            buckets.setdefault(key, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for members in buckets.values():
        for a_pos, a in enumerate(members):
            for b in members[a_pos + 1 :]:
                if (a, b) in pairs:
                    continue
                union = len(sets[a] | sets[b])
                if union and len(sets[a] & sets[b]) / union >= threshold:
                    pairs.add((a, b))
    return sorted(pairs)


def image_pairs(
    phashes: list[int], dhashes: list[int], phash_radius: int, dhash_radius: int, index: str
) -> list[tuple[int, int]]:
    """Index pairs whose dHash and pHash are both within their radius (searched on dHash, the more
    stable of the two under crops and caption bars in ``benchmarks/neardup.py``; pHash confirms)."""
    import numpy as np

    from rwpost.filters.hamming import BKTree, pairs_within

    if index == "bktree":
        tree = BKTree()
        candidates: list[tuple[int, int]] = []
        for i, value in enumerate(dhashes):
            candidates.extend((int(j), i) for _d, j in tree.query(value, dhash_radius))  # type: ignore[arg-type]
            tree.add(value, i)
    elif index == "mih":
        array = np.array(dhashes, dtype=np.uint64)
        candidates = [(int(a), int(b)) for a, b in pairs_within(array, dhash_radius)]
    else:
        raise ConfigError(
            f"filter.neardup.index: unknown near-duplicate index {index!r}: expected 'mih' or 'bktree'"
        )
    return sorted(
        (min(a, b), max(a, b)) for a, b in candidates if (phashes[a] ^ phashes[b]).bit_count() <= phash_radius
    )


def crop_pairs(
    measurements: Mapping[str, Mapping[str, Any]],
    ids: list[str],
    with_image: list[int],
    phashes: list[int],
    dhashes: list[int],
    phash_radius: int,
    dhash_radius: int,
) -> list[tuple[int, int]]:
    """Record pairs where a caption crop of one image is near the whole of another (no crop-crop pairs)."""
    import numpy as np

    from rwpost.filters.hamming import pairs_between

    owners: list[int] = []
    crop_ph: list[int] = []
    crop_dh: list[int] = []
    for position, record in enumerate(with_image):
        for phash, dhash in (measurements[ids[record]].get("crops") or {}).values():
            owners.append(position)
            crop_ph.append(int(phash, 16))
            crop_dh.append(int(dhash, 16))
    if not owners:
        return []
    found = pairs_between(
        np.array(crop_dh, dtype=np.uint64), np.array(dhashes, dtype=np.uint64), dhash_radius
    )
    out = set()
    for q, b in found.tolist():
        a = owners[q]
        if a != b and (crop_ph[q] ^ phashes[b]).bit_count() <= phash_radius:
            out.add((min(with_image[a], with_image[b]), max(with_image[a], with_image[b])))
    return sorted(out)


def components(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """The connected-component label of each of ``n`` nodes linked by ``edges`` (scipy's csgraph)."""
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    pairs = np.array(edges, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


class NearDuplicateFilter:
    """Cluster near-duplicate images and claims; record the cluster id (drop extras only if asked)."""

    name: ClassVar[str] = "neardup"
    version = f"4+imagehash-{metadata.version('imagehash')}"

    class Params(Thresholds):
        """Radii chosen on the transformed-copy benchmark (``benchmarks/neardup.py``); ``filter.neardup``."""

        phash_radius: NonNegativeInt = 16
        dhash_radius: NonNegativeInt = 10
        text_jaccard: Share = 0.8
        index: Literal["mih", "bktree"] = "mih"
        caption_crops: bool = True
        flat_share: Share = 0.8
        flat_phash_radius: NonNegativeInt = 2
        flat_dhash_radius: NonNegativeInt = 2
        drop_duplicates: bool = False

    @classmethod
    def from_context(cls, context: FilterContext) -> Self:
        return cls()

    def input_key(self, candidate: Candidate) -> str:
        return content_key({"claim": candidate.claim, **image_inputs(candidate)})

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        out: dict[str, Any] = {"claim_norm": normalise_claim(candidate.claim)}
        if candidate.image_path:
            try:
                out.update(image_hashes(candidate.image_path))
            except (ImageRefused, OSError) as exc:
                out["error"] = str(exc)
        return out

    def decide_all(
        self, measurements: Mapping[str, Mapping[str, Any]], p: Params
    ) -> dict[str, FilterDecision]:
        ids = list(measurements)
        edges: list[tuple[int, int]] = []
        how: dict[int, set[str]] = {i: set() for i in range(len(ids))}
        with_image = [i for i, rid in enumerate(ids) if "phash" in measurements[rid]]
        ph = [int(measurements[ids[i]]["phash"], 16) for i in with_image]
        dh = [int(measurements[ids[i]]["dhash"], 16) for i in with_image]
        flat = {i for i in with_image if measurements[ids[i]].get("flat_share", 0.0) >= p.flat_share}
        for a, b in image_pairs(ph, dh, p.phash_radius, p.dhash_radius, p.index):
            if (with_image[a] in flat or with_image[b] in flat) and (
                (ph[a] ^ ph[b]).bit_count() > p.flat_phash_radius
                or (dh[a] ^ dh[b]).bit_count() > p.flat_dhash_radius
            ):
                continue  # a screenshot-like image: only an (almost) identical copy links
            edges.append((with_image[a], with_image[b]))
            how[with_image[a]].add("image")
            how[with_image[b]].add("image")
        if p.caption_crops and with_image:
            for a, b in crop_pairs(measurements, ids, with_image, ph, dh, p.phash_radius, p.dhash_radius):
                if a in flat or b in flat:
                    continue  # caption crops of screenshot-like images are not evidence
                edges.append((a, b))
                how[a].add("image")
                how[b].add("image")
        for a, b in text_pairs([measurements[rid].get("claim_norm", "") for rid in ids], p.text_jaccard):
            edges.append((a, b))
            how[a].add("claim")
            how[b].add("claim")
        members: dict[int, list[int]] = {}
        for i, component in enumerate(components(len(ids), edges)):
            members.setdefault(int(component), []).append(i)
        decisions: dict[str, FilterDecision] = {}
        for group in members.values():
            names = sorted(ids[i] for i in group)
            cluster_id, representative = f"cl-{names[0]}", names[0]
            for i in group:
                rid = ids[i]
                details = {
                    "cluster_id": cluster_id,
                    "cluster_size": len(group),
                    "representative": representative,
                    "linked_by": sorted(how[i]),
                    "phash": measurements[rid].get("phash"),
                    "dhash": measurements[rid].get("dhash"),
                    "flat_share": measurements[rid].get("flat_share"),
                }
                duplicate = len(group) > 1 and rid != representative
                if duplicate and p.drop_duplicates:
                    decisions[rid] = FilterDecision(
                        keep=False, reason="near_duplicate", score=len(group), details=details
                    )
                else:
                    decisions[rid] = FilterDecision(keep=True, reason=KEEP, score=len(group), details=details)
        return {rid: decisions[rid] for rid in ids}
