"""The filter's image measurements (OCR, hashes): CPU seconds against the code of a baseline commit.

Both sides run in fresh processes, taking turns, each with an empty measurement cache: this tree, and the
tree of ``--baseline`` (``git archive``; default 7a62fe2, before issue 40), each with its own ``rwpost``
first on the path. CPU is user + sys of the child process (``RUSAGE_CHILDREN``), so it holds on a busy
machine better than wall time; min and median of ``--repeats``, the load beside each. Outputs must be
identical (exit 1 otherwise).

1. **stage**: the DVC filter stage (``python -m pipelines.filter``) on the bundled sample that
   ``make demo`` builds (``data/work``: the crawl store's images, the tagged articles, the extractions),
   ``decisions.jsonl`` and ``verdicts.jsonl`` compared byte for byte. Goal (issue 40): <= 1/4 of the
   baseline's CPU time. Skipped, and said so, where ``data/work`` is not built.
2. **images**: ``--images`` generated images of the kinds the filters see, OCR'd by the watermark
   filter through the runner (``run_filters``, the stage's path): photos (scikit-image's), screenshots
   of text (cards of lines) and watermarked photos (a verdict stamp); every fourth record reposts the
   bytes of an earlier one, as real fact-check sites do. CPU seconds per image, decisions compared.

    python -m benchmarks.filter_images [--images 1000] [--repeats 3] [--sections stage images] [--smoke]

Writes ``benchmarks/results/filter_images.json``.
"""

from __future__ import annotations

import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from PIL import Image, ImageDraw, ImageFont
from skimage import data as skdata

from benchmarks import RESULTS, arguments, goal, load, save
from benchmarks.evaluate_stage import tree_at

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7a62fe2"
"""main before issue 40: every record measured, OCR on every core."""
PHOTOS = (
    "astronaut coffee chelsea rocket camera coins moon clock hubble_deep_field retina immunohistochemistry"
).split()
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
WORDS = (
    "the claim says photo shows president senate vaccine flood rally viral post image video city "
    "water fire election police crowd storm bridge report map law tax school people"
).split()
STAMPS = ("FALSE", "FAKE", "SATIRE", "MISLEADING", "ALTERED")

CHILD = """
import json, sys
from pathlib import Path
from rwpost.filters.runner import run_filters
from rwpost.filters.watermark import WatermarkFilter
from rwpost.records import Candidate
rows = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]
flt = WatermarkFilter(use_given_ocr=False)
result = run_filters([Candidate(**r) for r in rows], [flt], {}, progress=False)
Path(sys.argv[2]).write_text("\\n".join(d.model_dump_json() for d in result.decisions) + "\\n")
"""
"""The images section's child: the watermark filter (OCR) over the records, through the runner."""


def _font(path: Path, size: int) -> ImageFont.ImageFont:
    return ImageFont.truetype(str(path), size) if path.is_file() else ImageFont.load_default()


def _photo(rng: random.Random) -> Image.Image:
    array = getattr(skdata, rng.choice(PHOTOS))()
    image = Image.fromarray(np.asarray(array[0] if isinstance(array, tuple) else array)).convert("RGB")
    w, h = image.size
    share = rng.uniform(0.5, 1.0)
    left, top = rng.randint(0, int(w * (1 - share))), rng.randint(0, int(h * (1 - share)))
    crop = image.crop((left, top, left + int(w * share), top + int(h * share)))
    side = rng.choice([320, 480, 640])
    crop.thumbnail((side, side))
    return crop


def _screenshot(rng: random.Random) -> Image.Image:
    width, lines = rng.choice([480, 600, 720]), rng.randint(2, 7)
    card = Image.new("RGB", (width, 40 + 34 * lines), rng.choice(["white", "#f5f8fa", "#fffbe6"]))
    draw, font = ImageDraw.Draw(card), _font(FONT, 20)
    for i in range(lines):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7)))
        draw.text((20, 20 + 34 * i), text, fill="#14171a", font=font)
    return card


