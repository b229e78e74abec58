"""Local, offline OCR with rapidocr-onnxruntime (its ONNX models ship inside the wheel).

The engine loads once per process, lazily, on the first image: importing rwpost never pays for it,
and a run whose records all carry OCR text already never loads it at all.
"""

from __future__ import annotations

import threading
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.errors import ConfigError
from rwpost.filters.images import open_rgb

_engine: Any = None
_lock = threading.Lock()


def engine_version() -> str:
    """``rapidocr-onnxruntime`` version, part of the OCR measurement's identity (or 'absent')."""
    try:
        return metadata.version("rapidocr-onnxruntime")
    except metadata.PackageNotFoundError:
        return "absent"


def _get_engine() -> Any:
    global _engine
    with _lock:
        if _engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ConfigError(
                    "local OCR needs rapidocr-onnxruntime: pip install 'rwpost[build]' "
                    f"(import failed: {exc})"
                ) from exc
            _engine = RapidOCR()
        return _engine


def ocr_image(path: str | Path) -> list[dict[str, Any]]:
    """OCR lines of one image, top to bottom: ``{"text", "confidence", "box"}`` each.

    Raises :class:`rwpost.images.ImageRefused` for an image that cannot be decoded.
    """
    rgb = np.asarray(open_rgb(path))
    bgr = np.ascontiguousarray(rgb[:, :, ::-1])  # OpenCV order, as rapidocr expects
    engine = _get_engine()
    with _lock:  # one ONNX session; calls from worker threads take turns
        result, _elapsed = engine(bgr)
    lines = [
        {
            "text": text,
            "confidence": round(float(score), 4),
            "box": [[round(float(x)), round(float(y))] for x, y in box],
        }
        for box, text, score in (result or [])
    ]
    lines.sort(key=lambda line: (min(p[1] for p in line["box"]), min(p[0] for p in line["box"])))
    return lines
