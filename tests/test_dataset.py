"""Parquet splits load with plain `datasets` offline, images decode, and `rwpost.load` finds versions."""

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image as PILImage

import rwpost
from rwpost.dataset import read_parquet, write_parquet
from rwpost.errors import ConfigError, RecordError
from rwpost.publish import BuildInfo, write_version
from rwpost.records import Image
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from tests.conftest import released_records

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


def _rewrite(path: Path, change) -> None:  # noqa: ANN001
    table = pq.read_table(path)
    pq.write_table(change(table), path)


@pytest.mark.hostile
class TestHostile:
    """The hostile pass (tests/README.md) on ``rwpost.load`` of a damaged split: inputs from the authors'
    released records and real Parquet, the stages run as DVC runs them."""

    @pytest.fixture
    def version(self, tmp_path) -> Path:
        """A published version folder of the released dev records (all four split files)."""
        out = tmp_path / "v1"
        write_version(assign_splits(released_records(), seed=1), out, BuildInfo("v1", "test", "released"))
        return out

    def test_rwpost_load_of_a_truncated_split_is_one_error_naming_the_file(self, version):
        path = version / "main" / "test.parquet"
        path.write_bytes(path.read_bytes()[:3000])
        with pytest.raises(RecordError) as err:  # before: pyarrow's ArrowInvalid from deep inside datasets
            rwpost.load(str(version), subset="main", split="test")
        assert str(err.value).startswith(f"{path}: checksum differs from SHA256SUMS")

    @pytest.mark.parametrize(
        "change",
        [
            lambda t: t.drop(["claim"]),  # before: loaded, without a claim column
            lambda t: t.append_column("bogus", pa.array(["x"] * t.num_rows)),  # before: loaded with it
        ],
        ids=["missing column", "extra column"],
    )
    def test_rwpost_load_refuses_a_split_changed_after_publishing(self, version, change):
        path = version / "main" / "test.parquet"
        _rewrite(path, change)
        with pytest.raises(
            RecordError, match="checksum differs from SHA256SUMS: the file changed after publish"
        ):
            rwpost.load(str(version), subset="main", split="test")
        intact = rwpost.load(str(version), subset="main", split="dev")  # the folder's other files still load
        assert len(intact) == len(read_parquet(version / "main" / "dev.parquet"))

    def test_rwpost_load_of_a_single_file_that_is_not_a_split_names_what_is_missing(self, tmp_path, version):
        path = tmp_path / "mine.parquet"
        pq.write_table(pq.read_table(version / "main" / "test.parquet").drop(["claim"]), path)
        with pytest.raises(RecordError, match=r"mine.parquet: not an RW-Post split: no claim column$"):
            rwpost.load(str(path))
        broken = tmp_path / "broken.parquet"
        broken.write_bytes(b"PAR1 not really")
        with pytest.raises(RecordError, match=r"broken.parquet: not a readable Parquet file"):
            rwpost.load(str(broken))
