"""Near-duplicate search: recall on transformed copies of real photos, and time at 10k / 100k hashes.

1. **Recall**: originals are photos that ship inside scikit-image (16 whole photos + 8 quadrant crops
   of the large ones); each gets transformed copies (resize 50% and 75%, JPEG re-encode at q30 and
   q70, crop 5%, a caption bar added, and resize+JPEG+crop combined). A copy is found when it lands in
   its original's cluster. Reported at the default radii and over a grid, with the pHash / dHash
   distance of every copy and the closest pair of *distinct* originals (false merges).
2. **Time**: synthetic 64-bit hashes (uniform, every fifth a near copy of an earlier one) clustered
   end to end by :class:`NearDuplicateFilter` (multi-index hashing) at 10,000 and 100,000 records;
   the BK-tree in full at 10,000, and at 100,000 from a timed sample of queries (marked extrapolated).

    python -m benchmarks.neardup

Writes ``benchmarks/results/neardup.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from skimage import data as skdata

from rwpost.filters.hamming import BKTree, pairs_within
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.io import write_json
from rwpost.records import Candidate

DEFAULTS: dict[str, Any] = NearDuplicateFilter.Params().model_dump()
"""The filter's thresholds, as a dict the grid below varies."""

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PHOTOS = (
    "astronaut coffee chelsea rocket camera coins moon clock hubble_deep_field immunohistochemistry "
    "retina stereo_motorcycle grass brick gravel cell"
).split()
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


def originals() -> dict[str, Image.Image]:
    out: dict[str, Image.Image] = {}
    for name in PHOTOS:
        array = getattr(skdata, name)()
        array = array[0] if isinstance(array, tuple) else array
        out[name] = Image.fromarray(np.asarray(array)).convert("RGB")
    for name in ("retina", "hubble_deep_field"):
        image = out[name]
        w, h = image.width // 2, image.height // 2
        for qx, qy in ((0, 0), (1, 0), (0, 1), (1, 1)):
            out[f"{name}-q{qx}{qy}"] = image.crop((qx * w, qy * h, qx * w + w, qy * h + h))
    return out


def _jpeg(image: Image.Image, quality: int) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def _crop(image: Image.Image, share: float) -> Image.Image:
    dx, dy = int(image.width * share / 2), int(image.height * share / 2)
    return image.crop((dx, dy, image.width - dx, image.height - dy))


