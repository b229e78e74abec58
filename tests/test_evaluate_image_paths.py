"""An image path never leads out of the data folder (issue 39, M1): a released record's ``../`` or absolute
path under ``--image-root``, and a benchmark folder's image that is a symbolic link to a file outside it,
are no image, so an image cell is refused naming how many cannot be loaded, as with a missing file."""

from __future__ import annotations

import json

import pytest

from rwpost.evaluate.inputs import image_loadable, image_path
from rwpost.labels import Label
from rwpost.records import Image
from tests.conftest import one_line, run_cli
from tests.evaluate_helpers import MMFAKEBENCH, image_bytes, make_sample, mmfakebench_folder


@pytest.fixture
def folders(tmp_path):
    root, outside = tmp_path / "images", tmp_path / "secret"
    root.mkdir()
    outside.mkdir()
    (root / "in.jpg").write_bytes(image_bytes((1, 2, 3)))
    (outside / "out.jpg").write_bytes(image_bytes((4, 5, 6)))
    (root / "link.jpg").symlink_to(outside / "out.jpg")
    return root, outside


@pytest.mark.parametrize(
    "where", ["../secret/out.jpg", "{outside}/out.jpg", "link.jpg", "sub/../../secret/out.jpg"]
)
def test_a_path_out_of_the_image_root_is_no_image(folders, where):
    root, outside = folders
    sample = make_sample(1, Label.TRUE, image=Image(path=where.format(outside=outside)))
    assert image_path(sample, root) is None and not image_loadable(sample, root)


def test_a_path_inside_the_image_root_is_the_image(folders):
    root, _ = folders
    sample = make_sample(1, Label.TRUE, image=Image(path="in.jpg"))
    assert image_path(sample, root) == root / "in.jpg" and image_loadable(sample, root)


def test_a_benchmark_image_linked_out_of_its_folder_refuses_the_image_cell(tmp_path, capsys, monkeypatch):
    root = mmfakebench_folder(tmp_path, MMFAKEBENCH)
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(image_bytes((7, 8, 9)))
    linked = root / MMFAKEBENCH[1]["image_path"].lstrip("/")
    linked.unlink()
    linked.symlink_to(secret)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached: refused first
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--detector", "vlm",
                        "--model", "m", "--setting", "T+I", "--out", out, "--no-progress")  # fmt: skip
    assert code != 0 and "1 of 2 images cannot be loaded" in one_line(err)
    assert json.dumps(str(secret)) not in err
