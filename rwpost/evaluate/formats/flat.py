"""Score any external system (AgentFact, DEFAME, T2Agent...) from a file of its predictions.

The flat format: a JSONL file (one JSON object a line) or a CSV file with a header (``.csv``), one row
per sample, with the fields of :data:`FLAT_FIELDS` (the README's "Scoring another system's predictions
file" lists the same); any other field is ignored. Nothing is silently dropped: rows with unknown ids or
labels, duplicate ids (the first row is used) and samples with no row are all listed in
:meth:`PredictionsFileDetector.check`'s report (``input_report.json``); a line that does not read is a bad
row, counted with its reason; a sample with no usable row gets a prediction with no label (scored under
the run's failure policy, with the reason).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rwpost.errors import RecordError, RwpostError
from rwpost.evaluate.contract import Capabilities, Detector, DetectorInputs, Prediction, RunContext
from rwpost.evaluate.formats.common import Row, iter_csv_rows, iter_json_rows, parse_label
from rwpost.evaluate.task import EvalTask
from rwpost.ids import record_id
from rwpost.io import decode_json
from rwpost.labels import Label
from rwpost.records import Sample

FLAT_FIELDS: dict[str, str] = {
    "id": "the sample's id (`rw-` and 16 hex digits, as in the data); required unless `news_url` is given",
    "news_url": "the fact-check article's URL, from which the id is computed (the scheme, `www.`, the host's "
    "letter case, the query and a missing trailing slash do not change it); read when `id` is absent",
    "label": "the answer: True, False, Unproven, Mixture or Outdated in any letter case; another word is an "
    "unknown label (reported, the sample unanswered), or with `--data labels:FILE` an answer in that "
    "file's own labels",
    "probabilities": "optional: a JSON object label -> probability (in CSV, JSON text); scored (ROC-AUC, "
    "ECE) only when each is in [0, 1] and they sum to 1 within 0.001, else counted as invalid",
    "prob_<Label>": "optional: one field (a CSV column) per label, `prob_True`, `prob_False`..., read when "
    "`probabilities` is absent",
    "explanation": "optional: the system's explanation text (key-point coverage, the paired explanations "
    "file)",
    "evidence_urls": "optional: the URLs the answer cites, a JSON list (in CSV, JSON text or URLs "
    "separated by spaces or `;`); scored against the gold evidence URLs and audited for blocked "
    "fact-check domains (scheme, `www.`, host case and trailing slashes ignored; text that is not a URL, "
    "such as `[1]`, matches no gold URL)",
}
"""The flat format's fields: name -> what it holds (documented in the README from this table)."""


def _json_text(text: str, where: str, name: str) -> Any:
    """A field that holds JSON as text (a CSV cell); not JSON is a ValueError naming the row and field."""
    try:
        return decode_json(text, where)
    except RecordError as exc:  # not JSON, or nested too deeply
        raise ValueError(f"{where}: {name}: {exc.problem}") from None


def _urls(value: Any, where: str) -> list[str]:
    if value in (None, ""):
        return []
    text = value if isinstance(value, list) else str(value).strip()
    if isinstance(text, str) and text.startswith("["):
        text = _json_text(text, where, "evidence_urls")
    if isinstance(text, list):
        return [str(u) for u in text if u]
    return [u for u in text.replace(";", " ").split() if u]


def _probabilities(data: dict[str, Any], where: str) -> dict[Label, float] | None:
    raw = data.get("probabilities")
    if isinstance(raw, str) and raw.strip():
        raw = _json_text(raw, where, "probabilities")
    if not raw:
        raw = {k[len("prob_") :]: v for k, v in data.items() if k.startswith("prob_") and v not in (None, "")}
    if not raw:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: probabilities must map label -> probability, found {type(raw).__name__}")
    out = {}
    for name, p in raw.items():
        label = parse_label(name)
        if label is None:
            raise ValueError(f"{where}: unknown label {name!r} in probabilities")
        try:
            out[label] = float(p)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: probabilities[{name!r}] is not a number ({p!r})") from None
    return out


def _row(data: dict[str, Any], line: int, source: str) -> Row:
    where = f"{source}:{line}"
    rid = (data.get("id") or "").strip() if isinstance(data.get("id"), str) else data.get("id")
    news_url = None
    if not rid and data.get("news_url"):
        news_url = str(data["news_url"])
        rid = record_id(news_url)
    if not rid:
        raise ValueError(f"{where}: row has neither 'id' nor 'news_url'")
    explanation = data.get("explanation")
    return Row(
        line=line,
        id=str(rid),
        raw_label=data.get("label"),
        label=parse_label(data.get("label")),
        probabilities=_probabilities(data, where),
        explanation=str(explanation) if explanation not in (None, "") else None,
        evidence_urls=_urls(data.get("evidence_urls"), where),
        news_url=news_url,
    )


