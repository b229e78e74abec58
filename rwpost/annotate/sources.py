"""Records to annotate: ``Sample`` JSONL, or the authors' released JSONL (read by ``rwpost_format``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from rwpost.errors import RecordError
from rwpost.io import iter_jsonl
from rwpost.records import Reject, Sample, TaggedArticle
from rwpost.rwpost_format import sample_from_released


def read_samples(path: Path, rejects: list[Reject] | None = None) -> Iterator[Sample]:
    """Samples from a JSONL file of ``Sample`` records or of released records; bad lines go to ``rejects``.

    A line is a ``Sample`` when it carries ``provenance`` (every ``Sample`` does), else a released record.
    Without ``rejects``, the first bad line raises :class:`RecordError` naming the file and line.
    """
    source = str(path)
    for line, row in iter_jsonl(path):
        try:
            if isinstance(row, dict) and "provenance" in row:
                try:
                    yield Sample.model_validate(row)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"])
                    raise RecordError(
                        f"not a Sample: {err['msg']}", source=source, line=line, field=where
                    ) from exc
            else:
                yield sample_from_released(row, source=source, line=line)
        except RecordError as exc:
            if rejects is None:
                raise
            rejects.append(
                Reject(
                    id=exc.record_id, stage="annotate", reason=str(exc), source=source, line=line, data=row
                )
            )


def read_articles(path: Path) -> dict[str, TaggedArticle]:
    """Tagged articles by record id (the article panel of the validation project)."""
    articles = {}
    for line, row in iter_jsonl(path):
        try:
            article = TaggedArticle.model_validate(row)
        except ValidationError as exc:
            raise RecordError(
                f"not a TaggedArticle: {exc.errors()[0]['msg']}", source=str(path), line=line
            ) from exc
        articles[article.id] = article
    return articles
