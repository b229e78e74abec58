"""A sample's image as a detector receives it: from its bytes, or from its file under the run's image root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rwpost.records import Sample


def image_path(sample: Sample, image_root: str | Path | None = None) -> Path | None:
    """The sample's image file (a relative path is taken under ``image_root``), None when it has none.

    With an ``image_root`` the file must be inside it: an absolute path, a ``../`` path or a symbolic link
    that leads out of the folder is no image (counted as missing: an image cell is refused naming it, or,
    with ``--allow-missing-images``, that sample fails with the reason), as video paths are confined."""
    if sample.image is None or not sample.image.path:
        return None
    path = Path(sample.image.path)
    if image_root is None:
        return path
    root = Path(image_root)
    if path.is_absolute() or not (root / path).resolve().is_relative_to(root.resolve()):
        return None
    return root / path


def image_loadable(sample: Sample, image_root: str | Path | None = None) -> bool:
    """Whether the sample's image can be sent: bytes, or a file (relative paths under ``image_root``)."""
    if sample.image is None:
        return False
    if sample.image.bytes:
        return True
    path = image_path(sample, image_root)
    return path is not None and path.is_file()


def image_input(sample: Sample, image_root: str | Path | None = None) -> Any:
    """The sample's image as an :class:`rwpost.llm.ImageInput`, from bytes or a file; None if neither."""
    from rwpost.llm import ImageInput

    if sample.image is None:
        return None
    if sample.image.bytes:
        return ImageInput(data=sample.image.bytes)
    path = image_path(sample, image_root)
    return ImageInput.from_path(path) if path is not None and path.is_file() else None


__all__ = ["image_input", "image_loadable", "image_path"]