def read_prediction_rows(path: str | Path) -> tuple[list[Row], list[dict[str, Any]]]:
    """Every row of a JSONL or CSV predictions file, and the rows that could not be read (with why)."""
    source = str(path)
    if not Path(path).exists():
        raise RecordError("predictions file not found", source=source)
    if Path(path).suffix.lower() == ".csv":
        items = list(iter_csv_rows(Path(path)))
    else:
        items = list(iter_json_rows(Path(path)))  # a line that is not JSON is a bad row, not the file
    rows, bad = [], []
    for line, data, problem in items:
        try:
            if problem:
                raise ValueError(problem)
            if not isinstance(data, dict):
                raise ValueError(f"{source}:{line}: expected an object, found {type(data).__name__}")
            rows.append(_row(data, line, source))
        except (ValueError, TypeError, json.JSONDecodeError) as exc:
            bad.append({"line": line, "reason": str(exc)})
    if not rows:
        first = f": {bad[0]['reason']}" if bad else ""
        raise RecordError(f"no row could be read ({len(bad)} rows){first}", source=source)
    return rows, bad


def _answer_head(row: Row) -> str | None:
    """A row's explanation; a label that is no RW-Post label goes on its first line (``Answer: Supported``),
    the row's answer in a benchmark's own labels (``--data labels:FILE``; rwpost.evaluate.datasets.spaces)."""
    raw = str(row.raw_label).strip() if isinstance(row.raw_label, str | int) else ""
    if row.label is not None or not raw or "\n" in raw:
        return row.explanation
    return f"Answer: {raw}" + (f"\n{row.explanation}" if row.explanation else "")


