"""The entry point of one evaluation run: runner -> scorer -> reports (``rwpost.evaluate.evaluate``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.evaluate.log import RunMetrics
from rwpost.evaluate.outages import check_retrieval
from rwpost.evaluate.report import write_reports
from rwpost.evaluate.runner import RunSpec, run
from rwpost.io import folder_lock
from rwpost.records import Sample

LOCK_FILE = ".evaluate.lock"
"""The run folder's lock (:func:`rwpost.io.folder_lock`), held from the claim to the last report."""


def evaluate(
    samples: Sequence[Sample],
    spec: RunSpec,
    out_dir: str | Path,
    *,
    train: Sequence[Sample] | None = None,
    data_info: dict[str, Any] | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    on_change: str = "refuse",
    plots: bool = False,
) -> RunMetrics:
    """Run, score and report; returns the typed log of ``<out_dir>/metrics.json``
    (:class:`~rwpost.evaluate.log.RunMetrics`; ``.dump()`` is the file's JSON).

    ``overwrite`` and ``on_change`` are :func:`rwpost.evaluate.runner.run`'s (resume only identical runs).
    ``plots`` draws the run's figures (report.md shows them).
    The folder is locked throughout: a second run into it is refused at once, naming the first's PID.
    ``encode`` embeds texts for the key-point coverage of explanations (None: not scored).
    """
    out = Path(out_dir)
    with folder_lock(out, LOCK_FILE):  # one run per folder: a second one is refused, naming the first
        result = run(
            samples,
            spec,
            out,
            train=train,
            data_info=data_info,
            progress=progress,
            overwrite=overwrite,
            on_change=on_change,
        )
        metrics = write_reports(samples, spec, result, out, encode=encode, plots=plots)
    check_retrieval(result.manifest)  # an open-web run with no working search: reported, then refused
    return metrics


__all__ = ["evaluate"]
