"""A test video written with OpenCV and the scripted FactGuard turns, shared by the video tests."""

from __future__ import annotations

from pathlib import Path

from rwpost.testing.llm import Reply
from tests.evaluate_helpers import schema_of

FPS, SECONDS = 10, 4


def color(index: int) -> tuple[int, int, int]:
    """The RGB colour of frame ``index`` of a test video (red falls, blue rises with time)."""
    return (255 - 6 * index, 0, 6 * index)


def write_video(path: Path) -> Path:
    """A 4 s, 10 fps, 32 x 24 video whose frame i is one colour (:func:`color`)."""
    import cv2
    import numpy as np

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), float(FPS), (32, 24))
    for i in range(FPS * SECONDS):
        r, g, b = color(i)
        writer.write(np.full((24, 32, 3), (b, g, r), np.uint8))
    writer.release()
    return path


class Turns:
    """Scripted FactGuard turns: the first asks for ``query`` and ``clip`` (or answers ``first``), the second
    answers ``label``."""

    def __init__(self, query="flood video 2020", clip=(1.0, 3.0), label="fake", first=None):
        self.query, self.clip, self.label, self.first = query, clip, label, first

    def __call__(self, body) -> Reply:
        if schema_of(body) == "factguard_turn1":
            if self.first:
                return Reply.answer({"reasoning": "clear", "label": self.first})
            clip = {"start_s": self.clip[0], "end_s": self.clip[1]} if self.clip else None
            return Reply.answer(
                {"reasoning": "unsure", "label": None, "search_query": self.query, "clip": clip}
            )
        return Reply.answer({"reasoning": "the footage is older", "label": self.label})
