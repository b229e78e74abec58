"""Statistics equal a direct count of the released JSONL, and the CLI writes JSON, Markdown and plots."""

import json
import statistics
from collections import Counter
from pathlib import Path

import pytest
from ftfy import fix_encoding

from rwpost.cli import main
from rwpost.labels import map_rating
from rwpost.records import Evidence
from rwpost.rwpost_format import read_released
from rwpost.stats import compute_stats, evidence_modality

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"
DEV = RELEASED / "rwpost_dev_main.head.jsonl"
OTHER = RELEASED / "rwpost_dev_other_labels.jsonl"


def _raw(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("path", [DEV, OTHER], ids=lambda p: p.name)
def test_counts_equal_a_direct_count_of_the_jsonl(path):
    raw = _raw(path)
    stats = compute_stats(read_released(path))
    assert stats["count"] == len(raw)
    direct_labels = Counter(str(map_rating(r["label"]).label or "excluded") for r in raw)
    assert stats["labels"] == dict(direct_labels)
    assert stats["ratings"] == dict(Counter(r["label"] for r in raw))
    # the release's mojibake ("Risqu√© Business") is repaired at import
    assert stats["categories"] == dict(Counter(fix_encoding(r["category"]) for r in raw))
    evidence = Counter(len(r["fact_checking_evidence"]) for r in raw)
    assert stats["evidence_per_sample"] == {str(k): v for k, v in evidence.items()}
    assert stats["evidence_total"] == sum(len(r["fact_checking_evidence"]) for r in raw)
    fauxto = [len(r["fact_checking_evidence"]) for r in raw if r["category"] == "Fauxtography"]
    assert stats["median_evidence_per_category"]["Fauxtography"] == statistics.median(fauxto)
    years = Counter(r["claim_time"][:4] if r["claim_time"] else "unknown" for r in raw)
    assert stats["claim_years"] == dict(years)


def test_dev_head_label_counts_match_provenance_note():
    assert compute_stats(read_released(DEV))["labels"] == {"False": 32, "True": 11, "Unproven": 3}


@pytest.mark.parametrize(
    "kind,modality",
    [
        ("Text", "text"),
        ("Web Link", "text"),
        ("Image", "image"),
        ("Video", "video"),
        ("Text/Image", "mixed"),
        ("Text/Web Link", "text"),
        ("Audio", "other"),
    ],
)
def test_evidence_modality_of_released_types(kind, modality):
    assert evidence_modality(Evidence(id=1, type=kind)) == modality


def test_cli_writes_json_markdown_and_plots(tmp_path, capsys):
    code = main(["stats", str(DEV), "--json", str(tmp_path / "s.json"), "--out", str(tmp_path / "r")])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Fauxtography" in printed and "32" in printed
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["labels"]["False"] == 32
    pngs = sorted(p.name for p in (tmp_path / "r").glob("*.png"))
    assert "labels.png" in pngs and "categories.png" in pngs
    assert all((tmp_path / "r" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_cli_reports_a_missing_file_in_one_line(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl: file not found" in capsys.readouterr().err
