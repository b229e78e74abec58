"""One module per DVC stage of ``dvc.yaml``: ``Params`` (its params.yaml section) and ``run(params)``.

crawl -> reformat -> extract -> filter -> assemble -> annotate_merge -> split -> stats, evaluate; multisite
(other fact-checkers, its own version folder).
The contract (params loading, :class:`~rwpost.stages.base.StageReport`, the funnel) is in
:mod:`rwpost.stages.base`; ``pipelines/<stage>.py`` is the DVC entry, the CLI calls the same ``run``.
"""

STAGES: tuple[str, ...] = (
    "crawl",
    "reformat",
    "extract",
    "filter",
    "assemble",
    "annotate_merge",
    "split",
    "stats",
    "evaluate",
    "multisite",
)
"""The stages in ``dvc.yaml`` order; each is ``rwpost.stages.<name>``."""
