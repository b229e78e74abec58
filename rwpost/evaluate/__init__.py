"""Score any misinformation detector on RW-Post splits (paper sections IV-V).

    from rwpost.evaluate import RunSpec, evaluate
    metrics = evaluate(test_samples, RunSpec("embedding"), "reports/embedding", train=dev_samples)

Detectors follow :class:`Detector` (``rwpost.evaluate.protocol``) and are found by name
(``rwpost.evaluate.registry``); the runner blinds samples, batches, resumes; ``scoring`` and
``metrics`` measure; ``report`` writes JSON, Markdown and plots; ``leaderboard`` compares runs.
"""

from rwpost.evaluate.leakage import BlockList, GuardedWeb, SearchResult, audit
from rwpost.evaluate.protocol import (
    Call,
    CheckingDetector,
    Detector,
    Prediction,
    Setting,
    TrainableDetector,
    blind,
)
from rwpost.evaluate.registry import available_detectors, make_detector
from rwpost.evaluate.report import evaluate
from rwpost.evaluate.runner import RunSpec, split_train_test

__all__ = [
    "BlockList",
    "Call",
    "CheckingDetector",
    "Detector",
    "GuardedWeb",
    "Prediction",
    "RunSpec",
    "SearchResult",
    "Setting",
    "TrainableDetector",
    "audit",
    "available_detectors",
    "blind",
    "evaluate",
    "make_detector",
    "split_train_test",
]
