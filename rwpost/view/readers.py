"""What the view shows of each kind of folder, read through the formats' own readers.

A published version through :mod:`rwpost.dataset` (Parquet rows back to :class:`~rwpost.records.Sample`),
a run through the run log's models (:mod:`rwpost.evaluate.log`) and the blinding of
:func:`rwpost.evaluate.task.blind` (what the detector was shown), a work folder and an annotation export
as the stages wrote them. Each reader opens once, keeps only indexes and the few fields its tables
filter on, and collects one line per file it could not read (:attr:`problems`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from rwpost.errors import RecordError
from rwpost.evaluate.leakage import DROPPED
from rwpost.evaluate.log import METRIC_TITLES, RunManifest, RunMetrics, RunRecord, read_log
from rwpost.io import read_json, read_text
from rwpost.tagged import TAG_RE
from rwpost.view.folders import WORK_PARTS, Source
from rwpost.view.tables import JsonlIndex, SampleIndex, counts, file_problem, read_row, row_sample


def _log_file(path: Path, base: Path, model: type[BaseModel], problems: list[str]) -> dict[str, Any] | None:
    """A run-log file as its model gives it; one that does not fit is read as plain JSON (what is
    readable still shows) with its problem named; a missing or broken one is None."""
    if not path.exists():
        problems.append(f"{path.relative_to(base).as_posix()}: not found")
        return None
    try:
        return read_log(path, model).model_dump(mode="json", exclude_unset=True, fallback=str)
    except RecordError as exc:
        problems.append(file_problem(path, base, RecordError(exc.problem, line=exc.line)))
        try:
            value = read_json(path)
        except RecordError:
            return None
        return value if isinstance(value, dict) else None


def _json(path: Path, base: Path, problems: list[str], *, required: bool = False) -> Any:
    if not path.exists():
        if required:
            problems.append(f"{path.relative_to(base).as_posix()}: not found")
        return None
    try:
        return read_json(path)
    except RecordError as exc:
        problems.append(file_problem(path, base, exc))
        return None


def tagged_segments(text: str) -> list[dict[str, Any]]:
    """Tagged text (:data:`rwpost.tagged.TAG_RE`) as plain runs and link tags, for highlighting."""
    out: list[dict[str, Any]] = []
    last = 0
    for match in TAG_RE.finditer(text):
        if match.start() > last:
            out.append({"text": text[last : match.start()]})
        out.append({"tag": match.group(0), "kind": match.group(1).lower(), "link": int(match.group(2))})
        last = match.end()
    if last < len(text):
        out.append({"text": text[last:]})
    return out


# --- a published version ------------------------------------------------------------------------------


@dataclass
class Version:
    source: Source
    manifest: dict[str, Any] | None
    index: SampleIndex
    problems: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, source: Source) -> Version:
        problems: list[str] = []
        manifest = _json(source.path / "manifest.json", source.path, problems, required=True)
        if manifest is not None and not isinstance(manifest, dict):
            problems.append("manifest.json: not a JSON object")
            manifest = None
        files = sorted(source.path.glob("*/*.parquet"))
        index = SampleIndex.open(files, source.path)
        problems.extend(index.problems)
        if not (source.path / "README.md").exists():
            problems.append("README.md: not found (no dataset card)")
        return cls(source, manifest, index, problems)

    def summary(self) -> dict[str, Any]:
        manifest = self.manifest or {}
        table = self.index.table
        years = pc.value_counts(pc.utf8_slice_codeunits(table.column("claim_time"), 0, 4)).to_pylist()
        return {
            "source": self.source.describe(),
            "name": manifest.get("name"),
            "version": manifest.get("version"),
            "samples": table.num_rows,
            "files": [f.relative_to(self.source.path).as_posix() for f in self.index.files],
            "facets": self.index.facets(),
            "counts": manifest.get("counts"),
            "categories": manifest.get("categories"),
            "funnel": manifest.get("funnel") or [],
            "claim_years": sorted((str(y["values"]), y["counts"]) for y in years if y["values"]),
            "problems": self.problems,
        }

    def page(self, filters: dict[str, str], query: str, start: int, size: int) -> dict[str, Any]:
        total, chosen = self.index.page(filters, query, start, size)
        rows = chosen.drop_columns(["_file", "_row"]).to_pylist()
        return {"total": total, "offset": start, "rows": rows}

    def sample(self, sample_id: str) -> dict[str, Any] | None:
        row = self.index.row(sample_id)
        if row is None:
            return None
        sample, problem = row_sample(row)
        if sample is None:
            return {"id": sample_id, "problems": [f"row of {sample_id}: {problem}"]}
        data = sample.model_dump(mode="json", exclude={"image"})
        image = sample.image
        data["image"] = None if image is None else image.model_dump(mode="json", exclude={"bytes"})
        data["has_image"] = bool(image is not None and image.bytes)
        return data

    def image(self, sample_id: str) -> bytes | None:
        row = self.index.row(sample_id)
        cell = (row or {}).get("image")
        return cell.get("bytes") if isinstance(cell, dict) else None


# --- a work folder --------------------------------------------------------------------------------------

WORK_FILES = {
    "tagged": "tagged/articles.jsonl",
    "extraction": "extract/extractions.jsonl",
    "decisions": "filter/decisions.jsonl",
    "verdicts": "filter/verdicts.jsonl",
    "human": "annotated/decisions.jsonl",
    "disputed": "annotated/disputed.jsonl",
    "crawl": "crawl/articles.jsonl",
}
"""What a sample page reads of a work folder, each file indexed by id when first asked."""
FUNNEL_FILES = ("annotated/funnel.json", "assemble/funnel.json", "filter/funnel.json", "extract/funnel.json")
"""The most complete funnel first: each stage's funnel holds the stages before it."""


