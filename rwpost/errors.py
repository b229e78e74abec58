"""One exception family for rwpost: every message names the record or file and what is wrong."""

from __future__ import annotations


class RwpostError(Exception):
    """Base class of every error rwpost raises on purpose; the CLI prints it as one line."""

    exit_code = 1


class ConfigError(RwpostError):
    """A parameter, path or environment setting is missing or invalid."""

    exit_code = 2


class RecordError(RwpostError):
    """One input record is malformed: names where it is, which field, what was expected and found."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        record_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.record_id = record_id
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.source:
            where.append(f"{self.source}:{self.line}" if self.line is not None else self.source)
        if self.record_id:
            where.append(f"record {self.record_id}")
        if self.field:
            where.append(f"field {self.field!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def as_reject(self) -> dict[str, object]:
        """The fields a rejects file stores for this error."""
        return {
            "source": self.source,
            "line": self.line,
            "record_id": self.record_id,
            "field": self.field,
            "reason": self.problem,
        }


class UnknownRatingError(RwpostError):
    """A Snopes rating that the label table does not know: reported, never guessed."""
