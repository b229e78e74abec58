"""How long the annotation statistics take at dataset scale (generated verdicts, not real annotations).

Validation agreement over 13,000 records x 2 annotators (about the size of Snopes, ARCHITECTURE.md),
and the Table IV explanation report over 40 instances x 3 outputs x 3 annotators with 10,000 bootstrap
resamples (paper V-D). No target is stated for either; ``--smoke`` runs 500 records and 200
resamples. Writes ``benchmarks/results/annotate_stats.json``.
"""

from __future__ import annotations

import platform
import random
import time

from benchmarks import RESULTS, goal, load, no_options, save
from rwpost.annotate.agreement import cohen_kappa, validation_agreement
from rwpost.annotate.explanations import explanation_report
from rwpost.records import ExplanationScore, ValidationVerdict


def _verdicts(records: int, rng: random.Random) -> list[ValidationVerdict]:
    posts, roles = (
        ["correct", "missing", "incorrect", "false_positive"],
        ["necessary", "relevant", "irrelevant"],
    )
    out = []
    for i in range(records):
        post, role = rng.choice(posts), rng.choice(roles)
        for k, who in enumerate(("a", "b")):
            agree = rng.random() < 0.85
            out.append(
                ValidationVerdict(
                    id=f"rw-{i:016x}",
                    annotator=who,
                    post_extraction=post if agree else rng.choice(posts),
                    image_role=role if agree else rng.choice(roles),
                    project="validation",
                    task_id=i,
                    annotation_id=2 * i + k,
                )
            )
    return out


def _scores(instances: int, rng: random.Random) -> list[ExplanationScore]:
    out = []
    for i in range(instances):
        for slot, source in enumerate(("gold", "agentfact", "lemma"), start=1):
            for k, who in enumerate(("a", "b", "c")):
                base = {"gold": 0, "agentfact": 0, "lemma": 1}[source]
                s = [min(2, base + (rng.random() < 0.3)) for _ in range(3)]
                out.append(
                    ExplanationScore(
                        id=f"rw-{i:016x}",
                        annotator=who,
                        slot=slot,
                        source=source,
                        reasoning_hallucination=s[0],
                        evidence_hallucination=s[1],
                        label_justification=s[2],
                        task_id=i,
                        annotation_id=9 * i + 3 * slot + k,
                    )
                )
    return out


def main(argv: list[str] | None = None) -> None:
    smoke = no_options(__doc__, argv).smoke
    records, instances, resamples = (500, 5, 200) if smoke else (13_000, 40, 10_000)
    rng = random.Random(0)
    verdicts, scores = _verdicts(records, rng), _scores(instances, rng)
    cohen_kappa(["a", "b"], ["a", "a"])  # import scikit-learn outside the timing (several seconds)
    before = load()
    started = time.perf_counter()
    validation_agreement(verdicts)
    agreement_s = time.perf_counter() - started
    started = time.perf_counter()
    explanation_report(scores, compare=("agentfact", "lemma"), resamples=resamples)
    report_s = time.perf_counter() - started
    result = {
        "validation_agreement": {
            "records": records,
            "annotations": len(verdicts),
            "seconds": round(agreement_s, 3),
        },
        "explanation_report": {
            "instances": instances,
            "scores": len(scores),
            "resamples": resamples,
            "seconds": round(report_s, 3),
        },
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "load_before": before,
        "load_after": load(),
    }
    print(result)
    goal(
        f"no target stated; validation agreement over {records:,} records {agreement_s:.3f} s, explanation "
        f"report with {resamples:,} resamples {report_s:.3f} s",
        before,
    )
    save(RESULTS / "annotate_stats.json", result, smoke)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