def _reject_light(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("id", "stage", "reason", "source", "line")}


@dataclass
class Work:
    source: Source
    problems: list[str] = field(default_factory=list)
    indexes: dict[str, JsonlIndex] = field(default_factory=dict)
    rejects: list[dict[str, Any]] | None = None

    @classmethod
    def open(cls, source: Source) -> Work:
        work = cls(source)
        missing = [p for p in WORK_PARTS if not (source.path / p).is_dir()]
        if missing:
            work.problems.append(f"no {', '.join(missing)} folder(s): those stages have not run here")
        return work

    def _index(self, name: str) -> JsonlIndex | None:
        path = self.source.path / WORK_FILES[name]
        known = self.indexes.get(name)
        if known is not None and known.fresh():
            return known
        if not path.exists():
            return None
        self.indexes[name] = JsonlIndex.open(path, self.source.path)
        return self.indexes[name]

    def all_problems(self) -> list[str]:
        found = list(self.problems)
        for index in self.indexes.values():
            found.extend(index.problems)
        return found

    def funnel(self) -> dict[str, Any]:
        steps, used = [], None
        for name in FUNNEL_FILES:
            value = _json(self.source.path / name, self.source.path, self.problems)
            if isinstance(value, list):
                steps, used = value, name
                break
        rejects = self._rejects()
        return {
            "source": self.source.describe(),
            "funnel_file": used,
            "steps": steps,
            "stages": counts(r["stage"] for r in rejects),
            "reasons": counts(r["reason"] for r in rejects),
            "rejects": len(rejects),
            "problems": self.all_problems(),
        }

    def _rejects(self) -> list[dict[str, Any]]:
        if self.rejects is None:
            rows: list[dict[str, Any]] = []
            for path in sorted(self.source.path.glob("*/rejects.jsonl")):
                index = JsonlIndex.open(path, self.source.path, key="stage", keep=_reject_light)
                self.problems.extend(index.problems)
                for row in index.kept:
                    row["file"] = path.relative_to(self.source.path).as_posix()
                rows.extend(index.kept)
            self.rejects = rows
        return self.rejects

    def reject_page(self, stage: str, reason: str, query: str, start: int, size: int) -> dict[str, Any]:
        rows = [
            r
            for r in self._rejects()
            if (not stage or r["stage"] == stage)
            and (not reason or r["reason"] == reason)
            and (not query or query.lower() in str(r.get("id") or "").lower())
        ]
        return {"total": len(rows), "offset": start, "rows": rows[start : start + size]}

    def sample(self, sample_id: str) -> dict[str, Any]:
        """Everything this work folder holds about one article."""
        out: dict[str, Any] = {"source": self.source.describe()}
        tagged = self._index("tagged")
        article = tagged.first(sample_id) if tagged else None
        if article:
            out["tagged"] = {
                "headline": article.get("headline"),
                "rating": article.get("rating"),
                "news_url": article.get("news_url"),
                "word_count": article.get("word_count"),
                "segments": tagged_segments(str(article.get("text") or "")),
                "links": article.get("links") or [],
            }
        extraction = self._index("extraction")
        if extraction and (record := extraction.first(sample_id)):
            out["extraction"] = {k: record.get(k) for k in ("post", "hallucinated_urls", "provenance")}
        for name in ("decisions", "verdicts", "human", "disputed"):
            index = self._index(name)
            if index is not None:
                out[name] = index.records(sample_id)
        rejects = [r for r in self._rejects() if r.get("id") == sample_id]
        if rejects:
            out["rejects"] = rejects
        crawl = self._index("crawl")
        if crawl and (record := crawl.first(sample_id)):
            out["crawl"] = {
                "images": [i for i in record.get("images") or [] if isinstance(i, dict)],
                "videos": [v for v in record.get("videos") or [] if isinstance(v, dict)],
                "fetched_url": record.get("fetched_url"),
            }
        out["problems"] = self.all_problems()
        return out


