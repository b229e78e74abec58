"""The offline image-necessity rules on the authors' released records (every one judged 'yes').

The released RW-Post records passed the paper's GPT-4o necessity filter (Table S2, only 'yes' kept),
so the share of them the offline rules also answer 'yes' is the rules' recall against GPT-4o; the
records they answer otherwise are listed. There are no 'no' records to measure precision on.

    python -m benchmarks.necessity_rules

Writes ``benchmarks/results/necessity_rules.json``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks import no_options
from rwpost.filters.necessity import RULES_VERSION, rule_answer
from rwpost.io import iter_jsonl, write_json

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released"


def main(argv: list[str] | None = None) -> int:
    no_options(__doc__, argv)
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
    write_json(ROOT / "benchmarks" / "results" / "necessity_rules.json", report)
    print({k: report[k] for k in ("records", "answers", "recall_vs_gpt4o_yes")})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
