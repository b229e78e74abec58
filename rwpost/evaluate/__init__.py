"""Score any misinformation detector on RW-Post splits (paper sections IV-V).

    from rwpost.evaluate import RunSpec, evaluate
    metrics = evaluate(test_samples, RunSpec("embedding", setting="T+I"), "reports/evaluate/embedding",
                       train=dev_samples)
    metrics.macro_f1, metrics.coverage.answered  # the typed metrics.json (log.RunMetrics)

A run goes straight down: ``plan`` (detectors x cells, :func:`plan_runs`) -> ``runner`` (blinding by the
:class:`EvalTask`, batches, resume) -> ``scoring`` and ``metrics`` -> ``report`` (JSON, Markdown, plots);
``leaderboard`` compares runs. Detectors follow the contract of :mod:`rwpost.evaluate.contract` and are
found by name (:mod:`rwpost.evaluate.registry`). The package's names are imported on first use (PEP 562),
so a plug-in importing :mod:`rwpost.evaluate.contract` does not import the harness.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rwpost.evaluate.contract import Call, Capabilities, Detector, DetectorInputs, Prediction, RunContext
    from rwpost.evaluate.data import split_train_test
    from rwpost.evaluate.leakage import BlockList, LeakageGuard, SearchResult, audit
    from rwpost.evaluate.plan import DetectorEntry, PlannedRun, plan_runs, run_plan
    from rwpost.evaluate.registry import available_detectors, make_detector
    from rwpost.evaluate.run import evaluate
    from rwpost.evaluate.runner import RunSpec
    from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource, blind

_HOMES = {
    "rwpost.evaluate.contract": (
        "Call",
        "Capabilities",
        "Detector",
        "DetectorInputs",
        "Prediction",
        "RunContext",
    ),
    "rwpost.evaluate.leakage": ("BlockList", "LeakageGuard", "SearchResult", "audit"),
    "rwpost.evaluate.plan": ("DetectorEntry", "PlannedRun", "plan_runs", "run_plan"),
    "rwpost.evaluate.registry": ("available_detectors", "make_detector"),
    "rwpost.evaluate.run": ("evaluate",),
    "rwpost.evaluate.data": ("split_train_test",),
    "rwpost.evaluate.runner": ("RunSpec",),
    "rwpost.evaluate.task": ("Cell", "EvalTask", "EvidenceSource", "blind"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value
    return value
