"""The entry point of one evaluation run: runner -> scorer -> reports (``rwpost.evaluate.evaluate``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.evaluate.report import write_reports
from rwpost.evaluate.runner import RunSpec, run
from rwpost.records import Sample


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
) -> dict[str, Any]:
    """Run, score and report; returns the metrics written to ``<out_dir>/metrics.json``.

    ``overwrite`` and ``on_change`` are :func:`rwpost.evaluate.runner.run`'s (resume only identical runs);
    ``encode`` embeds texts for the key-point coverage of explanations (None: not scored); ``plots``
    draws the run's figures (report.md shows them).
    """
    out = Path(out_dir)
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
    return write_reports(samples, spec, result, out, encode=encode, plots=plots)


__all__ = ["evaluate"]
