"""Records to annotate: ``Sample`` JSONL, or the authors' released JSONL (read by ``rwpost_format``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from rwpost.errors import RecordError
from rwpost.io import iter_jsonl, read_records, reject_data, validation_problem
from rwpost.records import Reject, Sample, TaggedArticle
from rwpost.rwpost_format import sample_from_released


def read_annotation_samples(path: Path, rejects: list[Reject] | None = None) -> Iterator[Sample]:
    """Samples from a JSONL file of ``Sample`` records or of released records; bad lines go to ``rejects``,
    and so does a record whose id an earlier line already had (the first is kept).

    A line is a ``Sample`` when it carries ``provenance`` (every ``Sample`` does), else a released record
    (:func:`rwpost.rwpost_format.sample_from_released`). Without ``rejects``, the first bad line raises
    :class:`RecordError` naming the file and line. (:func:`rwpost.dataset.read_samples` reads published
    splits and whole files of one kind, with no rejects.)
    """
    source = str(path)

    def bad_line(error: RecordError, raw: bytes) -> None:
        data = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        rejects.append(Reject(stage="annotate", reason=str(error), source=source, line=error.line, data=data))  # type: ignore[union-attr]

    first_line: dict[str, int] = {}  # id -> the line it was first read on
    for line, row in iter_jsonl(path, on_error=None if rejects is None else bad_line):
        try:
            if isinstance(row, dict) and "provenance" in row:
                sample = _sample(row, source, line)
            else:
                sample = sample_from_released(row, source=source, line=line)
            if sample.id in first_line:  # one verdict, one task, one sample per id: the first is kept
                problem = f"duplicate id (first on line {first_line[sample.id]})"
                raise RecordError(problem, source=source, line=line, record_id=sample.id, field="id")
            first_line[sample.id] = line
            yield sample
        except RecordError as exc:
            if rejects is None:
                raise
            rejects.append(
                Reject(
                    id=exc.record_id,
                    stage="annotate",
                    reason=str(exc),
                    source=source,
                    line=line,
                    data=reject_data(row),
                )
            )


def _sample(row: dict, source: str, line: int) -> Sample:
    try:
        return Sample.model_validate(row)
    except ValidationError as exc:
        message, where = validation_problem(exc)
        raise RecordError(f"not a Sample: {message}", source=source, line=line, field=where) from exc


def read_articles(path: Path) -> dict[str, TaggedArticle]:
    """Tagged articles by record id (the article panel of the validation project)."""
    return {article.id: article for article in read_records(path, TaggedArticle)}
