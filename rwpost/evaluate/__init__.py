"""Score any misinformation detector on RW-Post splits (paper sections IV-V).

    from rwpost.evaluate import RunSpec, evaluate
    metrics = evaluate(test_samples, RunSpec("embedding", setting="T+I"), "reports/evaluate/embedding",
                       train=dev_samples)

A run goes straight down: ``plan`` (detectors x cells, :func:`plan_runs`) -> ``runner`` (blinding by the
:class:`EvalTask`, batches, resume) -> ``scoring`` and ``metrics`` -> ``report`` (JSON, Markdown, plots);
``leaderboard`` compares runs. Detectors follow the contract of :mod:`rwpost.evaluate.contract` and are
found by name (:mod:`rwpost.evaluate.registry`).
"""

from rwpost.evaluate.contract import (
    Call,
    Capabilities,
    Detector,
    DetectorInputs,
    Prediction,
    RunContext,
)
from rwpost.evaluate.leakage import BlockList, LeakageGuard, SearchResult, audit
from rwpost.evaluate.plan import DetectorEntry, PlannedRun, plan_runs, run_plan
from rwpost.evaluate.registry import available_detectors, make_detector
from rwpost.evaluate.run import evaluate
from rwpost.evaluate.runner import RunSpec, split_train_test
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource, blind

__all__ = [
    "BlockList",
    "Call",
    "Capabilities",
    "Cell",
    "Detector",
    "DetectorEntry",
    "DetectorInputs",
    "EvalTask",
    "EvidenceSource",
    "LeakageGuard",
    "PlannedRun",
    "Prediction",
    "RunContext",
    "RunSpec",
    "SearchResult",
    "audit",
    "available_detectors",
    "blind",
    "evaluate",
    "make_detector",
    "plan_runs",
    "run_plan",
    "split_train_test",
]
