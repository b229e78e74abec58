"""A hostile user and a demanding researcher on the pipeline side: params.yaml values that cannot mean what
was intended are one line naming the key before any work; a stage stopped by SIGTERM or Ctrl-C leaves
only complete files and its rerun finishes; ``rwpost.load`` refuses a damaged split in one line naming the
file instead of a pyarrow traceback or a silently short table.

Every input is built from the authors' released records in data/sample/released/ and real Parquet files
written by rwpost's own publish step; the stages run as DVC runs them (``python -m pipelines.<stage>``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

import rwpost
from rwpost.dataset import read_parquet, write_parquet
from rwpost.errors import ConfigError, RecordError, RwpostError
from rwpost.publish import BuildInfo, write_version
from rwpost.records import Image
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from rwpost.stages import evaluate, split
from rwpost.stages import filter as filter_stage
from rwpost.stages.base import load_params

ROOT = Path(__file__).resolve().parents[1]
PARAMS = load_params(ROOT / "params.yaml")
RELEASED = ROOT / "data" / "sample" / "released"


def _released():
    return read_released(RELEASED / "rwpost_dev_main.head.jsonl") + read_released(
        RELEASED / "rwpost_dev_other_labels.jsonl"
    )


def _with(section: str, **values: object) -> dict:
    return {**PARAMS, section: {**PARAMS[section], **values}}


# --- params.yaml: values that cannot mean what was meant -------------------------------------------------


@pytest.mark.parametrize("version", ["", ".", "..", "../elsewhere", "a/b", "/tmp/x", "latest", " v1"])
def test_a_version_that_is_not_one_folder_name_is_refused(version):
    # "" published the splits straight into data/rwpost/ beside the other versions; "../x" outside it
    with pytest.raises(ConfigError, match=r"^params.yaml: dataset.version: .*not a version name"):
        split.Params.from_params(_with("dataset", version=version))


def test_a_date_window_that_ends_before_it_starts_is_refused():
    with pytest.raises(ConfigError, match=r"^params.yaml: dataset: .*since 2020-01-01 is after until 2019"):
        split.Params.from_params(_with("dataset", since="2020-01-01", until="2019-01-01"))
    split.Params.from_params(_with("dataset", since="2019-01-01", until="2019-01-01"))


@pytest.mark.parametrize("ratio", [-1, 0, float("nan"), float("inf")])
def test_a_dev_test_ratio_that_is_not_positive_and_finite_is_refused(ratio):
    # -1 was a ZeroDivisionError traceback, nan a ValueError one, 0 published every sample as dev
    with pytest.raises(ConfigError, match=r"^params.yaml: split.ratio: "):
        split.Params.from_params(_with("split", ratio=ratio))


@pytest.mark.parametrize(
    ("section", "value", "key"),
    [
        ("size_limits", {"min_words": -5}, "filter.size_limits.min_words"),
        ("size_limits", {"min_words": 3000, "max_words": 10}, "filter.size_limits"),
        ("necessity", {"keep_answers": ["maybe"]}, "filter.necessity.keep_answers.0"),  # kept nothing
        ("watermark", {"combine": "xx"}, "filter.watermark.combine"),  # KeyError mid-run with llm: true
        ("watermark", {"min_confidence": 5}, "filter.watermark.min_confidence"),
        ("neardup", {"index": "bogus"}, "filter.neardup.index"),  # refused only after every measurement
        ("neardup", {"text_jaccard": float("nan")}, "filter.neardup.text_jaccard"),
        ("order", ["size", "size"], "filter.order"),  # the funnel counted size's removals twice
        ("order", ["size", "nope"], "filter.order"),
    ],
)
def test_a_filter_threshold_outside_what_the_filter_understands_is_refused(section, value, key):
    with pytest.raises(ConfigError) as err:
        filter_stage.Params.from_params(_with("filter", **{section: value}))
    assert str(err.value).startswith(f"params.yaml: {key}: "), err.value


def test_the_thresholds_of_params_yaml_and_a_bare_yaml_yes_still_pass():
    bare = yaml.safe_load("keep_answers: [yes, no]")
    params = filter_stage.Params.from_params(_with("filter", necessity=bare))
    assert params.thresholds()["necessity"] == {"keep_answers": [True, False]}
    assert filter_stage.Params.from_params(PARAMS).thresholds()["size"]["min_words"] == 90


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"train_split": "dev", "test_split": "dev"}, r"^params.yaml: evaluate: .*both 'dev'"),
        ({"subsets": []}, r"^params.yaml: evaluate.subsets: "),  # "0 runs", exit 0
    ],
)
def test_an_evaluation_scored_on_its_training_split_or_on_nothing_is_refused(values, message):
    with pytest.raises(ConfigError, match=message):
        evaluate.Params.from_params(_with("evaluate", **values))


def test_two_entries_of_one_detector_need_their_own_labels():
    """Two ``vlm`` entries (two models) wrote their runs into one folder, the second over the first."""
    entries = [{"name": "vlm", "config": {"model": "a"}}, {"name": "vlm", "config": {"model": "b"}}]
    with pytest.raises(ConfigError, match=r"evaluate.*vlm named more than once"):
        evaluate.Params.from_params(_with("evaluate", detectors=entries))
    entries[1]["label"] = "vlm-b"
    params = evaluate.Params.from_params(_with("evaluate", detectors=entries))
    assert [d.label or d.name for d in params.detectors] == ["vlm", "vlm-b"]


@pytest.mark.parametrize(
    ("section", "values", "key"),
    [
        ("crawl", {"max_articles": -1}, "crawl.max_articles"),
        ("crawl", {"max_image_bytes": 0}, "crawl.max_image_bytes"),
        ("extract", {"prices": {"m": {"input_per_mtok": -1, "output_per_mtok": 1}}}, "extract.prices"),
    ],
)
def test_counts_sizes_and_prices_out_of_range_are_refused(section, values, key):
    from rwpost.stages import crawl, extract

    stage = {"crawl": crawl, "extract": extract}[section]
    with pytest.raises(ConfigError, match=rf"^params.yaml: {key}"):
        stage.Params.from_params(_with(section, **values))


# --- the split stage as DVC runs it ----------------------------------------------------------------------


def _split_params(tmp_path: Path, input_path: Path, root: Path, **split_values: object) -> Path:
    params = {
        **PARAMS,
        "dataset": {**PARAMS["dataset"], "root": str(root)},
        "split": {
            **PARAMS["split"],
            "input": str(input_path),
            "funnel": None,
            "rejects": str(root / "rejects.jsonl"),
            **split_values,
        },
    }
    path = tmp_path / f"params-{root.name}-{len(list(tmp_path.glob('params-*')))}.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def _stage(params: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pipelines.split", "--params", str(params)]
    pipe = subprocess.PIPE
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=pipe, stderr=pipe, text=True)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_split_refuses_to_publish_a_version_with_no_samples(tmp_path):
    empty = tmp_path / "samples.jsonl"
    empty.write_text("", encoding="utf-8")
    dataset = {**PARAMS["dataset"], "root": str(tmp_path / "rw")}
    params = split.Params.from_params({**PARAMS, "dataset": dataset, "split": {"input": str(empty)}})
    with pytest.raises(RwpostError, match=r"samples.jsonl: no samples: nothing to publish as v0.1.0$"):
        split.run(params)
    assert not (tmp_path / "rw").exists()  # before: an empty v0.1.0 with a card, exit 0


@pytest.fixture
def heavy_input(tmp_path) -> Path:
    """The released records as a Parquet split, each with 256 KB of image bytes: writing the version
    takes long enough for a signal to land in the middle of a file."""
    samples = []
    for copy in range(3):
        for sample in _released():
            image = Image(bytes=os.urandom(256 * 1024), width=640, height=480)
            samples.append(sample.model_copy(update={"id": f"{sample.id}-{copy}", "image": image}))
    path = tmp_path / "input.parquet"
    write_parquet(path, samples)
    return path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_split_stopped_mid_write_leaves_old_or_new_whole_files_and_its_rerun_finishes(
    tmp_path, heavy_input, signum
):
    root = tmp_path / "rw"
    reference = tmp_path / "reference"
    old = _split_params(tmp_path, heavy_input, root, seed=1)
    new = _split_params(tmp_path, heavy_input, root, seed=2)
    assert _stage(old).wait(timeout=120) == 0
    assert _stage(_split_params(tmp_path, heavy_input, reference, seed=2)).wait(timeout=120) == 0
    before, after = _files(root), _files(reference)
    assert before["v0.1.0/SHA256SUMS"] != after["v0.1.0/SHA256SUMS"]  # the two seeds publish different files

    child = _stage(new)
    deadline = time.monotonic() + 60
    while child.poll() is None and not any(root.rglob("*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.001)
    assert child.poll() is None, "the stage finished before a temporary file was seen"
    child.send_signal(signum)
    _out, err = child.communicate(timeout=60)

    assert child.returncode == 130, err  # before: SIGTERM killed it (-15); SIGINT was a 20-line traceback
    assert err.strip() == f"split: interrupted ({signal.Signals(signum).name}); rerun to finish"
    files = _files(root)
    assert not [name for name in files if name.endswith(".tmp")]  # before: .dev.parquet.XXXX.tmp was left
    for name, data in files.items():
        assert data in (before.get(name), after[name]), f"{name} is neither the old nor the new file"

    assert _stage(new).wait(timeout=120) == 0
    assert _files(root) == after


# --- rwpost.load on a damaged version folder -------------------------------------------------------------


@pytest.fixture
def version(tmp_path) -> Path:
    """A published version folder of the released dev records (all four split files)."""
    out = tmp_path / "v1"
    write_version(assign_splits(_released(), seed=1), out, BuildInfo("v1", "test", "released"))
    return out


def _rewrite(path: Path, change) -> None:  # noqa: ANN001
    table = pq.read_table(path)
    pq.write_table(change(table), path)


def test_rwpost_load_of_a_truncated_split_is_one_error_naming_the_file(version):
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
def test_rwpost_load_refuses_a_split_changed_after_publishing(version, change):
    path = version / "main" / "test.parquet"
    _rewrite(path, change)
    with pytest.raises(RecordError, match="checksum differs from SHA256SUMS: the file changed after publish"):
        rwpost.load(str(version), subset="main", split="test")
    intact = rwpost.load(str(version), subset="main", split="dev")  # the folder's other files still load
    assert len(intact) == len(read_parquet(version / "main" / "dev.parquet"))


def test_rwpost_load_of_a_single_file_that_is_not_a_split_names_what_is_missing(tmp_path, version):
    path = tmp_path / "mine.parquet"
    pq.write_table(pq.read_table(version / "main" / "test.parquet").drop(["claim"]), path)
    with pytest.raises(RecordError, match=r"mine.parquet: not an RW-Post split: no claim column$"):
        rwpost.load(str(path))
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(RecordError, match=r"broken.parquet: not a readable Parquet file"):
        rwpost.load(str(broken))
