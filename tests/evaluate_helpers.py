"""Generated samples for evaluation tests (made up here, not real data: claims are placeholders)."""

from __future__ import annotations

from datetime import date

import numpy as np
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from rwpost.evaluate.metrics import NO_ANSWER
from rwpost.ids import record_id
from rwpost.labels import Label
from rwpost.records import Evidence, Provenance, Sample


def make_sample(n: int, label: Label | str | None, **fields) -> Sample:
    """A generated sample with a stable id; ``fields`` override anything."""
    url = f"https://www.snopes.com/fact-check/generated-{n}/"
    base = {
        "id": record_id(url),
        "claim": f"Generated claim number {n}.",
        "post_text": f"Generated post {n}",
        "label": Label(label) if label else None,
        "news_url": url,
        "category": "Generated",
        "claim_time": date(2020, 1, 1),
        "provenance": Provenance(backend="offline", source="generated in tests"),
    }
    base.update(fields)
    return Sample(**base)


def evidence(n: int, url: str = "https://example.org/e") -> list[Evidence]:
    """``n`` generated text evidence items with distinct URLs."""
    return [Evidence(id=i, type="Text", content=f"evidence {i}", url=f"{url}{i}") for i in range(1, n + 1)]


class CountingDetector:
    """A test detector that logs every sample it is asked about to ``calls_log`` (one id per line) and,
    while ``arm_file`` exists, kills its own process with SIGKILL when asked for batch ``kill_at_batch``
    (removing ``arm_file`` first, so the rerun goes through). Answers False; refuses unblinded samples."""

    name = "counting"

    def __init__(self, calls_log: str, arm_file: str | None = None, kill_at_batch: int = 3) -> None:
        self.calls_log, self.arm_file, self.kill_at_batch = calls_log, arm_file, kill_at_batch
        self.batches = 0

    def config(self) -> dict:
        return {"calls_log": self.calls_log, "kill_at_batch": self.kill_at_batch}

    def predict(self, samples, setting):
        import os
        import signal
        from pathlib import Path

        from rwpost.evaluate.protocol import Prediction

        self.batches += 1
        if self.arm_file and Path(self.arm_file).exists() and self.batches == self.kill_at_batch:
            Path(self.arm_file).unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        out = []
        for s in samples:
            if s.label is not None or s.reasoning_logic is not None or s.key_points is not None:
                raise AssertionError(f"{s.id}: the detector was shown gold fields")
            with open(self.calls_log, "a", encoding="utf-8") as handle:
                handle.write(s.id + "\n")
            out.append(Prediction(id=s.id, label=Label.FALSE, explanation=f"evidence {len(s.evidence)}"))
        return out


CLASSES = ["True", "False", "Unproven"]


def _indicator(labels):
    return np.eye(3, dtype=int)[[CLASSES.index(str(x)) for x in labels]]


def sklearn_scores(gold, pred, failures):
    """The headline scores of a direct scikit-learn computation under a failure policy (pred None:
    a failure)."""
    if failures == "exclude":
        kept = [i for i, p in enumerate(pred) if p is not None]
        y_true, y_pred = [str(gold[i]) for i in kept], [str(pred[i]) for i in kept]
        labels = CLASSES
    elif failures == "class":
        y_true = [str(g) for g in gold]
        y_pred = [NO_ANSWER if p is None else str(p) for p in pred]
        labels = CLASSES + ([NO_ANSWER] if None in pred else [])
    else:  # wrong: a failure is a multilabel row flagging every class but the gold one
        y_true = _indicator(gold)
        y_pred = np.array(
            [1 - t if p is None else _indicator([p])[0] for p, t in zip(pred, y_true, strict=True)]
        )
        labels = None
    kw = {"labels": labels} if labels is not None else {}
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0, **kw)
    return {
        "accuracy": accuracy_score(y_true, y_pred),
        "macro_f1": f1_score(y_true, y_pred, average="macro", zero_division=0, **kw),
        "weighted_f1": f,
        "weighted_precision": p,
        "weighted_recall": r,
    }
