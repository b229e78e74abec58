"""FakeVV (Zhang et al., "Fact-R1", 2025) from its released test set.

The release (``zfr00/Fact-R1``, README) defines the test set in ``reasoning_test_data_image_with_audio.json``:
a JSON array of chat records, each a user turn naming the news title (and, when there is one, the audio
transcript), the answer ``Yes`` (manipulated: fake) or ``No`` (real), and the paths of 8 frames under a
folder named by the video's key::

    {"messages": [{"role": "user", "content": "<image>... The news title is '...', the news audio is
                   '...', is this multimodal content manipulated? ..."},
                  {"role": "assistant", "content": "<answer>Yes.</answer>"}],
     "images": ["./9e5225.../9e5225..._frame_1.png", ...]}

Each video is used twice, under its real title and under a manipulated one. The crawled videos are
``<key>.mp4`` in a video folder (``videos/`` or ``video/`` beside the annotations, else the folder itself).
:func:`read_fakevv` gives runner samples: the title as the claim, the transcript as the post text, fake ->
False and real -> True, the video as ``video_link``. The release carries no publish times: its test set is
already the held-out split (``test``, the only split). Record fields read: ``messages`` (the user turn's
``The news title is '...'`` and ``the news audio is '...'``; the assistant's ``Yes`` / ``No``) and ``images``
(the first frame path's folder is the video's key). A bad record is one
:class:`~rwpost.errors.RecordError` naming file, line and field. Scores: :func:`.fakesv.paper_scores`.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import json_records, record_object
from rwpost.evaluate.datasets.fakesv import video_folder
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.io import sha256_hex
from rwpost.labels import Label
from rwpost.records import Provenance, Sample

FILES: tuple[str, ...] = (
    "reasoning_test_data_image_with_audio.json",
    "data_config/reasoning_test_data_image_with_audio.json",
)
"""Where the test set's file is, relative to the folder (the first present is read)."""

SPLITS: tuple[str, ...] = ("test",)

PROMPT = re.compile(
    r"The news title is '(?P<title>.*?)'(?:, the news audio is '(?P<audio>.*?)')?, "
    r"is this multimodal content manipulated\?",
    re.DOTALL,
)
ANSWER = re.compile(r"<answer>\s*(?P<answer>yes|no)\b", re.IGNORECASE)
LABELS = {"yes": Label.FALSE, "no": Label.TRUE}

SPACE = LabelSpace(
    name="fakevv",
    description="FakeVV's label (real, fake), every sample of the test set",
    classes=("real", "fake"),
    from_label={Label.TRUE: "real", Label.FALSE: "fake"},
)
"""FakeVV's label space: its answer ``no`` is real, ``yes`` fake."""
"""The answer to "is this content manipulated?" -> the runner's label."""


def split_file(root: str | Path, split: str = "test") -> Path:
    """The release's test set file in ``root`` (ConfigError naming the names looked for)."""
    if split not in SPLITS:
        raise ConfigError(f"fakevv has no split {split!r} (have: {', '.join(SPLITS)})")
    for name in FILES:
        if (Path(root) / name).is_file():
            return Path(root) / name
    raise ConfigError(f"{root}: no FakeVV test set ({' or '.join(FILES)}); give the release's folder")


def _sample(row: Any, path: Path, line: int) -> Sample:
    row, bad = record_object(row, path, line)
    messages = row.get("messages")
    turns = (
        {m.get("role"): m.get("content") for m in messages if isinstance(m, dict)}
        if isinstance(messages, list)
        else {}
    )
    user, answer = turns.get("user"), turns.get("assistant")
    prompt = PROMPT.search(user) if isinstance(user, str) else None
    if prompt is None or not prompt["title"].strip():
        raise bad("expected a user turn naming the news title ('The news title is ...')", "messages")
    verdict = ANSWER.search(answer) if isinstance(answer, str) else None
    if verdict is None:
        raise bad(f"expected an <answer>Yes</answer> or No answer, found {answer!r}", "messages")
    images = row.get("images")
    first = images[0] if isinstance(images, list) and images and isinstance(images[0], str) else None
    key = PurePosixPath(first).parent.name if first and "://" not in first else ""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        raise bad(f"expected frame paths ./<key>/<key>_frame_1.png, found {first!r}", "images")
    title = prompt["title"].strip()
    audio = (prompt["audio"] or "").strip() or None
    label = LABELS[verdict["answer"].lower()]
    digest = sha256_hex(f"{key}\n{title}")[:12]
    return Sample(
        id=f"fakevv-{key}-{digest}",
        claim=title,
        post_text=audio,
        video_link=f"{key}.mp4",
        label=label,
        label_original="fake" if label is Label.FALSE else "real",
        news_url=f"urn:fakevv:{key}:{digest}",
        provenance=Provenance(backend="released", source=f"{path.name}:{line}"),
        extra={"video_key": key},
    )


def read_fakevv(root: str | Path, split: str = "test") -> list[Sample]:
    """FakeVV's test set from the release folder ``root`` (videos in :func:`.fakesv.video_folder`)."""
    path = split_file(root, split)
    samples, seen = [], {}
    for line, row in json_records(path):
        sample = _sample(row, path, line)
        if sample.id in seen:
            raise RecordError(
                f"the same video and title as line {seen[sample.id]}", source=str(path), line=line
            )
        seen[sample.id] = line
        samples.append(sample)
    return samples


def adapter_parts() -> dict[str, Any]:
    """The registry callables: the test set file, the reader, the video folder."""
    return {
        "source": split_file,
        "read": read_fakevv,
        "media_root": lambda folder, split: video_folder(folder),
    }


__all__ = ["FILES", "SPLITS", "adapter_parts", "read_fakevv", "split_file"]
