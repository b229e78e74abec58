"""A run's predictions in AgentFact's own ``output.jsonl`` layout, so the authors' analysis scripts read ours.

One row per sample, as their ``main_workflow.py`` writes it: ``claim_id``, ``post_info`` (the sample as
their loader gives it: ``news_url``, ``claim``, ``label``...), ``context`` and ``final_answer.updated_answer``
with ``validation_result["3-class_authenticity_label"]`` (lower case, as theirs), ``reasoning_logic``,
``key_points`` and ``confidence_level``. Rebuilt from ``predictions.jsonl`` and the (unblinded) samples::

    python -m rwpost.evaluate.detectors.agentfact.layout \
        --run reports/evaluate/agentfact --data DATA --out output.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.evaluate.contract import Prediction
from rwpost.io import write_text
from rwpost.records import Sample


def _split_explanation(text: str | None) -> tuple[str, list[str]]:
    lines = (text or "").splitlines()
    logic = [x for x in lines if not x.startswith("- ")]
    points = [x[2:] for x in lines if x.startswith("- ")]
    return "\n".join(logic).strip(), points


def agentfact_row(index: int, sample: Sample, prediction: Prediction) -> dict[str, Any]:
    """One ``output.jsonl`` row of AgentFact's layout."""
    logic, points = _split_explanation(prediction.explanation)
    label = str(prediction.label).lower() if prediction.label else None
    confidence = None
    if prediction.probabilities and prediction.label in prediction.probabilities:
        confidence = str(round(prediction.probabilities[prediction.label] * 5))
    post = {
        "news_url": sample.news_url,
        "claim": sample.claim,
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else None,
        "post_text": sample.post_text,
        "label": str(sample.label) if sample.label else None,
        "id": sample.id,
    }
    two_class = None if label is None else ("true" if label == "true" else "false")
    return {
        "claim_id": index,
        "post_info": post,
        "context": {"information list with link": [{"link": u} for u in prediction.evidence_urls]},
        "final_answer": {
            "updated_answer": {
                "validation_result": {
                    "2-class_authenticity_label": two_class,
                    "3-class_authenticity_label": label,
                    "reasoning_logic": logic,
                    "key_points": points,
                },
                "confidence_level": confidence,
                "evidence": list(prediction.evidence_urls),
            },
            "tokens_cost": sum(c.tokens_in + c.tokens_out for c in prediction.calls),
            "error": prediction.error,
        },
    }


def agentfact_rows(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[dict[str, Any]]:
    """Rows in sample order, for every sample that has a prediction."""
    by_id = {p.id: p for p in predictions}
    return [agentfact_row(i, s, by_id[s.id]) for i, s in enumerate(samples) if s.id in by_id]


def write_agentfact_output(run_dir: str | Path, samples: Sequence[Sample], out: str | Path) -> int:
    """Write ``out`` from ``<run_dir>/predictions.jsonl`` (first repeat); returns the rows written."""
    from rwpost.evaluate.runner import PREDICTIONS_FILE, read_predictions

    done = read_predictions(Path(run_dir) / PREDICTIONS_FILE)
    predictions = [Prediction.from_row(row) for (repeat, _), row in done.items() if repeat == 0]
    rows = agentfact_rows(samples, predictions)
    write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return len(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run", required=True, help="run folder of rwpost evaluate (holds predictions.jsonl)"
    )
    parser.add_argument(
        "--data", required=True, help="the samples the run evaluated (released JSONL/Parquet)"
    )
    parser.add_argument("--out", required=True, help="output.jsonl to write")
    args = parser.parse_args(argv)
    from rwpost.dataset import read_samples

    n = write_agentfact_output(args.run, list(read_samples(args.data)), args.out)
    print(f"{n} rows in AgentFact's layout -> {args.out}")


if __name__ == "__main__":
    main()
