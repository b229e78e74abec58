"""The authors' released JSONL: import, Parquet round trip, export, and clear errors on bad lines."""

import json
from pathlib import Path

import pytest

from rwpost.dataset import read_parquet, read_samples, write_parquet
from rwpost.errors import RecordError
from rwpost.labels import Label
from rwpost.rwpost_format import export_released, read_released

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"
FILES = [
    RELEASED / "rwpost_dev_main.head.jsonl",
    RELEASED / "rwpost_dev_other_labels.jsonl",
    RELEASED / "demo" / "demo.jsonl",
]


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_round_trip_through_parquet_preserves_every_field_value(path, tmp_path):
    samples = read_released(path)
    write_parquet(tmp_path / "split.parquet", samples)
    exported = export_released(read_parquet(tmp_path / "split.parquet"))
    assert exported == _lines(path)


def test_flat_fields_map_to_typed_columns():
    sample = read_released(FILES[0])[0]
    assert sample.claim.startswith("Flooding caused by Hurricane Harvey")
    assert sample.label is Label.FALSE and sample.label_original == "FALSE"
    assert sample.image.link == "https://www.snopes.com/uploads/2017/09/Patriot-Voice-Kirkmere-Picture.jpg"
    assert sample.claim_time.isoformat() == "2017-09-30"
    assert sample.category == "Junk News"
    assert sample.evidence[0].type == "Text" and sample.evidence[0].id == 1
    assert sample.provenance.backend == "released"


def test_satire_is_kept_as_an_excluded_rating_not_a_label():
    samples = read_released(FILES[1])
    satire = [s for s in samples if s.label_original == "SATIRE"]
    assert len(satire) == 5 and all(s.label is None for s in satire)


def test_demo_format_reads_nested_post_rationale_and_evidence():
    sample = read_released(FILES[2])[0]
    assert sample.video_link == "https://www.youtube.com/watch?v=LvfyhtxIy7Y"
    assert sample.image_required == "yes" and sample.watermarked is False
    assert len(sample.key_points) == 3
    assert sample.evidence[2].url == "https://www.tiktok.com/@viceworldnews/video/7129904175202307333"


def test_null_claim_time_is_allowed():
    assert sum(s.claim_time is None for s in read_released(FILES[0])) == 1


def test_malformed_line_names_file_and_line(tmp_path):
    good = FILES[0].read_text(encoding="utf-8").splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n{not json\n" + json.dumps({"claim": "x", "label": "FALSE"}) + "\n")
    with pytest.raises(RecordError, match=r"bad\.jsonl:2: not valid JSON"):
        read_released(bad)


def test_skip_bad_sets_lines_aside_with_reasons(tmp_path):
    good = FILES[0].read_text(encoding="utf-8").splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    obj = json.loads(good)
    obj["label"] = "PANTS ON FIRE"
    bad.write_text(good + "\n{not json\n" + json.dumps(obj) + "\n")
    rejects = []
    samples = read_released(bad, rejects=rejects)
    assert len(samples) == 1
    assert [r.line for r in rejects] == [2, 3]
    assert "not valid JSON" in rejects[0].reason and "unknown Snopes rating" in rejects[1].reason
    assert rejects[1].data.startswith("{")


def test_read_samples_accepts_released_jsonl_and_parquet(tmp_path):
    samples = read_samples(FILES[0])
    write_parquet(tmp_path / "x.parquet", samples)
    assert [s.id for s in read_samples(tmp_path / "x.parquet")] == [s.id for s in samples]
