"""MMFakeBench's own output files (MMD-Agent and its standard prompt), read as they are.

The benchmark's ``eval/utils/vqa.py`` writes ``<answer_path>/<model>/<time>_<prompt>/<dataset>.json``: a
JSON array in the split's order, one object per sample::

    {"gt_answers": ["Fake"], "image_path": "./data/MMFakeBench_test//fake/...", "model_name": "llava",
     "multiple_gt_answers": "mismatch", "binary_fake_type": "Fake", "fake_type": "mismatch",
     "question": ["...News caption: ..."], "answer": ["...Finish[MISMATCH]..."]}

(the standard prompt's ``question`` and ``answer`` are strings, with no ``fake_type``). The answer is read
as the benchmark's ``main_eval_only.py`` reads it (``label_regular`` on the last answer): the first of
``Finish[TEXT REFUTES]``, ``Finish[IMAGE REFUTES]``, ``Finish[MISMATCH]``, ``Finish[ORIGINAL]`` /
``Finish[MATCH]`` found, compared as its ``VQAEval`` does (punctuation to spaces, lower case, no articles,
whole words); the 4-class answer is the row's raw label (``X`` when none is found: an unknown label), the
binary one its RW-Post label (original -> True, the three distortions -> False). The records carry no
id: the rows join the evaluated samples by position, taken only where each row's question holds its
sample's text, or through ``--id-map`` (both as DEFAME's ``sample_index``, :mod:`.defame`). A folder gives
one set per ``<model>/<run>/<dataset>.json`` below it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets import json_records
from rwpost.evaluate.formats.common import PredictionSet, Row
from rwpost.evaluate.formats.defame import POSITION, read_id_map
from rwpost.io import decode_json, read_text
from rwpost.labels import Label

FILES = "MMFakeBench_*.json"
"""The output file names (``--dataset_name``: ``MMFakeBench_val`` or ``MMFakeBench_test``)."""

ANSWERS: tuple[tuple[str, str], ...] = (
    ("Finish[TEXT REFUTES]", "textual_veracity_distortion"),
    ("Finish[IMAGE REFUTES]", "visual_veracity_distortion"),
    ("Finish[MISMATCH]", "mismatch"),
    ("Finish[ORIGINAL]", "original"),
    ("Finish[MATCH]", "original"),
)
"""``label_regular``'s answers in its order, with the 4-class answer each is."""

_PUNCT = ';/[]"{}()=+\\_-><@`,?!'
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")  # VQAEval.periodStrip, its look-behind typo kept
_ARTICLES = {"a", "an", "the"}


def _words(text: str) -> str:
    """``VQAEval``'s ``processPunctuation`` then ``processDigitArticle`` (the parts that can change
    whether an answer phrase matches: punctuation, periods, case and articles)."""
    out = text.replace("\n", " ").replace("\t", " ").strip()
    source = out
    for p in _PUNCT:
        out = out.replace(p, "" if (p + " " in source or " " + p in source) else " ")
    out = _PERIOD.sub("", out)
    return " ".join(w for w in out.lower().split() if w not in _ARTICLES)


def answer_class(answer: str) -> str | None:
    """The 4-class answer ``main_eval_only.py`` reads in ``answer``; None when it finds none (its X)."""
    words = _words(answer)
    for phrase, name in ANSWERS:
        if re.search(r"\b" + re.escape(_words(phrase)) + r"\b", words):
            return name
    return None


def _text(value: Any) -> str | None:
    """A string, or the last string of a list (``main_eval_only.py`` scores the last answer)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value[-1]
    return value if isinstance(value, str) else None


def looks_like_mmdagent(record: Any) -> bool:
    """Whether a record is one of these files' (``multiple_gt_answers`` beside ``answer``)."""
    return isinstance(record, dict) and "multiple_gt_answers" in record and "answer" in record


def is_mmdagent_file(path: Path) -> bool:
    """Whether ``path`` is a JSON array whose first element is an MMD-Agent record."""
    try:
        text = read_text(path).lstrip()
    except RecordError:  # not UTF-8: the reader of the format chosen says where
        return False
    if not text.startswith("["):
        return False
    try:
        first, _ = decode_json(text, str(path), at=len(text) - len(text[1:].lstrip()))
    except RecordError:  # not JSON, nested too deeply: not this format's file (its reader says where)
        return False
    return looks_like_mmdagent(first)


def _read_file(path: Path, name: str, id_map: str | Path | None) -> PredictionSet:
    positional = id_map is None or str(id_map) == POSITION
    ids = None if positional else read_id_map(id_map)  # type: ignore[arg-type]
    result = PredictionSet(
        name=name, format="mmdagent", source=str(path), by_position=positional, claims_checked=id_map is None
    )
    result.files.append(str(path))
    for index, (line, record) in enumerate(json_records(path)):
        position = str(index) if ids is None else ids.get(str(index))
        if position is None:
            result.bad_rows.append({"line": line, "reason": f"{path}:{line}: position {index} unmapped"})
            continue
        if not looks_like_mmdagent(record):
            reason = f"{path}:{line}: expected an object with answer and multiple_gt_answers"
            result.bad_rows.append({"line": line, "reason": reason})
            continue
        answer, question = _text(record.get("answer")), record.get("question")
        if answer is None:
            reason = f"{path}:{line}: answer is not text or a list of texts ({record['answer']!r:.60})"
            result.bad_rows.append({"line": line, "reason": reason})
            continue
        questions = question if isinstance(question, list) else [question]
        if positional:
            result.claims[position] = " ".join(q for q in questions if isinstance(q, str))
        found = answer_class(answer)
        label = None if found is None else (Label.TRUE if found == "original" else Label.FALSE)
        explanation = f"MMD-Agent answer: {found or 'X'}\n{answer.strip()}"
        result.add(Row(line=line, id=position, raw_label=found or "X", label=label, explanation=explanation))
    return result


def read_mmdagent(path: str | Path, id_map: str | Path | None = None) -> list[PredictionSet]:
    """The sets of one output file, or of every ``MMFakeBench_*.json`` below a folder (``id_map``: position
    -> id or news_url, or ``position``)."""
    source = Path(path)
    if source.is_file():
        return [_read_file(source, source.stem, id_map)]
    files = sorted(source.rglob(FILES))
    if not files:
        raise ConfigError(f"{source}: no MMD-Agent output ({FILES}) below")
    return [_read_file(file, file.relative_to(source).with_suffix("").as_posix(), id_map) for file in files]


__all__ = ["ANSWERS", "answer_class", "is_mmdagent_file", "looks_like_mmdagent", "read_mmdagent"]
