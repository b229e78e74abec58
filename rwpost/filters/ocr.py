"""Local, offline OCR with rapidocr-onnxruntime (its ONNX models ship inside the wheel).

rapidocr's own models and steps, run in three passes so that each image costs only what it must
(:meth:`OcrEngine.read_many`; the lines, boxes and confidences are those of ``RapidOCR()(image)``):

1. **Text presence**: the detection pass alone. An image where it finds no text box ends there: the
   angle classifier and the recogniser never run for it.
2. The angle classifier over the boxes' crops, as rapidocr batches it.
3. **Recognition, batched over the text boxes of all the images given.** A crop's result depends on
   how wide it is padded, so rapidocr's chunks are kept (one image's crops sorted by width, six to a
   chunk, padded to the chunk's widest); chunks of one padded width, from any image, then run
   together. ONNX Runtime's result for a crop does not depend on what else is in the batch
   (``tests/test_filters_watermark.py``). On CUDA each width is one batch; on the CPU one crop per call
   is the cheapest (its activations stay in cache: 23 against 29 ms per crop at six), so there a
   crop runs alone.

The engine loads once per process, lazily, on the first image: importing rwpost never pays for it, and a
run whose records all carry OCR text already never loads it. Its ONNX sessions run on one thread
(:data:`THREADS`) with ONNX Runtime's CPU memory arena on: rapidocr turns it off, and then every run maps
and faults its buffers afresh (about a tenth of the OCR's CPU time, as system time). CUDA is used when
onnxruntime offers its provider (``onnxruntime-gpu``), with the CPU as the fallback.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.images import ImageRefused

_engine: OcrEngine | None = None
_lock = threading.Lock()

THREADS = 1
"""ONNX Runtime threads per session (intra- and inter-op). One thread gives the same lines, boxes and
confidences as rapidocr's default (every core), for about half the CPU time on a quiet 2-core machine
and far less on a busy one, where the default's spinning worker threads wait on each other
(``benchmarks/filter_images.py``). Calls already take turns on the one engine (:data:`_lock`)."""

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
CUDA_BATCH = 64
"""Crops per recognition call on CUDA (one padded width at a time)."""


def engine_version() -> str:
    """``rapidocr-onnxruntime`` version, part of the OCR measurement's identity (or 'absent')."""
    try:
        return metadata.version("rapidocr-onnxruntime")
    except metadata.PackageNotFoundError:
        return "absent"


def cuda_offered() -> bool:
    """Whether the installed onnxruntime offers its CUDA provider (``onnxruntime-gpu``)."""
    try:
        import onnxruntime
    except ImportError:  # pragma: no cover - depends on the install
        return False
    return CUDA in onnxruntime.get_available_providers()


def providers(device: str = "auto") -> list[str]:
    """ONNX Runtime providers in order of preference: CUDA first when ``device`` allows it and onnxruntime
    offers it, the CPU always last (the fallback)."""
    if device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"OCR device {device!r}: use auto, cpu or cuda")
    return [CUDA, CPU] if device != "cpu" and cuda_offered() else [CPU]


@dataclass
class _Page:
    """One image between the passes: its boxes, their crops, and how to map boxes back to it."""

    boxes: Any
    crops: list[Any]
    record: dict[str, Any]
    height: int
    width: int
    classes: list[Any] | None = None
    texts: list[tuple[str, float]] | None = None