def _caption(image: Image.Image) -> Image.Image:
    bar = max(24, image.height // 8)
    canvas = Image.new("RGB", (image.width, image.height + bar), "white")
    canvas.paste(image, (0, 0))
    font = ImageFont.truetype(str(FONT), bar // 2) if FONT.exists() else ImageFont.load_default(size=bar // 2)
    ImageDraw.Draw(canvas).text(
        (bar // 4, image.height + bar // 4), "You won't believe this photo", fill="black", font=font
    )
    return canvas


TRANSFORMS = {
    "resize_50": lambda im: im.resize((im.width // 2, im.height // 2)),
    "resize_75": lambda im: im.resize((im.width * 3 // 4, im.height * 3 // 4)),
    "jpeg_q30": lambda im: _jpeg(im, 30),
    "jpeg_q70": lambda im: _jpeg(im, 70),
    "crop_5pct": lambda im: _crop(im, 0.05),
    "caption_bar": _caption,
    "resize_jpeg_crop": lambda im: _crop(_jpeg(im.resize((im.width * 3 // 4, im.height * 3 // 4)), 60), 0.05),
}


def recall_section() -> dict[str, Any]:
    flt = NearDuplicateFilter()
    photos = originals()
    measurements: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name, image in photos.items():
            variants = {"original": image, **{t: fn(image) for t, fn in TRANSFORMS.items()}}
            for t, variant in variants.items():
                path = Path(tmp) / f"{name}-{t}.png"
                variant.save(path)
                rid = f"{name}|{t}"
                measurements[rid] = flt.measure(Candidate(id=rid, image_path=str(path)))
    hash_seconds = time.perf_counter() - started

    def dist(a: str, b: str, kind: str) -> int:
        return (int(measurements[a][kind], 16) ^ int(measurements[b][kind], 16)).bit_count()

    distances = {
        t: [
            {
                "photo": n,
                "phash": dist(f"{n}|original", f"{n}|{t}", "phash"),
                "dhash": dist(f"{n}|original", f"{n}|{t}", "dhash"),
            }
            for n in photos
        ]
        for t in TRANSFORMS
    }
    names = list(photos)
    distinct = sorted(
        (
            dist(f"{a}|original", f"{b}|original", "phash"),
            dist(f"{a}|original", f"{b}|original", "dhash"),
            a,
            b,
        )
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    )

    def evaluate(params: dict[str, Any]) -> dict[str, Any]:
        """Recall of copies and merges of distinct originals under one setting."""
        decisions = flt.decide_all(measurements, flt.Params(**params))
        cluster = {rid: d.details["cluster_id"] for rid, d in decisions.items()}
        per_transform = {
            t: sum(cluster[f"{n}|{t}"] == cluster[f"{n}|original"] for n in names) for t in TRANSFORMS
        }
        originals_clusters = [cluster[f"{n}|original"] for n in names]
        merged = len(originals_clusters) - len(set(originals_clusters))
        total = sum(per_transform.values())
        flat = [n for n in names if measurements[f"{n}|original"]["flat_share"] >= params["flat_share"]]
        solid = [n for n in names if n not in flat]
        found_solid = sum(cluster[f"{n}|{t}"] == cluster[f"{n}|original"] for n in solid for t in TRANSFORMS)
        return {
            "params": {k: params[k] for k in ("phash_radius", "dhash_radius", "caption_crops")},
            "recall": round(total / (len(names) * len(TRANSFORMS)), 4),
            "recall_by_transform": {t: f"{v}/{len(names)}" for t, v in per_transform.items()},
            "distinct_originals_merged": merged,
            "flat_originals": flat,
            "recall_not_flat": round(found_solid / (len(solid) * len(TRANSFORMS)), 4) if solid else None,
        }

    grid = [
        evaluate({**DEFAULTS, "phash_radius": p, "dhash_radius": d})
        for p, d in ((10, 6), (12, 8), (16, 10), (18, 12), (20, 14))
    ]
    return {
        "originals": len(names),
        "copies": len(names) * len(TRANSFORMS),
        "hash_seconds_per_image": round(hash_seconds / len(measurements), 4),
        "default": evaluate(dict(DEFAULTS)),
        "default_without_caption_crops": evaluate({**DEFAULTS, "caption_crops": False}),
        "grid": grid,
        "distance_by_transform": {
            t: {
                "phash_mean": round(float(np.mean([r["phash"] for r in rows])), 2),
                "phash_max": max(r["phash"] for r in rows),
                "dhash_mean": round(float(np.mean([r["dhash"] for r in rows])), 2),
                "dhash_max": max(r["dhash"] for r in rows),
            }
            for t, rows in distances.items()
        },
        "closest_distinct_originals": [
            {"phash": p, "dhash": d, "a": a, "b": b} for p, d, a, b in distinct[:5]
        ],
    }


TWEETS = [
    "Can you believe this happened in our town today?", "The flood waters reached the second floor.",
    "This is what the stadium looked like last night", "Never forget what they did to us in 1998",
    "BREAKING: the senator has resigned effective immediately", "My grandmother made this quilt in 1952",
    "Share this before it gets deleted!!!", "Look at the size of this egg compared to the bird",
    "Scientists found a new species of frog in Peru", "The president said this at the rally tonight",
    "Gas prices are out of control again", "Who else remembers this cereal from the 80s?",
    "Police are asking for help finding this car", "The new mural downtown is finally done",
    "A rare white moose spotted near the highway", "They are putting chips in the vaccines",
    "This bridge was built in only three days", "Our team won the championship after 40 years",
    "The sky turned green right before the storm", "Free meals for all school children this summer",
]  # fmt: skip


def screenshot_like(n: int = 40) -> list[Image.Image]:
    """Generated tweet-like cards (white background, avatar, name, text, counters): distinct images
    that look alike to a perceptual hash, the kind of post image Snopes shows most."""
    font_path = FONT if FONT.exists() else None
    cards = []
    for i in range(n):
        card = Image.new("RGB", (600, 300 + 20 * (i % 3)), "white")
        draw = ImageDraw.Draw(card)
        big = ImageFont.truetype(str(font_path), 22) if font_path else ImageFont.load_default(size=22)
        small = ImageFont.truetype(str(font_path), 16) if font_path else ImageFont.load_default(size=16)
        draw.ellipse((20, 20, 70, 70), fill=((37 * i) % 255, (91 * i) % 255, (53 * i) % 255))
        draw.text((85, 22), f"User {i} @user{i}", fill="black", font=small)
        text = TWEETS[i % len(TWEETS)] + ("" if i < len(TWEETS) else " (again)")
        words, lines, line = text.split(), [], ""
        for word in words:
            if len(line) + len(word) > 38:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        lines.append(line)
        for k, row in enumerate(lines):
            draw.text((20, 90 + 30 * k), row, fill="black", font=big)
        draw.text(
            (20, card.height - 40),
            f"{(i * 37) % 900 + 10} Retweets   {(i * 91) % 5000 + 100} Likes",
            fill="gray",
            font=small,
        )
        cards.append(card)
    return cards


def screenshots_section() -> dict[str, Any]:
    """False merges among distinct screenshot-like images at the default radii (and the grid's)."""
    flt = NearDuplicateFilter()
    measurements = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, card in enumerate(screenshot_like()):
            path = Path(tmp) / f"card{i:02d}.png"
            card.save(path)
            measurements[f"card{i:02d}"] = flt.measure(Candidate(id=f"card{i:02d}", image_path=str(path)))
    out = []
    for p, d in ((10, 6), (12, 8), (16, 10), (18, 12)):
        decisions = flt.decide_all(measurements, flt.Params(phash_radius=p, dhash_radius=d))
        sizes = sorted((dd.details["cluster_size"] for dd in decisions.values()), reverse=True)
        clusters = len({dd.details["cluster_id"] for dd in decisions.values()})
        out.append(
            {
                "phash_radius": p,
                "dhash_radius": d,
                "images": len(measurements),
                "clusters": clusters,
                "largest_cluster": sizes[0],
            }
        )
    return {
        "note": "generated tweet-like cards, all distinct: ideally every card is its own cluster",
        "by_radius": out,
    }


def synthetic_hashes(n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, np.iinfo(np.int64).max, size=n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    values ^= rng.integers(0, 2, size=n).astype(np.uint64)
    copies = np.arange(4, n, 5)
    sources = (rng.random(len(copies)) * copies).astype(np.int64)
    flips = rng.integers(0, 13, size=len(copies))
    for index, source, k in zip(copies, sources, flips, strict=True):
        value = int(values[source])
        for bit in rng.choice(64, size=int(k), replace=False):
            value ^= 1 << int(bit)
        values[index] = np.uint64(value)
    return values


def timing_section(sizes: list[int], bk_full_max: int, bk_sample: int) -> list[dict[str, Any]]:
    flt = NearDuplicateFilter()
    rows = []
    for n in sizes:
        ph = synthetic_hashes(n, seed=1)
        dh = synthetic_hashes(n, seed=1) ^ np.uint64(0)  # dHash tracks pHash in the synthetic set
        measurements = {
            f"r{i:06d}": {"claim_norm": "", "phash": f"{int(p):016x}", "dhash": f"{int(d):016x}"}
            for i, (p, d) in enumerate(zip(ph, dh, strict=True))
        }
        mih_seconds = float("inf")
        for _ in range(3):  # best of three: the machine is shared
            started = time.perf_counter()
            pairs = pairs_within(dh, DEFAULTS["dhash_radius"])
            mih_seconds = min(mih_seconds, time.perf_counter() - started)
        started = time.perf_counter()
        decisions = flt.decide_all(measurements, flt.Params())
        end_to_end = time.perf_counter() - started
        clusters = len({d.details["cluster_id"] for d in decisions.values()})
        row: dict[str, Any] = {
            "hashes": n,
            "dhash_radius": DEFAULTS["dhash_radius"],
            "pairs_found": int(len(pairs)),
            "mih_pairs_seconds_best_of_3": round(mih_seconds, 3),
            "decide_all_seconds": round(end_to_end, 3),
            "clusters": clusters,
        }
        values = [int(v) for v in dh]
        started = time.perf_counter()
        tree = BKTree((v, i) for i, v in enumerate(values))
        row["bktree_build_seconds"] = round(time.perf_counter() - started, 3)
        queries = values if n <= bk_full_max else values[:: max(1, n // bk_sample)][:bk_sample]
        started = time.perf_counter()
        found = sum(1 for v in queries for _ in tree.query(v, DEFAULTS["dhash_radius"]))
        elapsed = time.perf_counter() - started
        row["bktree_query_seconds"] = round(elapsed * n / len(queries), 2)
        row["bktree_queries_timed"] = len(queries)
        row["bktree_extrapolated"] = len(queries) < n
        row["bktree_hits_in_timed_queries"] = found
        rows.append(row)
        print(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--bk-full-max", type=int, default=10_000, help="largest size the BK-tree queries in full"
    )
    parser.add_argument("--bk-sample", type=int, default=500, help="queries timed above that size")
    parser.add_argument("--out", type=Path, default=RESULTS / "neardup.json")
    parser.add_argument("--sections", nargs="+", default=["recall", "screenshots", "timing"])
    args = parser.parse_args(argv or [])  # `python -m benchmarks` calls main() with no arguments
    report: dict[str, Any] = {}
    if args.out.exists() and set(args.sections) != {"recall", "screenshots", "timing"}:
        report = json.loads(args.out.read_text(encoding="utf-8"))  # update only the sections asked for
    report["machine"] = {
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
    }
    if "recall" in args.sections:
        report["recall"] = recall_section()
        print({k: report["recall"]["default"][k] for k in ("recall", "distinct_originals_merged")})
        print(report["recall"]["default"]["recall_by_transform"])
    if "screenshots" in args.sections:
        report["screenshots"] = screenshots_section()
        print(report["screenshots"])
    if "timing" in args.sections:
        report["timing"] = timing_section(args.sizes, args.bk_full_max, args.bk_sample)
    write_json(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
