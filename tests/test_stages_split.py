"""The split stage (rwpost.stages.split): params checked, a version published whole or not at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rwpost.dataset import write_parquet
from rwpost.errors import ConfigError, RwpostError
from rwpost.publish import BuildInfo, write_version
from rwpost.records import Image
from rwpost.splits import assign_splits
from rwpost.stages import split
from tests.conftest import PARAMS, ROOT, params_with, released_records


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


@pytest.mark.hostile
class TestHostile:
    """The hostile pass (tests/README.md) on the split stage: inputs from the authors' released records and
    real Parquet, the stages run as DVC runs them."""

    @pytest.fixture
    def heavy_input(self, tmp_path) -> Path:
        """The released records as a Parquet split, each with 256 KB of image bytes: writing the version
        takes long enough for a signal to land in the middle of a file."""
        samples = []
        for copy in range(3):
            for sample in released_records():
                image = Image(bytes=os.urandom(256 * 1024), width=640, height=480)
                samples.append(sample.model_copy(update={"id": f"{sample.id}-{copy}", "image": image}))
        path = tmp_path / "input.parquet"
        write_parquet(path, samples)
        return path

    @pytest.fixture
    def version(self, tmp_path) -> Path:
        """A published version folder of the released dev records (all four split files)."""
        out = tmp_path / "v1"
        write_version(assign_splits(released_records(), seed=1), out, BuildInfo("v1", "test", "released"))
        return out

    @pytest.mark.parametrize("version", ["", ".", "..", "../elsewhere", "a/b", "/tmp/x", "latest", " v1"])
    def test_a_version_that_is_not_one_folder_name_is_refused(self, version):
        # "" published the splits straight into data/rwpost/ beside the other versions; "../x" outside it
        with pytest.raises(ConfigError, match=r"^params.yaml: dataset.version: .*not a version name"):
            split.Params.from_params(params_with("dataset", version=version))

    @pytest.mark.parametrize("ratio", [-1, 0, float("nan"), float("inf")])
    def test_a_dev_test_ratio_that_is_not_positive_and_finite_is_refused(self, ratio):
        # -1 was a ZeroDivisionError traceback, nan a ValueError one, 0 published every sample as dev
        with pytest.raises(ConfigError, match=r"^params.yaml: split.ratio: "):
            split.Params.from_params(params_with("split", ratio=ratio))

    def test_split_refuses_to_publish_a_version_with_no_samples(self, tmp_path):
        empty = tmp_path / "samples.jsonl"
        empty.write_text("", encoding="utf-8")
        dataset = {**PARAMS["dataset"], "root": str(tmp_path / "rw")}
        params = split.Params.from_params({**PARAMS, "dataset": dataset, "split": {"input": str(empty)}})
        with pytest.raises(RwpostError, match=r"samples.jsonl: no samples: nothing to publish as v0.1.0$"):
            split.run(params)
        assert not (tmp_path / "rw").exists()  # before: an empty v0.1.0 with a card, exit 0

    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
    def test_a_split_stopped_mid_write_leaves_old_or_new_whole_files_and_its_rerun_finishes(
        self, tmp_path, heavy_input, signum
    ):
        root = tmp_path / "rw"
        reference = tmp_path / "reference"
        old = _split_params(tmp_path, heavy_input, root, seed=1)
        new = _split_params(tmp_path, heavy_input, root, seed=2)
        assert _stage(old).wait(timeout=120) == 0
        assert _stage(_split_params(tmp_path, heavy_input, reference, seed=2)).wait(timeout=120) == 0
        before, after = _files(root), _files(reference)
        assert (
            before["v0.1.0/SHA256SUMS"] != after["v0.1.0/SHA256SUMS"]
        )  # the two seeds publish different files

        child = _stage(new)
        deadline = time.monotonic() + 60
        # a split file's temporary file: more files follow it, so the signal lands mid-publication
        while child.poll() is None and not any(root.rglob("*.parquet.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.001)
        assert child.poll() is None, "the stage finished before a temporary file was seen"
        child.send_signal(signum)
        _out, err = child.communicate(timeout=60)

        files = _files(root)
        assert not [name for name in files if name.endswith(".tmp")]  # before: .dev.parquet.XXXX.tmp was left
        if child.returncode == 0:  # a loaded machine let it finish before the signal came: whole and new
            assert files == after, err
        else:
            assert child.returncode == 130, (
                err
            )  # before: SIGTERM killed it (-15); SIGINT was a 20-line traceback
            assert err.strip() == f"split: interrupted ({signal.Signals(signum).name}); rerun to finish"
        for name, data in files.items():
            assert data in (before.get(name), after[name]), f"{name} is neither the old nor the new file"

        assert _stage(new).wait(timeout=120) == 0
        assert _files(root) == after