class OcrEngine:
    """rapidocr's detector, angle classifier and recogniser in ONNX sessions of our settings."""

    def __init__(self, device: str = "auto") -> None:
        """``device``: ``auto`` (CUDA when onnxruntime offers it, else the CPU), ``cpu`` or ``cuda`` (the
        CPU still where CUDA cannot start)."""
        try:
            import onnxruntime
            from rapidocr_onnxruntime import RapidOCR
            from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH
            from rapidocr_onnxruntime.utils import read_yaml, update_model_path
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                f"local OCR needs rapidocr-onnxruntime: pip install 'rwpost[build]' (import failed: {exc})"
            ) from exc
        self.rapid = RapidOCR(intra_op_num_threads=THREADS, inter_op_num_threads=THREADS)
        config = update_model_path(read_yaml(str(DEFAULT_CFG_PATH)))
        wanted = [CUDA, CPU] if device == "cuda" else providers(device)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = THREADS
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        holders = {
            "Det": self.rapid.text_det.infer,
            "Cls": self.rapid.text_cls.infer,
            "Rec": self.rapid.text_rec.session,
        }
        used: set[str] = set()
        for section, holder in holders.items():
            available = [p for p in wanted if p in onnxruntime.get_available_providers()] or [CPU]
            holder.session = onnxruntime.InferenceSession(
                config[section]["model_path"], sess_options=options, providers=available
            )
            used.add(holder.session.get_providers()[0])
        self.device = "cuda" if used == {CUDA} else "cpu"

    def read_many(self, images: Sequence[Any]) -> list[list[dict[str, Any]]]:
        """OCR lines of each image (BGR uint8 arrays), top to bottom: ``{"text", "confidence", "box"}``."""
        pages = [self._detect(image) for image in images]
        found = [page for page in pages if page is not None]
        for page in found:
            page.crops, page.classes, _ = self.rapid.text_cls(page.crops)
        self._recognise(found)
        return [self._lines(page) if page is not None else [] for page in pages]

    def _detect(self, image: Any) -> _Page | None:
        """The text-presence pass (rapidocr's steps up to its crops); None: no text box."""
        rapid = self.rapid
        image = rapid.load_img(image)
        height, width = image.shape[:2]
        image, ratio_h, ratio_w = rapid.preprocess(image)
        record: dict[str, Any] = {"preprocess": {"ratio_h": ratio_h, "ratio_w": ratio_w}}
        image, record = rapid.maybe_add_letterbox(image, record)
        boxes = self._boxes(image)
        if boxes is None:
            return None
        return _Page(boxes, rapid.get_crop_img_list(image, boxes), record, height, width)

    def _boxes(self, image: Any) -> Any:
        """rapidocr's detection (``auto_text_det``), its input made by :func:`det_input`."""
        det = self.rapid.text_det
        shape = image.shape[0], image.shape[1]
        prepare = det.get_preprocess(max(shape))
        resized = prepare.resize(image)
        if resized is None:
            return None
        preds = det.infer(det_input(resized, prepare))[0]
        boxes, _scores = det.postprocess_op(preds, shape)
        boxes = det.filter_tag_det_res(boxes, shape)
        if boxes is None or len(boxes) < 1:
            return None
        return self.rapid.sorted_boxes(boxes)

    def _recognise(self, pages: Sequence[_Page]) -> None:
        """Every page's texts: rapidocr's chunks, run together by padded width."""
        import numpy as np

        rec = self.rapid.text_rec
        _channels, height, base = rec.rec_image_shape[:3]
        chunks: dict[int, list[tuple[_Page, list[int], float]]] = defaultdict(list)
        for page in pages:
            page.texts = [("", 0.0)] * len(page.crops)
            ratios = [crop.shape[1] / float(crop.shape[0]) for crop in page.crops]
            order = [int(i) for i in np.argsort(np.array(ratios))]
            for begin in range(0, len(order), rec.rec_batch_num):
                members = order[begin : begin + rec.rec_batch_num]
                widest = max([base / height] + [ratios[i] for i in members])
                chunks[int(height * widest)].append((page, members, widest))
        for group in chunks.values():
            batch = [rec.resize_norm_img(page.crops[i], w) for page, members, w in group for i in members]
            step = CUDA_BATCH if self.device == "cuda" else 1
            runs = [np.stack(batch[i : i + step]).astype(np.float32) for i in range(0, len(batch), step)]
            preds = np.concatenate([rec.session(run)[0] for run in runs])
            offset = 0
            for page, members, _widest in group:
                decoded = rec.postprocess_op(preds[offset : offset + len(members)], False)
                offset += len(members)
                for i, text in zip(members, decoded, strict=True):
                    page.texts[i] = text  # type: ignore[index]

    def _lines(self, page: _Page) -> list[dict[str, Any]]:
        rapid = self.rapid
        boxes = rapid._get_origin_points(page.boxes, page.record, page.height, page.width)
        result, _ = rapid.get_final_res(boxes, page.classes, page.texts, 0.0, 0.0, 0.0)
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


def det_input(resized: Any, prepare: Any) -> Any:
    """rapidocr's detector input (``DetPreProcess``: normalise, HWC to CHW, a batch of one, float32) for an
    HWC uint8 image, in float32 and in one copy: the cast and the transpose fill the CHW array at once
    (rapidocr makes an HWC float array, then copies it to CHW), then the arithmetic runs in place. The same
    bytes as its float64 arithmetic for its mean and std of 0.5 (``x * (1/255) - 0.5`` is exact in
    float64, so rounding it to float32 once equals float32's one rounding; halving is exact), in about a
    tenth of the time (2-3 against 30 ms for a 736 x 1312 input; a separate HWC cast and CHW copy take 7)."""
    import numpy as np

    if not (np.all(prepare.mean == 0.5) and np.all(prepare.std == 0.5)):  # pragma: no cover
        chw = prepare.permute(prepare.normalize(resized))  # rapidocr's packaged config has 0.5, 0.5
        return np.ascontiguousarray(chw[np.newaxis]).astype(np.float32)
    tensor = np.empty((1, resized.shape[2], *resized.shape[:2]), dtype=np.float32)
    tensor[0] = resized.transpose((2, 0, 1))
    tensor *= np.float32(prepare.scale)
    tensor -= np.float32(0.5)
    tensor /= np.float32(0.5)
    return tensor


def get_engine() -> OcrEngine:
    """The process's engine, built on first use."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = OcrEngine()
        return _engine


def _bgr(path: str | Path) -> Any:
    import numpy as np

    from rwpost.filters.images import open_rgb

    rgb = np.asarray(open_rgb(path))
    return np.ascontiguousarray(rgb[:, :, ::-1])  # OpenCV order, as rapidocr expects


def ocr_images(paths: Sequence[str | Path]) -> list[list[dict[str, Any]] | ImageRefused]:
    """OCR lines of each image file (see :meth:`OcrEngine.read_many`), recognition batched over all of
    them; an image that cannot be decoded gives its :class:`rwpost.images.ImageRefused` in its place."""
    decoded: list[Any] = []
    for path in paths:
        try:
            decoded.append(_bgr(path))
        except ImageRefused as exc:
            decoded.append(exc)
    readable = [image for image in decoded if not isinstance(image, ImageRefused)]
    engine = get_engine()
    with _lock:  # one set of ONNX sessions; calls from worker threads take turns
        lines = iter(engine.read_many(readable))
    return [image if isinstance(image, ImageRefused) else next(lines) for image in decoded]


def ocr_image(path: str | Path) -> list[dict[str, Any]]:
    """OCR lines of one image, top to bottom: ``{"text", "confidence", "box"}`` each.

    Raises :class:`rwpost.images.ImageRefused` for an image that cannot be decoded.
    """
    (result,) = ocr_images([path])
    if isinstance(result, ImageRefused):
        raise result
    return result
