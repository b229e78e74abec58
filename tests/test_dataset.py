"""Parquet splits load with plain `datasets` offline, images decode, and `rwpost.load` finds versions."""

import io
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image as PILImage

import rwpost
from rwpost.dataset import read_parquet, write_parquet
from rwpost.errors import ConfigError, RecordError
from rwpost.records import Image
from rwpost.rwpost_format import read_released

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released"


def _jpeg(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", (width, height), (30, 120, 200)).save(buf, "JPEG")
    return buf.getvalue()


@pytest.fixture
def version(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    samples = read_released(RELEASED / "rwpost_dev_main.head.jsonl")[:6]
    samples[0] = samples[0].model_copy(update={"image": Image(bytes=_jpeg(320, 240), link="https://x/a.jpg")})
    write_parquet(tmp_path / "v9" / "main" / "test.parquet", samples)
    return tmp_path / "v9"


def test_plain_datasets_parquet_loader_decodes_images(version):
    import datasets

    ds = datasets.load_dataset("parquet", data_files=str(version / "main" / "test.parquet"), split="train")
    assert len(ds) == 6
    assert isinstance(ds.features["image"], datasets.Image)
    assert ds[0]["image"].size == (320, 240)
    assert ds[1]["image"] is None


def test_rwpost_load_by_folder_and_by_version_name(version):
    ds = rwpost.load(str(version), subset="main", split="test")
    assert ds[0]["claim"].startswith("Flooding caused by Hurricane Harvey")
    by_name = rwpost.load("v9", subset="main", split="test", root=version.parent)
    assert by_name.num_rows == ds.num_rows


def test_missing_split_is_a_clear_error(version):
    with pytest.raises(ConfigError, match=r"no split challenging/dev .*have: main/test.parquet"):
        rwpost.load(str(version), subset="challenging", split="dev")


def test_parquet_uses_zstd_and_small_row_groups(version):
    meta = pq.ParquetFile(version / "main" / "test.parquet").metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    assert b"huggingface" in pq.read_schema(version / "main" / "test.parquet").metadata


def test_typed_round_trip_keeps_image_bytes(version):
    back = read_parquet(version / "main" / "test.parquet")
    assert back[0].image.bytes[:2] == b"\xff\xd8" and back[0].image.link == "https://x/a.jpg"


def test_a_non_parquet_file_is_reported(tmp_path):
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(RecordError, match="not a readable Parquet file"):
        read_parquet(bad)


def test_atomic_writes_get_the_usual_file_mode(tmp_path):
    import os

    from rwpost.io import write_text

    write_text(tmp_path / "a.txt", "x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o666 & ~mask
