"""Video posts for the detectors that read them: where a sample's video file is, and its frames, bounded.

A sample carries a video when the user gives a folder of video files (never downloaded here): the
detector's ``video_dir`` option, else the run's media folder (a benchmark folder named by ``--data
NAME:FOLDER``, or ``--image-root``). A sample's file is ``<folder>/<sample id>.<ext>``, else the file its
``video_link`` names (:func:`find_video`: a relative path under the folder, the file a crawl store in the
folder downloaded from that URL, or the last path segment of a URL). Frames are decoded with OpenCV
(``opencv-python-headless``) and bounded like images (:mod:`rwpost.images`): a file over
:data:`MAX_VIDEO_BYTES`, longer than :data:`MAX_DURATION_S`, larger than :data:`MAX_FRAME_PIXELS` per frame,
or that does not decode is a :class:`VideoRefused` with the reason, which fails that one sample.

    video = probe(find_video(sample.id, sample.video_link, folder))
    grid = tile(frames(video, 12.0, 20.0, 4))          # 4 frames of 12-20 s, 2 x 2, JPEG bytes
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

from rwpost.errors import RwpostError
from rwpost.images import MAX_IMAGE_PIXELS
from rwpost.io import iter_jsonl
from rwpost.urls import location_key, url_parts

VIDEO_SUFFIXES: tuple[str, ...] = (".mp4", ".webm", ".mkv", ".mov", ".avi", ".m4v")
"""File extensions looked for beside a sample id."""

MAX_VIDEO_BYTES = 1024 * 1024 * 1024
"""Largest video file read (1 GiB): short news videos are tens of MB."""

MAX_DURATION_S = 3 * 3600.0
"""Longest video read (3 hours)."""

MAX_FRAME_PIXELS = 8192 * 8192
"""Largest frame decoded (an 8K frame is 33 Mpx)."""

MAX_GRID_SIDE = 1024
"""The longest side of a tiled grid sent to a model (ClipScout's "fixed resolution threshold")."""


class VideoRefused(RwpostError):
    """A video that is not read; the message is the reason (the sample fails with it)."""


@dataclass(frozen=True)
class Video:
    """A probed video: its file, frame count, frame rate and frame size."""

    path: Path
    frames: int
    fps: float
    width: int
    height: int

    @property
    def duration_s(self) -> float:
        return self.frames / self.fps if self.fps > 0 else 0.0


@lru_cache(maxsize=8)
def _crawled(articles: Path, mtime_ns: int) -> dict[str, str]:
    """``location_key(url) -> path`` of every stored video of a crawl store's ``articles.jsonl``."""
    found: dict[str, str] = {}
    for _, row in iter_jsonl(articles, on_error=lambda exc, raw: None):  # a torn last line: skipped
        for video in row.get("videos") or [] if isinstance(row, dict) else []:
            if isinstance(video, dict) and video.get("path") and video.get("url"):
                found.setdefault(location_key(str(video["url"])), str(video["path"]))
    return found


def crawled_video(video_link: str, folder: Path) -> str | None:
    """The stored file of ``video_link`` when ``folder`` is a crawl store (``articles.jsonl`` lists its
    ``videos/<sha256>.<ext>`` by URL), relative to ``folder``; None otherwise."""
    articles = folder / "articles.jsonl"
    if not articles.is_file():
        return None
    return _crawled(articles, articles.stat().st_mtime_ns).get(location_key(video_link))


def find_video(sample_id: str, video_link: str | None, folder: str | Path | None) -> Path | None:
    """The sample's video file in ``folder``: ``<sample id>.<ext>``, else the ``video_link``'s path under
    ``folder`` (a relative link, as benchmark adapters give), else the file a crawl store in ``folder``
    downloaded from that URL, else the link's file name, else its stem with any of
    :data:`VIDEO_SUFFIXES`; None if none is there (never a file outside ``folder``)."""
    if folder is None:
        return None
    root = Path(folder)
    names = [f"{sample_id}{suffix}" for suffix in VIDEO_SUFFIXES]
    if video_link:
        stored = crawled_video(video_link, root)
        if stored:
            names.append(stored)
        parts = url_parts(video_link)
        path = unquote(parts.path)
        if not parts.scheme and not parts.netloc and not path.startswith("/"):
            names.append(path)
        name = Path(path).name
        if name:
            names += [name, *(f"{Path(name).stem}{suffix}" for suffix in VIDEO_SUFFIXES)]
    inside = root.resolve()
    for name in names:
        candidate = root / name
        if candidate.is_file() and candidate.resolve().is_relative_to(inside):
            return candidate
    return None


def _capture(path: Path):
    import cv2

    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        capture.release()
        raise VideoRefused(f"video unreadable: {path.name} does not decode")
    return capture


def probe(path: Path | None) -> Video:
    """The video at ``path`` after the bounds checks and a first decoded frame (:class:`VideoRefused`)."""
    import cv2

    if path is None:
        raise VideoRefused("video missing: no file for this sample in the video folder")
    size = path.stat().st_size
    if size > MAX_VIDEO_BYTES:
        raise VideoRefused(f"video refused: {path.name} is {size} bytes (limit {MAX_VIDEO_BYTES})")
    capture = _capture(path)
    try:
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        width = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)
        height = int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
        if frames <= 0 or not math.isfinite(fps) or fps <= 0 or width <= 0 or height <= 0:
            raise VideoRefused(f"video unreadable: {path.name} has no frames or no frame rate")
        if width * height > MAX_FRAME_PIXELS:
            raise VideoRefused(
                f"video refused: {path.name} frames are {width}x{height} (limit {MAX_FRAME_PIXELS} px)"
            )
        if frames / fps > MAX_DURATION_S:
            raise VideoRefused(
                f"video refused: {path.name} lasts {frames / fps:.0f} s (limit {MAX_DURATION_S:.0f} s)"
            )
        ok, _ = capture.read()
        if not ok:
            raise VideoRefused(f"video unreadable: {path.name} does not decode")
    finally:
        capture.release()
    return Video(path, frames, fps, width, height)


