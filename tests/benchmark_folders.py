"""Small folders in the released layouts of the paper's other benchmarks (NewsCLIPpings with VisualNews,
Mocheg, ClaimReview2024+), built from the field names of their public loaders, for the adapter and recipe
tests."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.evaluate_helpers import image_bytes

VISUAL_NEWS = [
    {"id": 11, "caption": "Flood waters cover a street in Dhaka", "topic": "environment", "source": "bbc",
     "image_path": "./bbc/images/0001/011.jpg", "article_path": "./bbc/articles/11.txt"},
    {"id": 12, "caption": "The senator speaks at a rally in Ohio", "topic": "politics", "source": "usa_today",
     "image_path": "./usa_today/images/0002/012.jpg", "article_path": "./usa_today/articles/12.txt"},
]  # fmt: skip
"""VisualNews ``data.json`` records (its demo notebook's fields)."""

NEWSCLIPPINGS = [
    {"id": 11, "image_id": 11, "similarity_score": 0.91, "falsified": False, "source_dataset": 0},
    {"id": 11, "image_id": 12, "similarity_score": 0.63, "falsified": True, "source_dataset": 0},
]  # fmt: skip
"""A pristine pair and its falsified twin (the README's annotation fields)."""


def newsclippings_folder(tmp_path: Path, annotations: list, raw: str | None = None, split="test") -> Path:
    """FOLDER/news_clippings/data/merged_balanced/<split>.json and FOLDER/visual_news/origin/ with images."""
    root = tmp_path / "newsclippings"
    origin = root / "visual_news" / "origin"
    origin.mkdir(parents=True)
    (origin / "data.json").write_text(json.dumps(VISUAL_NEWS, indent=1), encoding="utf-8")
    for i, row in enumerate(VISUAL_NEWS):
        path = origin / row["image_path"].removeprefix("./")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(image_bytes((40 * i, 80, 120)))
    data = root / "news_clippings" / "data" / "merged_balanced"
    data.mkdir(parents=True)
    text = raw if raw is not None else json.dumps({"annotations": annotations}, indent=2)
    (data / f"{split}.json").write_text(text, encoding="utf-8")
    return root


MOCHEG_HEADER = ["claim_id", "Snopes URL", "Claim", "cleaned_truthfulness", "Evidence", "ruling_outline",
                 "Origin"]  # fmt: skip
MOCHEG = [
    ["1", "https://www.snopes.com/fact-check/a/", "A grasshopper was seen in Michigan.", "NEI",
     "<p>A photo shared to Reddit.</p>", "It is unclear where it was taken.", "..."],
    ["1", "https://www.snopes.com/fact-check/a/", "A grasshopper was seen in Michigan.", "NEI",
     "Rainbow grasshoppers live in\nthe south-west.", "It is unclear where it was taken.", "..."],
    ["2", "https://www.snopes.com/fact-check/b/", "A car hit a hare, a photo shows.", "supported",
     "", "", "..."],
    ["3", "https://www.snopes.com/fact-check/c/", "A senator said he has no empathy.", "refuted",
     "The clip omits context.", "The clip is cut.", "..."],
]  # fmt: skip
"""``Corpus2.csv`` rows (the loaders' column names): claim 1 has two evidence paragraphs, claim 2 none."""


def mocheg_folder(
    tmp_path: Path, rows: list, header=MOCHEG_HEADER, raw: str | None = None, split="test"
) -> Path:
    """FOLDER/<split>/Corpus2.csv and an images/ folder of the article's images."""
    root = tmp_path / "mocheg"
    folder = root / split
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "00001-proof-00001.jpg").write_bytes(image_bytes((1, 2, 3)))
    if raw is None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        raw = buffer.getvalue()
    (folder / "Corpus2.csv").write_text(raw, encoding="utf-8")
    return root


CLAIMREVIEW = [
    {"text": "Photo shows the 2024 eclipse over Texas.", "image": ["images/1.jpg"], "label": "supported",
     "date": "2024-04-09T00:00:00Z", "author": "Facebook user"},
    {"text": "Video shows a shark on a flooded highway.", "image": ["images/2.jpg"], "label": "refuted",
     "date": "2024-06-01T00:00:00Z", "author": "X user"},
    {"text": "A candidate said he would ban cars.", "image": [], "label": "not enough information",
     "date": "2024-07-20T00:00:00Z"},
    {"text": "Crime doubled in the city, the chart shows.", "image": "images/4.jpg", "label": "misleading",
     "date": None, "author": "Instagram user"},
]  # fmt: skip
"""``test.json`` records (DEFAME's loader fields), one per label, one text-only, one single-path image."""


def claimreview_folder(tmp_path: Path, records: list, raw: str | None = None) -> Path:
    """FOLDER/test.json and the images it names."""
    root = tmp_path / "ClaimReview2024plus"
    root.mkdir(parents=True)
    for i, row in enumerate(r for r in records if isinstance(r, dict)):
        image = row.get("image")
        names = image if isinstance(image, list) else [image]
        for name in (n for n in names if isinstance(n, str) and n):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(image_bytes((10 * i, 20, 30)))
    text = raw if raw is not None else json.dumps(records, indent=2)
    (root / "test.json").write_text(text, encoding="utf-8")
    return root
