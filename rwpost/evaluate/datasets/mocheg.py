"""Mocheg (Yao et al., SIGIR 2023) from its released layout: Snopes claims with gold text evidence.

The release (``VT-NLP/Mocheg``; its loaders ``util/read_example.py`` and ``verification/util/data_util.py``,
and DEFAME's ``defame/eval/mocheg/benchmark.py``) is one folder per split, ``FOLDER/{train,val,test}/``,
each holding ``Corpus2.csv`` (one row per evidence paragraph of a claim), ``Corpus3.csv`` (the linked
documents) and ``images/`` (``<claim_id>-proof-<n>.jpg``: images of the fact-check article, and
``<claim_id>-<document>-...`` of linked documents). ``Corpus2.csv``'s columns
are the record fields read (``Snopes URL``: the sample's news URL)::

    claim_id, Snopes URL, Claim, cleaned_truthfulness, Evidence, ruling_outline

``cleaned_truthfulness`` is ``supported``, ``refuted`` or ``NEI`` (any case, as DEFAME reads it). The rows
of one claim id become one sample: the claim, its label (supported -> True, refuted -> False, NEI ->
Unproven: Table III's three "Fact-Check" classes), and each non-empty ``Evidence`` paragraph (``<p>`` tags
dropped, as the authors' loader does) as a gold evidence item, shown only in gold-evidence cells. The
ruling outline (Snopes' conclusion) is the sample's rationale (``reasoning_logic``: never shown). Rows of
one claim that disagree on the claim or the label are an error. ``--data mocheg:FOLDER`` also takes a
split folder itself (one holding ``Corpus2.csv``).

Mocheg has no post image: the paper ran it as "a purely textual input setting because the post image
context is not provided" (section V-C2). The ``images/`` folder holds the fact-check article's images
(evidence, and a leak of the verdict's source), so samples carry no image. DEFAME drops claims whose
``ruling_outline`` is empty; this adapter keeps them (``extra["ruling_outline_missing"]``). A bad row is one
:class:`~rwpost.errors.RecordError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from rwpost.errors import ConfigError, RecordError
from rwpost.evaluate.datasets.spaces import LabelSpace
from rwpost.io import csv_field_limit, read_text
from rwpost.labels import Label
from rwpost.records import Evidence, Provenance, Sample

LABELS: dict[str, Label] = {"supported": Label.TRUE, "refuted": Label.FALSE, "nei": Label.UNPROVEN}
"""``cleaned_truthfulness`` (lower case) -> the runner's label."""

SPACE = LabelSpace(
    name="mocheg",
    description="Mocheg's cleaned_truthfulness (supported, refuted, NEI), every claim",
    classes=("supported", "refuted", "NEI"),
    from_label={Label.TRUE: "supported", Label.FALSE: "refuted", Label.UNPROVEN: "NEI"},
)
"""Mocheg's label space (its three classes, matched in any letter case as DEFAME reads them)."""

COLUMNS = ("claim_id", "Claim", "cleaned_truthfulness", "Evidence")
"""The columns a sample needs (``Evidence``: the gold paragraphs, without which the gold-evidence cells would
silently have none); ``Snopes URL`` and ``ruling_outline`` are read when present."""


def media_root(root: str | Path, split: str = "test") -> Path:
    """The split folder (its ``images/`` are the article's, which samples do not use)."""
    return split_file(root, split).parent


def split_file(root: str | Path, split: str = "test") -> Path:
    """``<root>/<split>/Corpus2.csv``, or ``<root>/Corpus2.csv`` when ``root`` is a split folder."""
    root = Path(root)
    for path in (root / split / "Corpus2.csv", root / "Corpus2.csv"):
        if path.is_file():
            return path
    raise ConfigError(f"{root / split / 'Corpus2.csv'}: not found; give the Mocheg folder holding {split}/")


def _rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """``(line, row)`` for each CSV record, the line it starts on (quoted fields span lines)."""
    with csv_field_limit(1 << 28):  # linked documents run long; the process's limit is given back after
        return list(_read_rows(path))


def _read_rows(path: Path):
    with io.StringIO(read_text(path), newline="") as handle:  # not UTF-8: one error naming file and line
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise RecordError("empty file: expected a header row", source=str(path), line=1) from None
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            why = (
                " (Mocheg's gold evidence paragraphs: is this Corpus2.csv?)"
                if missing[0] == "Evidence"
                else ""
            )
            raise RecordError(f"no column {missing[0]!r} in the header{why}", source=str(path), line=1)
        while True:
            line = reader.line_num + 1
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise RecordError(f"not CSV ({exc})", source=str(path), line=line) from None
            if not values:
                continue
            if len(values) != len(header):
                raise RecordError(
                    f"expected {len(header)} fields, found {len(values)}", source=str(path), line=line
                )
            yield line, dict(zip(header, values, strict=True))


def read_mocheg(root: str | Path, split: str = "test") -> list[Sample]:
    """The split's claims as samples, in the order of their first row."""
    path = split_file(root, split)
    claims: dict[str, dict] = {}
    for line, row in _rows(path):

        def bad(problem: str, field: str, line: int = line) -> RecordError:
            return RecordError(problem, source=str(path), line=line, field=field)

        claim_id = row["claim_id"].strip()
        if not claim_id:
            raise bad("expected a claim id, found ''", "claim_id")
        claim, truth = row["Claim"].strip(), row["cleaned_truthfulness"].strip()
        if not claim:
            raise bad("expected text, found ''", "Claim")
        if truth.lower() not in LABELS:
            raise bad(f"expected supported, refuted or NEI, found {truth!r}", "cleaned_truthfulness")
        seen = claims.setdefault(
            claim_id,
            {"line": line, "claim": claim, "truth": truth, "evidence": [], "row": row},
        )
        if seen["claim"] != claim:
            raise bad(f"claim {claim_id} has another text on line {seen['line']}", "Claim")
        if seen["truth"].lower() != truth.lower():
            raise bad(f"claim {claim_id} is {seen['truth']!r} on line {seen['line']}", "cleaned_truthfulness")
        evidence = row.get("Evidence", "").replace("<p>", "").replace("</p>", "").strip()
        if evidence and evidence not in seen["evidence"]:
            seen["evidence"].append(evidence)
    return [_sample(claim_id, seen, path, split) for claim_id, seen in claims.items()]


def _sample(claim_id: str, seen: dict, path: Path, split: str) -> Sample:
    row = seen["row"]
    outline = (row.get("ruling_outline") or "").strip()
    url = (row.get("Snopes URL") or "").strip()
    return Sample(
        id=f"mocheg-{split}-{claim_id}",
        claim=seen["claim"],
        label=LABELS[seen["truth"].lower()],
        label_original=seen["truth"],
        news_url=url or f"urn:mocheg:{split}:{claim_id}",
        reasoning_logic=outline or None,
        evidence=[
            Evidence(id=i, type="Text", content=text, source="Snopes")
            for i, text in enumerate(seen["evidence"], start=1)
        ],
        provenance=Provenance(backend="released", source=f"{path.name}:{seen['line']}"),
        extra={"claim_id": claim_id, "cleaned_truthfulness": seen["truth"]}
        | ({"ruling_outline_missing": True} if not outline else {}),
    )


__all__ = ["LABELS", "media_root", "read_mocheg", "split_file"]
