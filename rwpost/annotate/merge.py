"""Human verdicts -> the dataset: resolve two annotators (or an adjudicator), then override the model.

A record's verdict is *agreed* when its first two annotations give the same answers, *adjudicated*
when the adjudication project answered (that always wins), *disputed* while waiting for adjudication,
and *pending* with fewer than two annotations. Only agreed and adjudicated verdicts change samples:

- image role: necessary -> ``image_required = "yes"``; relevant or irrelevant -> ``"no"``, and the
  sample is dropped, as the paper keeps only claims whose image is necessary (III-C);
- post extraction: incorrect or false positive -> the wrong ``post_url`` is removed; missing and
  correct leave it as it is (a missed link cannot be recovered from the verdict alone).

Each applied verdict also becomes a ``Decision`` (filter ``human_validation``) whose ``details``
name the model filter it overrides (``necessity``, the image-necessity filter), so the split stage
and the dataset card can count it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rwpost.records import Decision, HumanVerdict, Sample, ValidationVerdict

HUMAN_FILTER = "human_validation"
OVERRIDES = "necessity"
"""The model filter whose decision a human image-role verdict replaces (paper III-C)."""


def _answers(v: ValidationVerdict) -> tuple[str | None, str | None]:
    return (v.post_extraction, v.image_role)


def resolve_verdicts(verdicts: Iterable[ValidationVerdict]) -> list[HumanVerdict]:
    """One :class:`HumanVerdict` per record id, sorted by id."""
    by_record: dict[str, list[ValidationVerdict]] = defaultdict(list)
    for v in verdicts:
        by_record[v.id].append(v)
    out = []
    for rid in sorted(by_record):
        group = sorted(by_record[rid], key=lambda v: v.annotation_id)
        adjudications = [v for v in group if v.adjudicated]
        regular = [v for v in group if not v.adjudicated]
        notes = [f"{v.annotator}: {v.note}" for v in group if v.note]
        annotators = [v.annotator for v in group]
        if adjudications:
            final = adjudications[-1]
            status = "adjudicated"
            post, role = _answers(final)
        elif len(regular) < 2:
            status, (post, role) = "pending", (_answers(regular[0]) if regular else (None, None))
        elif _answers(regular[0]) == _answers(regular[1]):
            status, (post, role) = "agreed", _answers(regular[0])
        else:
            status, post, role = "disputed", None, None
        out.append(
            HumanVerdict(
                id=rid,
                status=status,
                post_extraction=post,
                image_role=role,
                annotators=annotators,
                notes=notes,
            )
        )
    return out


def disputed_answers(
    verdicts: Sequence[ValidationVerdict], record_id: str
) -> dict[str, dict[str, str | None]]:
    """What each (non-adjudicating) annotator answered on one record, for the adjudication task."""
    return {
        v.annotator: {"post_extraction": v.post_extraction, "image_role": v.image_role}
        for v in verdicts
        if v.id == record_id and not v.adjudicated
    }


def is_final(verdict: HumanVerdict) -> bool:
    return verdict.status in ("agreed", "adjudicated")


def apply_verdict(sample: Sample, verdict: HumanVerdict) -> Sample:
    """The sample with the human verdict applied (a new object; the input is not changed)."""
    if not is_final(verdict) or verdict.id != sample.id:
        return sample
    update: dict = {}
    if verdict.image_role is not None:
        update["image_required"] = "yes" if verdict.image_role == "necessary" else "no"
    if verdict.post_extraction in ("incorrect", "false_positive"):
        update["post_url"] = None
    extra = dict(sample.extra)
    extra["human_validation"] = verdict.model_dump(mode="json", exclude={"schema_version", "id"})
    update["extra"] = extra
    return sample.model_copy(update=update)


def verdict_decision(verdict: HumanVerdict) -> Decision:
    """The keep/drop decision a final verdict implies, marked as overriding the model's filter."""
    keep = verdict.image_role in (None, "necessary")
    image, post = verdict.image_role or "not judged", verdict.post_extraction or "not judged"
    reason = f"human {verdict.status}: image {image}, post {post}"
    return Decision(
        id=verdict.id,
        filter=HUMAN_FILTER,
        keep=keep,
        reason=reason,
        details={
            "overrides": OVERRIDES,
            "status": verdict.status,
            "image_role": verdict.image_role,
            "post_extraction": verdict.post_extraction,
            "annotators": verdict.annotators,
        },
    )


@dataclass
class MergeResult:
    """Samples after the merge, the decisions applied, and the records still waiting for humans."""

    samples: list[Sample] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    disputed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def merge_verdicts(samples: Iterable[Sample], verdicts: Sequence[HumanVerdict]) -> MergeResult:
    """Apply final verdicts to samples; every sample is returned (dropping is the decisions' job)."""
    by_id = {v.id: v for v in verdicts}
    result = MergeResult()
    counts: dict[str, int] = defaultdict(int)
    for sample in samples:
        verdict = by_id.get(sample.id)
        if verdict is None:
            counts["not_annotated"] += 1
            result.samples.append(sample)
            continue
        counts[verdict.status] += 1
        if is_final(verdict):
            result.samples.append(apply_verdict(sample, verdict))
            decision = verdict_decision(verdict)
            result.decisions.append(decision)
            counts["kept" if decision.keep else "dropped"] += 1
        else:
            (result.disputed if verdict.status == "disputed" else result.pending).append(sample.id)
            result.samples.append(sample)
    result.counts = dict(sorted(counts.items()))
    return result
