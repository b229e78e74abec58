"""Near-duplicate search: recall on transformed copies of real photos, and time at 10k / 100k hashes.

1. **Recall**: originals are photos that ship inside scikit-image (16 whole photos + 8 quadrant crops
   of the large ones); each gets transformed copies (resize 50% and 75%, JPEG re-encode at q30 and
   q70, crop 5%, a caption bar added, and resize+JPEG+crop combined). A copy is found when it lands in
   its original's cluster. Reported at the default radii and over a grid, with the pHash / dHash
   distance of every copy and the closest pair of *distinct* originals (false merges).
2. **Time**: synthetic 64-bit hashes (uniform, every fifth a near copy of an earlier one) at 10,000
   and 100,000: the chunked all-pairs scan (``scan_pairs_within``, XOR and popcount over every pair:
   the baseline) against multi-index hashing (``pairs_within``), interleaved in the same run, best and
   median of ``--repeats``; both must return identical pairs (exit 1 otherwise). Then the whole filter
   (:class:`NearDuplicateFilter`, ``decide_all``) once. Goal (issue 29): the scan takes >= 20x as long
   at 100,000 hashes, radius 10.

    python -m benchmarks.neardup [--sizes 10000 100000] [--repeats 3] [--smoke]

Writes ``benchmarks/results/neardup.json``.
"""

from __future__ import annotations

import io
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from skimage import data as skdata

from benchmarks import RESULTS, arguments, goal, load, save
from rwpost.filters.hamming import pairs_within, scan_pairs_within
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.records import Candidate

DEFAULTS: dict[str, Any] = NearDuplicateFilter.Params().model_dump()
"""The filter's thresholds, as a dict the grid below varies."""

PHOTOS = (
    "astronaut coffee chelsea rocket camera coins moon clock hubble_deep_field immunohistochemistry "
    "retina stereo_motorcycle grass brick gravel cell"
).split()
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


def originals(photos: list[str] = PHOTOS) -> dict[str, Image.Image]:
    out: dict[str, Image.Image] = {}
    for name in photos:
        array = getattr(skdata, name)()
        array = array[0] if isinstance(array, tuple) else array
        out[name] = Image.fromarray(np.asarray(array)).convert("RGB")
    for name in ("retina", "hubble_deep_field"):
        if name not in out:
            continue
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


def recall_section(photos: list[str] = PHOTOS) -> dict[str, Any]:
    flt = NearDuplicateFilter()
    photos = originals(photos)
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


def screenshots_section(cards: int = 40) -> dict[str, Any]:
    """False merges among distinct screenshot-like images at the default radii (and the grid's)."""
    flt = NearDuplicateFilter()
    measurements = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, card in enumerate(screenshot_like(cards)):
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


def timing_section(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    """All-pairs scan against multi-index hashing on the same hashes, interleaved; then the filter."""
    flt = NearDuplicateFilter()
    radius = DEFAULTS["dhash_radius"]
    rows = []
    for n in sizes:
        hashes = synthetic_hashes(n, seed=1)
        before = load()
        scan_s, index_s, identical = [], [], True
        for _ in range(repeats):  # interleaved: both see the same machine (it is shared)
            started = time.perf_counter()
            reference = scan_pairs_within(hashes, radius)
            scan_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            pairs = pairs_within(hashes, radius)
            index_s.append(time.perf_counter() - started)
            identical &= bool(np.array_equal(pairs, reference))
        measurements = {
            f"r{i:06d}": {"claim_norm": "", "phash": f"{int(h):016x}", "dhash": f"{int(h):016x}"}
            for i, h in enumerate(hashes)
        }  # pHash equal to dHash: every dHash pair is confirmed, the search decides
        started = time.perf_counter()
        decisions = flt.decide_all(measurements, flt.Params())
        end_to_end = time.perf_counter() - started
        row: dict[str, Any] = {
            "hashes": n,
            "dhash_radius": radius,
            "pairs_found": int(len(pairs)),
            "identical_pairs": identical,
            "scan_seconds": [round(x, 4) for x in scan_s],
            "index_seconds": [round(x, 4) for x in index_s],
            "scan_over_index_best": round(min(scan_s) / min(index_s), 2),
            "scan_over_index_median": round(statistics.median(scan_s) / statistics.median(index_s), 2),
            "decide_all_seconds": round(end_to_end, 3),
            "clusters": len({d.details["cluster_id"] for d in decisions.values()}),
            "load_before": before,
            "load_after": load(),
        }
        rows.append(row)
        print(
            f"{n:>7} hashes: scan {min(scan_s):.3f} s, multi-index {min(index_s):.4f} s (best of {repeats}), "
            f"{row['pairs_found']} pairs, identical {identical}; decide_all {end_to_end:.2f} s"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each search, interleaved")
    parser.add_argument("--out", type=Path, default=RESULTS / "neardup.json")
    parser.add_argument("--sections", nargs="+", default=["recall", "screenshots", "timing"])
    args = parser.parse_args(argv or [])  # `python -m benchmarks` calls main() with no arguments
    if args.smoke:
        args.sizes, args.repeats = [4_000], 1
    report: dict[str, Any] = {}
    if args.out.exists() and set(args.sections) != {"recall", "screenshots", "timing"}:
        report = json.loads(args.out.read_text(encoding="utf-8"))  # update only the sections asked for
    report["machine"] = {
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
    }
    if "recall" in args.sections:
        report["recall"] = recall_section(PHOTOS[:2] if args.smoke else PHOTOS)
        print({k: report["recall"]["default"][k] for k in ("recall", "distinct_originals_merged")})
        print(report["recall"]["default"]["recall_by_transform"])
    if "screenshots" in args.sections:
        report["screenshots"] = screenshots_section(4 if args.smoke else 40)
        print(report["screenshots"])
    status = 0
    if "timing" in args.sections:
        report["timing"] = timing_section(args.sizes, args.repeats)
        top = report["timing"][-1]
        goal(
            f"all-pairs scan / multi-index hashing at {top['hashes']:,} hashes, "
            f"radius {top['dhash_radius']}: {top['scan_over_index_best']}x best, "
            f"{top['scan_over_index_median']}x median (target >= 20x); "
            f"{top['pairs_found']:,} pairs, identical: {top['identical_pairs']}",
            top["load_before"],
        )
        if not all(row["identical_pairs"] for row in report["timing"]):
            print("multi-index hashing and the all-pairs scan found different pairs", file=sys.stderr)
            status = 1
    save(args.out, report, args.smoke)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
