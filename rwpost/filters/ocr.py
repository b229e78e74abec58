"""Local, offline OCR with rapidocr-onnxruntime (its ONNX models ship inside the wheel).

The engine loads once per process, lazily, on the first image: importing rwpost never pays for it,
and a run whose records all carry OCR text already never loads it at all. Its ONNX sessions run on one
thread (:data:`THREADS`). rapidocr's pipeline already gates recognition on its detection pass: an image
where detection finds no text box returns before the classifier and the recogniser run.
"""

from __future__ import annotations

import threading
from importlib import metadata
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError

_engine: Any = None
_lock = threading.Lock()

THREADS = 1
"""ONNX Runtime threads per session (intra- and inter-op). One thread gives the same lines, boxes and
confidences as rapidocr's default (every core), for about half the CPU time on a quiet 2-core machine
and far less on a busy one, where the default's spinning worker threads wait on each other
(``benchmarks/ocr.py``). Calls already take turns on the one engine (:data:`_lock`)."""


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
            _engine = RapidOCR(intra_op_num_threads=THREADS, inter_op_num_threads=THREADS)
        return _engine


def ocr_image(path: str | Path) -> list[dict[str, Any]]:
    """OCR lines of one image, top to bottom: ``{"text", "confidence", "box"}`` each.

    Raises :class:`rwpost.images.ImageRefused` for an image that cannot be decoded.
    """
    import numpy as np

    from rwpost.filters.images import open_rgb

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