# --- an annotation export --------------------------------------------------------------------------


@dataclass
class Annotations:
    source: Source
    verdicts: JsonlIndex

    @classmethod
    def open(cls, source: Source) -> Annotations:
        path = source.path / "validation_verdicts.jsonl"
        return cls(source, JsonlIndex.open(path, source.path))

    def sample(self, sample_id: str) -> list[dict[str, Any]]:
        return self.verdicts.records(sample_id)


# --- an evaluation run ----------------------------------------------------------------------------------


def _confidence(probabilities: Any, label: Any) -> float | None:
    if not isinstance(probabilities, dict) or not probabilities:
        return None
    value = probabilities.get(label) if label in probabilities else max(probabilities.values())
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


LEDGER_FIELDS = ("calls", "tokens_in", "tokens_out", "cost_usd")
SCORED_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("gold", pa.string()),
        ("predicted", pa.string()),
        ("correct", pa.bool_()),
        ("flagged", pa.bool_()),
        ("error", pa.string()),
        ("ledger", pa.struct([(f, pa.float64()) for f in LEDGER_FIELDS])),
    ]
)
"""The fields of ``scored.jsonl`` the run's table shows and filters on."""
PREDICTION_SCHEMA = pa.schema([("id", pa.string()), ("repeat", pa.int64())])
"""What the index of ``predictions.jsonl`` keeps: the answer itself is read by offset, per page."""


def _scored_row(record: dict[str, Any]) -> dict[str, Any]:
    ledger = record.get("ledger") if isinstance(record.get("ledger"), dict) else {}
    return {
        "id": record.get("id"),
        "gold": record.get("gold"),
        "predicted": record.get("predicted"),
        "correct": bool(record.get("correct")),
        "flagged": bool(record.get("flagged")),
        "error": record.get("error"),
        "cost_usd": ledger.get("cost_usd"),
        "tokens": int((ledger.get("tokens_in") or 0) + (ledger.get("tokens_out") or 0)),
        "calls": int(ledger.get("calls") or 0),
    }


def data_file(path: str | None, run: Path) -> Path | None:
    """The data file a run's manifest names: as written (absolute, or from the current folder), else
    from a folder above the run (a run folder moved with its project)."""
    if not path:
        return None
    given = Path(path)
    if given.is_absolute():
        return given if given.is_file() else None
    for base in (Path.cwd(), *run.parents):
        if (base / given).is_file():
            return base / given
    return None