class PredictionsFileDetector(Detector):
    """A detector that reads its answers from a file (or an output folder) instead of computing them.

    ``format`` names the file's format (:mod:`rwpost.evaluate.formats`; detected when None); a folder
    holding several systems or settings needs ``select`` (one set's name). Failures the system recorded
    are predictions with no label and the system's reason. With ``strict=True`` any problem in the file
    (bad row, unknown id or label, duplicate, missing sample) is an error; otherwise the problems are
    reported and the run goes on.
    """

    name = "predictions"
    # the file holds whatever the system did, retrieval included; its answers are the same every repeat
    capabilities = Capabilities(retrieves=True, deterministic=True)

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")

        path: Path
        """The predictions file, or an output folder of another system."""
        strict: bool = False
        system: str | None = None
        format: str | None = None
        """One of :data:`rwpost.evaluate.formats.FORMATS`; None: detected."""
        select: str | None = None
        """The prediction set of a folder holding several."""
        id_field: str | None = None
        label_field: str | None = None
        label_map: str | dict[str, str] | None = None
        id_map: str | None = None

    def __init__(self, config: Config) -> None:
        from rwpost.evaluate.formats import detect_format, read_sets

        super().__init__(config)
        self.path = Path(config.path)
        self.strict = config.strict
        self.system = config.system or self.path.stem
        self.reader_options = config.model_dump(
            include={"id_field", "label_field", "label_map", "id_map"}, exclude_none=True
        )
        generic = bool(config.id_field or config.label_field or config.label_map)
        self.format = config.format or detect_format(self.path, generic=generic)
        select = config.select
        self.select, self.failures, self.unknown_label_counts = select, {}, {}
        self.failure_rows = 0
        self.files = [str(self.path)]  # the files read (those of the chosen set in a folder)
        self.by_position, self.claims, self.claims_checked = False, {}, True
        if self.format == "flat":
            self.rows, self.bad_rows = read_prediction_rows(self.path)
        else:
            sets = read_sets(self.path, self.format, **self.reader_options)
            names = [s.name for s in sets]
            if select is None and len(sets) > 1:
                raise RwpostError(f"{self.path} holds {len(sets)} prediction sets; select one of {names}")
            chosen = sets[0] if select is None else next((s for s in sets if s.name == select), None)
            if chosen is None:
                raise RwpostError(f"{self.path}: no prediction set {select!r}; found {names}")
            self.select, self.rows = chosen.name, [*chosen.rows.values(), *chosen.duplicates]
            self.bad_rows, self.failure_rows = chosen.bad_rows, chosen.failed_rows
            self.files = chosen.files or [chosen.source]
            self.failures, self.by_position = dict(chosen.failures), chosen.by_position
            self.claims, self.claims_checked = chosen.claims, chosen.claims_checked
            self.unknown_label_counts = dict(chosen.unknown_labels)
        self._first: dict[str, Row] = {}
        for row in self.rows:
            self._first.setdefault(row.id, row)

    def config(self) -> dict[str, Any]:
        config = {"path": str(self.path), "sha256": self._sha256, "system": self.system}
        if self.format != "flat":
            config.update(format=self.format, select=self.select, **self.reader_options)
        return config

    def inputs(self) -> DetectorInputs:
        files = tuple(dict.fromkeys([str(self.path), *self.files]))
        return DetectorInputs(files=files, sha256=self._sha256)

    @property
    def _sha256(self) -> str:
        from rwpost.evaluate.formats import content_sha256

        return content_sha256(self.path)

    def _resolve_positions(self, samples: Sequence[Sample]) -> None:
        """Rows keyed by position in the evaluated data (DEFAME without an id map) -> sample ids."""
        if not self.by_position:
            return
        from rwpost.evaluate.formats.defame import join_positions

        by_index = join_positions(self.claims, samples, self.files[0], checked=self.claims_checked)
        for row in self.rows:
            row.id = by_index.get(row.id, f"position {row.id}")
        self.failures = {by_index.get(k, f"position {k}"): v for k, v in self.failures.items()}
        self._first = {}
        for row in self.rows:
            self._first.setdefault(row.id, row)
        self.by_position = False

    def check(self, samples: Sequence[Sample]) -> dict[str, Any]:
        """Problems of the file against the evaluated samples; raises in strict mode if there are any."""
        self._resolve_positions(samples)
        wanted = {s.id for s in samples}
        lines: dict[str, list[Row]] = {}
        for row in self.rows:
            lines.setdefault(row.id, []).append(row)
        duplicates = [
            {
                "id": rid,
                "lines": [r.line for r in rs],
                "labels": [r.raw_label for r in rs],
                "conflicting": len({r.raw_label for r in rs}) > 1,
                "used_line": rs[0].line,
            }
            for rid, rs in lines.items()
            if len(rs) > 1
        ]
        report = {
            "path": str(self.path),
            "rows": len(self.rows) + len(self.bad_rows) + self.failure_rows,
            "failure_rows": self.failure_rows,
            "bad_rows": self.bad_rows,
            "unknown_ids": [
                {"line": r.line, "id": r.id, **({"news_url": r.news_url} if r.news_url else {})}
                for r in self.rows
                if r.id not in wanted
            ],
            "missing_ids": sorted(wanted - set(lines) - set(self.failures)),
            "failures": [{"id": k, "reason": v} for k, v in sorted(self.failures.items()) if k in wanted],
            "duplicate_ids": duplicates,
            "unknown_labels": [
                {"line": r.line, "id": r.id, "label": r.raw_label} for r in self.rows if r.label is None
            ],
        }
        problems = {k: len(v) for k, v in report.items() if isinstance(v, list) and v}
        report["format"] = self.format
        report["unknown_label_counts"] = self.unknown_label_counts or dict(
            Counter(str(r.raw_label) for r in self.rows if r.label is None)
        )
        report["problems"] = problems
        if self.strict and problems:
            summary = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in problems.items())
            files = ", ".join(self.files)
            raise RwpostError(f"{files}: {summary} (see the report, or drop --strict to score anyway)")
        return report

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        if self.by_position:
            raise RwpostError(f"{self.path}: rows are keyed by position: call check(samples) before predict")
        out = []
        for s in samples:
            row = self._first.get(s.id)
            if row is None and s.id in self.failures:
                out.append(Prediction(id=s.id, error=f"system failure: {self.failures[s.id]}"))
                continue
            if row is None:
                out.append(Prediction(id=s.id, error=f"no row in the predictions file ({self.path})"))
                continue
            error = None if row.label else f"unknown label ({row.raw_label!r}, {self.path}:{row.line})"
            out.append(
                Prediction(
                    id=s.id,
                    label=row.label,
                    probabilities=row.probabilities,
                    explanation=_answer_head(row),
                    evidence_urls=row.evidence_urls,
                    error=error,
                )
            )
        return out