def frame_times(video: Video, start_s: float, end_s: float, k: int = 4) -> list[float]:
    """``k`` times spread uniformly over ``[start_s, end_s]`` clamped to the video (the middles of ``k``
    equal slices); a reversed or empty interval is read as the whole video."""
    duration = video.duration_s
    start = min(max(float(start_s), 0.0), duration)
    end = min(max(float(end_s), 0.0), duration)
    if not end > start:
        start, end = 0.0, duration
    step = (end - start) / k
    return [start + step * (i + 0.5) for i in range(k)]


def frames(video: Video, start_s: float, end_s: float, k: int = 4) -> list:
    """``k`` frames (RGB PIL images) of ``[start_s, end_s]`` (:func:`frame_times`); raises VideoRefused."""
    import cv2
    from PIL import Image

    capture = _capture(video.path)
    out = []
    try:
        for t in frame_times(video, start_s, end_s, k):
            index = min(int(t * video.fps), video.frames - 1)
            capture.set(cv2.CAP_PROP_POS_FRAMES, index)
            ok, frame = capture.read()
            if not ok:
                raise VideoRefused(f"video unreadable: {video.path.name} frame {index} does not decode")
            out.append(Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)))
    finally:
        capture.release()
    return out


def tile(pictures: list, columns: int = 2, max_side: int = MAX_GRID_SIDE) -> bytes:
    """The pictures in a grid of ``columns`` (row by row), scaled so its longest side is at most
    ``max_side``, as JPEG bytes."""
    from PIL import Image

    if not pictures:
        raise VideoRefused("no frames to tile")
    width, height = pictures[0].size
    rows = math.ceil(len(pictures) / columns)
    grid = Image.new("RGB", (width * columns, height * rows))
    for i, picture in enumerate(pictures):
        grid.paste(picture.resize((width, height)), ((i % columns) * width, (i // columns) * height))
    scale = min(1.0, max_side / max(grid.size))
    if scale < 1.0:
        grid = grid.resize((max(1, round(grid.width * scale)), max(1, round(grid.height * scale))))
    if grid.width * grid.height > MAX_IMAGE_PIXELS:  # cannot happen under max_side; the image bound
        raise VideoRefused("tiled grid too large")
    buffer = io.BytesIO()
    grid.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


__all__ = [
    "MAX_DURATION_S",
    "MAX_FRAME_PIXELS",
    "MAX_GRID_SIDE",
    "MAX_VIDEO_BYTES",
    "VIDEO_SUFFIXES",
    "Video",
    "VideoRefused",
    "crawled_video",
    "find_video",
    "frame_times",
    "frames",
    "probe",
    "tile",
]
