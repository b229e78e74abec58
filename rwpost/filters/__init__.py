"""Quality filters (paper III-A, III-C): size, label watermarks, image necessity, near-duplicates.

Each filter is one module with one small class (see :mod:`rwpost.filters.base` for the contract);
:data:`REGISTRY` names them and :data:`DEFAULT_ORDER` is the funnel order. Adding a filter is one new
module and one line here. :func:`rwpost.filters.runner.run_filters` runs them.
"""

from __future__ import annotations

from rwpost.filters.base import CorpusFilter, FilterDecision, RecordFilter
from rwpost.filters.neardup import NearDuplicateFilter
from rwpost.filters.necessity import NecessityFilter
from rwpost.filters.size import SizeFilter
from rwpost.filters.watermark import WatermarkFilter

REGISTRY: dict[str, type] = {
    "size": SizeFilter,
    "watermark": WatermarkFilter,
    "necessity": NecessityFilter,
    "neardup": NearDuplicateFilter,
}
"""Filter name -> class; the name is also its section under ``filter:`` in params.yaml, except size's
(``size_limits``: DVC's run cache ignores params keys named ``size``)."""

DEFAULT_ORDER: tuple[str, ...] = ("size", "necessity", "watermark", "neardup")
"""Cheap before expensive: OCR only runs on records that survived size and necessity."""

__all__ = [
    "DEFAULT_ORDER",
    "REGISTRY",
    "CorpusFilter",
    "FilterDecision",
    "RecordFilter",
]