@dataclass
class Run:
    source: Source
    record: dict[str, Any] | None
    manifest: dict[str, Any] | None
    metrics: dict[str, Any] | None
    scored: JsonlIndex | None
    predictions: JsonlIndex | None
    rows: list[dict[str, Any]]
    data: SampleIndex | None
    problems: list[str]

    @classmethod
    def open(cls, source: Source) -> Run:
        base, problems = source.path, []
        record = _log_file(base / "run.json", base, RunRecord, problems)
        manifest = _log_file(base / "manifest.json", base, RunManifest, problems)
        metrics = _log_file(base / "metrics.json", base, RunMetrics, problems)
        scored = predictions = None
        if (base / "scored.jsonl").exists():
            scored = JsonlIndex.open_columns(base / "scored.jsonl", base, SCORED_SCHEMA)
            problems.extend(scored.problems)
        else:
            problems.append("scored.jsonl: not found (the run has not been scored)")
        if (base / "predictions.jsonl").exists():
            predictions = JsonlIndex.open_columns(base / "predictions.jsonl", base, PREDICTION_SCHEMA)
            problems.extend(predictions.problems)
        else:
            problems.append("predictions.jsonl: not found (no answers, explanations or transcripts)")
        data = None
        named = ((manifest or {}).get("data") or {}).get("path")
        file = data_file(named, base)
        if named and file is None:
            problems.append(f"{named} (the run's data, named by manifest.json): not found")
        elif file is not None and file.suffix == ".parquet":
            data = SampleIndex.open([file], file.parent, columns=("id", "category"))
            problems.extend(f"the run's data {p}" for p in data.problems)
        rows = cls._rows(scored, predictions, data)
        return cls(source, record, manifest, metrics, scored, predictions, rows, data, problems)

    @staticmethod
    def _rows(
        scored: JsonlIndex | None, predictions: JsonlIndex | None, data: SampleIndex | None
    ) -> list[dict[str, Any]]:
        category: dict[str, Any] = {}
        if data is not None:
            ids = data.table.column("id").to_pylist()
            category = dict(zip(ids, data.table.column("category").to_pylist(), strict=True))
        rows = [_scored_row(r) for r in scored.kept] if scored else []
        if not rows and predictions:  # not scored yet: the answers alone
            rows = [{"id": p["id"], "predicted": None, "correct": False} for p in predictions.kept]
        for row in rows:
            row["category"] = category.get(row["id"])
        return rows

    def page(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One page of the table, each row with its answer's confidence (read by offset, repeat 0)."""
        out = []
        for row in rows:
            answer = (self.predictions.first(row["id"]) if self.predictions else None) or {}
            out.append(row | {"confidence": _confidence(answer.get("probabilities"), answer.get("label"))})
        return out

    def title(self) -> str:
        m = self.metrics or self.manifest or {}
        return str(m.get("system") or self.source.label)

    def summary(self) -> dict[str, Any]:
        metrics, manifest = self.metrics or {}, self.manifest or {}
        views = metrics.get("views") if isinstance(metrics.get("views"), dict) else {}
        return {
            "source": self.source.describe(),
            "title": self.title(),
            "system": metrics.get("system") or manifest.get("system"),
            "detector": metrics.get("detector") or manifest.get("detector"),
            "setting": metrics.get("setting") or manifest.get("setting"),
            "failures": metrics.get("failures") or manifest.get("failures"),
            "primary_view": metrics.get("primary_view"),
            "metric_titles": METRIC_TITLES,
            "views": views,
            "coverage": metrics.get("coverage"),
            "ledger": {k: v for k, v in (metrics.get("ledger") or {}).items() if k != "by_name"},
            "by_name": (metrics.get("ledger") or {}).get("by_name"),
            "audit": {k: v for k, v in (metrics.get("audit") or {}).items() if not k.startswith("views")},
            "explanations": metrics.get("explanations"),
            "data": manifest.get("data"),
            "leakage": manifest.get("leakage"),
            "notes": manifest.get("notes") or [],
            "started": manifest.get("started"),
            "finished": manifest.get("finished"),
            "facets": {
                "gold": counts(r.get("gold") for r in self.rows),
                "predicted": counts(r.get("predicted") for r in self.rows),
                "category": counts(r.get("category") for r in self.rows),
                "error": counts(r.get("error") for r in self.rows if r.get("error")),
            },
            "samples": len(self.rows),
            "problems": self.problems,
        }

    def select(self, filters: dict[str, str], query: str = "") -> list[dict[str, Any]]:
        rows = self.rows
        for name in ("gold", "predicted", "category"):
            if filters.get(name):
                rows = [r for r in rows if str(r.get(name)) == filters[name]]
        outcome = filters.get("outcome")
        if outcome == "right":
            rows = [r for r in rows if r.get("correct")]
        elif outcome == "wrong":
            rows = [r for r in rows if not r.get("correct")]
        elif outcome == "failed":
            rows = [r for r in rows if r.get("error")]
        if filters.get("error"):
            rows = [r for r in rows if r.get("error") == filters["error"]]
        if query:
            rows = [r for r in rows if query.lower() in str(r.get("id")).lower()]
        return rows

    def sample(self, sample_id: str) -> dict[str, Any] | None:
        scored = self.scored.first(sample_id) if self.scored else None
        answers = self.predictions.records(sample_id) if self.predictions else []
        if scored is None and not answers:
            return None
        repeats = []
        for answer in answers:
            calls = [c for c in answer.get("calls") or [] if isinstance(c, dict)]
            for number, call in enumerate(calls, start=1):
                call["step"] = number
                name = str(call.get("name") or "")
                if name.startswith(DROPPED):
                    call["dropped"] = name.removeprefix(DROPPED)
            repeats.append(
                {
                    "repeat": answer.get("repeat", 0),
                    "label": answer.get("label"),
                    "probabilities": answer.get("probabilities"),
                    "explanation": answer.get("explanation"),
                    "evidence_urls": answer.get("evidence_urls") or [],
                    "error": answer.get("error"),
                    "wall_s": answer.get("wall_s"),
                    "calls": calls,
                    "dropped": sum(1 for c in calls if "dropped" in c),
                }
            )
        out: dict[str, Any] = {
            "id": sample_id,
            "run": self.source.describe(),
            "title": self.title(),
            "setting": (self.manifest or {}).get("setting"),
            "scored": scored,
            "answers": repeats,
        }
        out.update(self.blinded(sample_id))
        return out

    def blinded(self, sample_id: str) -> dict[str, Any]:
        """What the detector was shown: the run's data row blinded for the run's cell."""
        from rwpost.evaluate.task import blind

        setting = (self.manifest or {}).get("setting")
        if self.data is None or not setting:
            return {"blinded_problem": "the run's data file or setting is not readable: input not shown"}
        where = self.data.locate(sample_id)
        if where is None:
            return {"blinded_problem": f"{sample_id} is not in the run's data file"}
        sample, problem = row_sample(read_row(*where))
        if sample is None:
            return {"blinded_problem": f"the data row of {sample_id}: {problem}"}
        shown = blind(sample, setting)
        data = shown.model_dump(mode="json", exclude={"image", "provenance", "schema_version", "extra"})
        data = {k: v for k, v in data.items() if v not in (None, [], {})}
        has_image = bool(shown.image is not None and shown.image.bytes)
        return {"blinded": data, "blinded_image": has_image}

    def image(self, sample_id: str) -> bytes | None:
        setting = str((self.manifest or {}).get("setting") or "")
        if self.data is None or "I" not in setting.split("+"):
            return None  # the detector was shown no image
        row = self.data.row(sample_id)
        cell = (row or {}).get("image")
        return cell.get("bytes") if isinstance(cell, dict) else None


def compare(a: Run, b: Run, only: str, start: int, size: int) -> dict[str, Any]:
    """Two runs paired on their common samples: the 2x2 of right and wrong, and the rows where the two
    differ (``only``: ``disagree`` the answers differ, ``one-right`` exactly one is right, or all)."""
    right_b = {r["id"]: r for r in b.rows}
    pairs = [(r, right_b[r["id"]]) for r in a.rows if r["id"] in right_b]
    paired = len(pairs)
    table = {"both right": 0, "only A right": 0, "only B right": 0, "both wrong": 0}
    for x, y in pairs:
        key = (
            "both right"
            if x["correct"] and y["correct"]
            else "only A right"
            if x["correct"]
            else "only B right"
            if y["correct"]
            else "both wrong"
        )
        table[key] += 1
    if only == "disagree":
        pairs = [(x, y) for x, y in pairs if x.get("predicted") != y.get("predicted")]
    elif only == "one-right":
        pairs = [(x, y) for x, y in pairs if x["correct"] != y["correct"]]
    total = len(pairs)
    rows = [
        {
            "id": x["id"],
            "gold": x.get("gold"),
            "category": x.get("category") or y.get("category"),
            "a": x.get("predicted"),
            "a_correct": x["correct"],
            "b": y.get("predicted"),
            "b_correct": y["correct"],
        }
        for x, y in pairs[start : start + size]
    ]
    return {
        "a": {"source": a.source.describe(), "title": a.title(), "problems": a.problems},
        "b": {"source": b.source.describe(), "title": b.title(), "problems": b.problems},
        "paired": paired,
        "only_in_a": len(a.rows) - paired,
        "table": table,
        "total": total,
        "offset": start,
        "rows": rows,
    }


# --- a leaderboard ------------------------------------------------------------------------------------


def leaderboard(source: Source) -> dict[str, Any]:
    problems: list[str] = []
    rows = _json(source.path / "leaderboard.json", source.path, problems, required=True)
    if rows is not None and not isinstance(rows, list):
        problems.append("leaderboard.json: not a list of rows")
        rows = None
    paper = _json(source.path / "paper.json", source.path, problems)
    markdown = None
    if (source.path / "leaderboard.md").exists():
        try:
            markdown = read_text(source.path / "leaderboard.md")
        except RecordError as exc:
            problems.append(file_problem(source.path / "leaderboard.md", source.path, exc))
    figures = sorted(p.name for p in source.path.glob("*.png"))
    return {
        "source": source.describe(),
        "rows": [r for r in rows or [] if isinstance(r, dict)],
        "paper": paper,
        "markdown": markdown,
        "figures": figures,
        "metric_titles": METRIC_TITLES,
        "problems": problems,
    }
