"""The offline image-necessity rules on the authors' released records (every one judged 'yes').

The released RW-Post records passed the paper's GPT-4o necessity filter (Table S2, only 'yes' kept),
so the share of them the offline rules also answer 'yes' is the rules' recall against GPT-4o; the
records they answer otherwise are listed. There are no 'no' records to measure precision on.

    python -m benchmarks.necessity_rules [--smoke]

Writes ``benchmarks/results/necessity_rules.json``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks import RESULTS, goal, load, no_options, save
from rwpost.filters.necessity import RULES_VERSION, rule_answer
from rwpost.io import iter_jsonl

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released"


def main(argv: list[str] | None = None) -> int:
    smoke = no_options(__doc__, argv).smoke  # already seconds: a smoke run only skips the results file
    before = load()
    answers: Counter[str] = Counter()
    misses = []
    for path in sorted(RELEASED.glob("*.jsonl")):
        for line, obj in iter_jsonl(path):
            answer = rule_answer(obj.get("claim"))
            answers[answer["image_required"]] += 1
            if answer["image_required"] != "yes":
                misses.append({"file": path.name, "line": line, "claim": obj.get("claim"), **answer})
    total = sum(answers.values())
    report = {
        "rules": RULES_VERSION,
        "records": total,
        "answers": dict(answers),
        "recall_vs_gpt4o_yes": round(answers["yes"] / total, 4) if total else None,
        "not_yes": misses,
    }
    print({k: report[k] for k in ("records", "answers", "recall_vs_gpt4o_yes")})
    goal(
        f"the offline rules answer 'yes' on {report['recall_vs_gpt4o_yes']} of {total} released records that "
        "GPT-4o kept (recall against GPT-4o; no target stated)",
        before,
    )
    save(RESULTS / "necessity_rules.json", report, smoke)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