def _watermarked(rng: random.Random) -> Image.Image:
    image = _photo(rng)
    draw, font = ImageDraw.Draw(image), _font(BOLD, max(18, image.width // 10))
    stamp = rng.choice(STAMPS)
    x, y = rng.randint(5, max(6, image.width // 3)), rng.randint(5, max(6, image.height // 2))
    draw.rectangle(draw.textbbox((x, y), stamp, font=font), fill="white")
    draw.text((x, y), stamp, fill="#c00000", font=font)
    return image


def image_records(n: int, folder: Path, seed: int = 40) -> list[dict[str, Any]]:
    """``n`` candidate records over generated images: photos, screenshots, watermarked photos (a third
    each), every fourth record reposting an earlier record's file (the same bytes and content hash)."""
    import hashlib

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if i % 4 == 3 and rows:
            earlier = rng.choice(rows)
            rows.append({**earlier, "id": f"rw-{i:05d}"})
            continue
        image = (_photo, _screenshot, _watermarked)[i % 3](rng)
        path = folder / f"{i:05d}.jpg"
        image.save(path, quality=85)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        rows.append({"id": f"rw-{i:05d}", "word_count": 500, "image_path": str(path), "image_sha256": digest})
    return rows


def run_child(tree: Path, args: list[str]) -> dict[str, float]:
    """Wall and CPU seconds (user + sys) of one Python child in ``tree``, its own rwpost first."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'crawlers'}", "HF_HUB_OFFLINE": "1"}
    before, began, load_before = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter(), load()
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - began, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args[:2])} in {tree} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load": [load_before, load()]}


def stage_params(tree: Path, out: Path) -> Path:
    """``tree``'s params.yaml reading this checkout's built sample, with ``out`` as the filter's out."""
    params = yaml.safe_load((tree / "params.yaml").read_text(encoding="utf-8"))
    mine = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for section in ("crawl", "reformat", "extract"):
        params[section]["out"] = str(ROOT / mine[section]["out"])
    params["filter"]["out"] = str(out)
    path = out.parent / f"{out.name}.params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def _summary(runs: list[dict[str, Any]], key: str = "cpu_s") -> dict[str, float]:
    values = [r[key] for r in runs]
    return {"min": min(values), "median": round(statistics.median(values), 2)}


def _turns(trees: dict[str, Path], repeats: int, one: Any) -> dict[str, list[dict[str, Any]]]:
    """``one(side, tree, round)`` for each side in turn, ``repeats`` rounds, alternating which goes first."""
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in trees}
    for round_ in range(repeats):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for side in order:
            runs[side].append(one(side, trees[side], round_))
            print(f"  {side} round {round_ + 1}: {runs[side][-1]}", flush=True)
    return runs


def stage_section(trees: dict[str, Path], work: Path, repeats: int) -> dict[str, Any] | None:
    mine = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    if not (ROOT / mine["reformat"]["out"] / "articles.jsonl").is_file():
        print("stage: skipped, no built sample under data/work (make demo builds it)")
        return None
    outputs: dict[str, bytes] = {}

    def one(side: str, tree: Path, round_: int) -> dict[str, Any]:
        out = work / f"stage-{side}-{round_}"
        run = run_child(tree, ["-m", "pipelines.filter", "--params", str(stage_params(tree, out))])
        written = b"".join((out / name).read_bytes() for name in ("decisions.jsonl", "verdicts.jsonl"))
        if outputs.setdefault(side, written) != written:
            raise RuntimeError(f"{side}: the filter's outputs differ between two runs")
        return run

    runs = _turns(trees, repeats, one)
    identical = outputs["baseline"] == outputs["this tree"]
    ratio = _summary(runs["this tree"])["median"] / _summary(runs["baseline"])["median"]
    return {
        "runs": runs,
        "cpu": {k: _summary(v) for k, v in runs.items()},
        "ratio_median": round(ratio, 3),
        "identical_outputs": identical,
    }


def images_section(trees: dict[str, Path], work: Path, n: int, repeats: int) -> dict[str, Any]:
    rows = image_records(n, work / "images")
    records = work / "records.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    outputs: dict[str, str] = {}

    def one(side: str, tree: Path, round_: int) -> dict[str, Any]:
        out = work / f"images-{side}-{round_}.jsonl"
        run = run_child(tree, ["-c", CHILD, str(records), str(out)])
        outputs.setdefault(side, out.read_text(encoding="utf-8"))
        return {**run, "cpu_s_per_image": round(run["cpu_s"] / n, 4)}

    runs = _turns(trees, repeats, one)
    kinds = {"distinct": len({r["image_sha256"] for r in rows}), "records": n}
    ratio = _summary(runs["this tree"])["median"] / _summary(runs["baseline"])["median"]
    return {
        "images": kinds,
        "runs": runs,
        "cpu_s_per_image": {k: _summary(v, "cpu_s_per_image") for k, v in runs.items()},
        "ratio_median": round(ratio, 3),
        "identical_outputs": outputs["baseline"] == outputs["this tree"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--sections", nargs="+", choices=["stage", "images"], default=["stage", "images"])
    parser.add_argument("--out", type=Path, default=RESULTS / "filter_images.json")
    args = parser.parse_args(argv)
    if args.smoke:
        args.images, args.repeats, args.sections = 8, 1, ["images"]
    started = load()
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "baseline": args.baseline,
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="rwpost-filter-bench-") as tmp:
        work = Path(tmp)
        trees = {"baseline": tree_at(args.baseline, work), "this tree": ROOT}
        if "stage" in args.sections:
            result["stage"] = stage_section(trees, work, args.repeats)
        if "images" in args.sections:
            result["images"] = images_section(trees, work, args.images, args.repeats)
    result["load"] = [started, load()]
    failed = [
        name for name in ("stage", "images") if (result.get(name) or {}).get("identical_outputs") is False
    ]
    parts = []
    if result.get("stage"):
        s, cpu = result["stage"], result["stage"]["cpu"]
        parts.append(
            f"filter stage {s['ratio_median']:.3f}x the baseline's CPU (median {cpu['this tree']['median']} "
            f"against {cpu['baseline']['median']} s; target <= 0.25), "
            f"outputs identical: {s['identical_outputs']}"
        )
    if result.get("images"):
        images = result["images"]
        s = images["cpu_s_per_image"]
        parts.append(
            f"{args.images} images: {s['this tree']['median']} CPU-s per image against "
            f"{s['baseline']['median']} ({images['ratio_median']:.3f}x), "
            f"decisions identical: {images['identical_outputs']}"
        )
    result["goal"] = goal("; ".join(parts), started)
    save(args.out, result, args.smoke)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
