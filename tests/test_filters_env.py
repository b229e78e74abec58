"""The OpenCV install is deterministic: rapidocr's opencv-python and label-studio-sdk's
opencv-python-headless both write the same ``cv2/`` folder, so they must be the same version."""

from __future__ import annotations

from importlib import metadata

import pytest


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def test_both_opencv_wheels_are_the_same_release_and_cv2_imports() -> None:
    gui, headless = _version("opencv-python"), _version("opencv-python-headless")
    if gui is None and headless is None:
        pytest.skip("OpenCV not installed (only the build extra needs it)")
    if gui and headless:
        assert gui == headless, f"opencv-python {gui} != opencv-python-headless {headless}: they share cv2/"
    import cv2

    assert cv2.__version__ == ".".join((gui or headless).split(".")[:3])
