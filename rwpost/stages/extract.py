"""Stage ``extract``: tagged articles -> post, rationale, key points, evidence (LLM when a key is set,
else the offline rules); per-record, resumable, set-aside answers kept with their raw responses.

Credentials come from the environment here, at the edge (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``RWPOST_LLM_*``); everything else from the ``extract:`` section of params.yaml. Writes
``extractions.jsonl``, ``rejects.jsonl``, ``summary.json`` (totals of those files) and ``cost.json`` (this
run's bill: requests, tokens, cache hits, cost; run-specific, outside DVC's hash) and ``funnel.json`` (the
funnel so far plus extraction's line) under ``out``. The library loop is :mod:`rwpost.extract.run`.

The ``executor:`` section (optional; default one ``local`` shard: the plain run above) can split the
articles by id into shards under ``<out>.shards`` (:mod:`rwpost.executors`), run them locally, on Ray or
as a Slurm job array, and :func:`merge` them: the same bytes in ``out`` whatever ran them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt

from rwpost.errors import ConfigError
from rwpost.executors import (
    ExecutorParams,
    ShardStore,
    ShardTask,
    run_shards,
    shard_index,
    shard_keys,
    shard_names,
    shard_of,
    write_slurm,
)
from rwpost.extract.run import OUTPUT_FILES, extract_tagged, make_extractor, merge_outputs
from rwpost.llm import Price, PriceTable, settings_from_env
from rwpost.llm.batch import BatchRunner
from rwpost.records import FunnelStep
from rwpost.stages.base import StageParams, StageReport, funnel_so_far, write_funnel


class Params(StageParams):
    """The ``extract:`` section of params.yaml."""

    section = "extract"
    shared = ("executor",)
    upstream = {"input": "reformat.out/articles.jsonl"}
    reads = ("input", "funnel", "local_model")
    writes = ("out", "cache")

    input: Path = Path("data/work/tagged/articles.jsonl")
    out: Path = Path("data/work/extract")
    funnel: Path | None = None
    """The funnel so far; None: the ``funnel.json`` beside ``input`` (reformat's). ``out/funnel.json`` is it
    plus this stage's line."""
    backend: Literal["offline", "llm", "auto", "local"] = "auto"
    """``auto``: the LLM when ``OPENAI_API_KEY`` is set, else offline; ``local``: ``local_model``."""
    local_model: Path | None = None
    """A Hugging Face model folder for backend ``local`` (transformers; bf16 on CUDA, float32 on CPU)."""
    model: str | None = None
    """None: ``RWPOST_LLM_MODEL`` or the client's default."""
    concurrency: PositiveInt | None = None
    """LLM requests in flight; None: ``RWPOST_LLM_CONCURRENCY`` or the client's default."""
    cache: Path = Path("data/cache/llm.sqlite")
    max_article_chars: PositiveInt = 60_000
    prices: dict[str, Price] = Field(default_factory=dict)
    limit: NonNegativeInt | None = None
    """Extract at most this many new articles (None: all)."""
    retry_rejects: bool = False
    """Try the articles an earlier run set aside again."""
    batch_api: bool = False
    """Ask through the provider's Batch API (about half price, answers within 24 h); the batch id is kept
    in ``<cache>.batches.json`` so an interrupted run resumes the same batch."""
    batch_poll_s: PositiveFloat = 30.0
    """Seconds between polls of a batch."""
    executor: ExecutorParams = Field(default_factory=ExecutorParams)
    """The ``executor:`` section: one local shard (the default) or shards run by local, ray or slurm."""


def price_table(prices: dict[str, Price]) -> PriceTable:
    """The LLM client's price table of the params' prices."""
    return dict(prices)


def extract_step(summary: dict[str, Any]) -> FunnelStep:
    """The funnel line of extraction: tagged articles in, extractions out, the rest set aside by reason."""
    reasons = {f"set aside by {stage}": n for stage, n in summary["set_aside_by_stage"].items()}
    return FunnelStep.of("extract (post, rationale, evidence)", summary["extracted"], reasons)


def _extractor(params: Params) -> Any:
    settings = settings_from_env(model=params.model, concurrency=params.concurrency)
    return make_extractor(
        params.backend,
        settings,
        cache_path=params.cache,
        prices=price_table(params.prices),
        max_article_chars=params.max_article_chars,
        local_model=params.local_model,
    )


def _batch(params: Params, extractor: Any) -> BatchRunner | None:
    """The Batch API runner of an API extractor when ``batch_api`` is asked, else None."""
    if not params.batch_api:
        return None
    client = getattr(getattr(extractor, "model", None), "client", None)
    if client is None:
        raise ConfigError("extract.batch_api needs the llm backend (an OpenAI-compatible server)")
    state = params.cache.with_name(f"{params.cache.name}.batches.json")
    return BatchRunner(client, state, poll_s=params.batch_poll_s)


def _report(params: Params, cost: dict[str, Any]) -> StageReport:
    """The stage's report and ``funnel.json``, from the outputs' totals (summary.json), never from this
    run's counters: a resumed run skips what earlier runs did."""
    report = StageReport(
        stage="extract",
        counts=cost,
        funnel=[extract_step(cost["summary"])],
        message=f"extract ({cost['backend']}): {cost['summary']} (this run: {cost.get('counts')})"
        f" -> {params.out}",
    )
    earlier = params.funnel or params.input.with_name("funnel.json")
    write_funnel(params.out / "funnel.json", funnel_so_far(earlier, report))
    return report


def run(params: Params, *, progress: Callable[[int], None] | None = None) -> StageReport:
    """The stage; ``progress`` is told of each article done (local runs)."""
    if params.executor.sharded:
        return run_sharded(params, progress=progress)
    extractor = _extractor(params)
    cost = extract_tagged(
        params.input,
        params.out,
        extractor,
        limit=params.limit,
        retry_rejects=params.retry_rejects,
        progress=progress,
        batch=_batch(params, extractor),
    )
    return _report(params, cost)


# --- shards: run_shard and merge are what every executor calls -------------------------------------------


def _params(params: Params | dict[str, Any]) -> Params:
    return params if isinstance(params, Params) else Params.model_validate(params)


def _store(params: Params) -> ShardStore:
    return ShardStore(params.executor.work_dir(params.out))


def run_shard(
    params: Params | dict[str, Any],
    shard: str,
    extractor: Any = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Extract one shard's articles into its folder and mark it done; a shard already done on the same
    input is skipped (unless ``retry_rejects``). ``extractor``: one already built (a Ray actor's model)."""
    params = _params(params)
    index, count = shard_index(shard)
    store, key = _store(params), shard_keys(params.input, count)[shard]
    if store.done(shard, key) and not params.retry_rejects:
        return
    store.clear(shard)
    folder = store.folder(shard)
    extractor = extractor or _extractor(params)
    extract_tagged(
        params.input,
        folder,
        extractor,
        batch=_batch(params, extractor),
        retry_rejects=params.retry_rejects,
        progress=progress,
        select=lambda record_id: shard_of(record_id, count) == index,
    )
    store.finish(shard, key, [folder / name for name in (*OUTPUT_FILES, "cost.json")])


def merge(params: Params | dict[str, Any]) -> StageReport:
    """Join the finished shards into ``out`` (records in id order) and write the funnel; refused, naming
    them, while any shard has no completion marker for the current input."""
    params = _params(params)
    store = _store(params)
    keys = shard_keys(params.input, params.executor.shards)
    store.require(keys, f"extract {params.input}")
    return _report(params, merge_outputs([store.folder(shard) for shard in keys], params.out))


def run_sharded(params: Params, *, progress: Callable[[int], None] | None = None) -> StageReport:
    """Split the input into ``executor.shards`` shards, run those not done with the executor, merge."""
    if params.limit is not None:
        raise ConfigError("extract.limit needs one local shard (executor local, shards 1)")
    executor, store = params.executor, _store(params)
    keys = shard_keys(params.input, executor.shards)
    todo = list(keys) if params.retry_rejects else store.pending(keys)
    if executor.name == "slurm":
        submit = write_slurm(
            executor,
            name="extract",
            module=__name__,
            params=params.model_dump(mode="json"),
            shards=shard_names(executor.shards),
            pending=todo,
            folder=store.root / "slurm",
        )
        return StageReport(
            stage="extract",
            counts={"shards": len(keys), "pending": len(todo)},
            message=f"extract: {len(todo)} of {len(keys)} shards to run; submit with: bash {submit}",
        )
    local_model = params.backend == "local"
    task = ShardTask(
        name="extract",
        shards=todo,
        run=functools.partial(
            _run_one, params.model_dump(mode="json"), progress if executor.name == "local" else None
        ),
        hold=functools.partial(_extractor, params) if local_model else None,
        gpus=executor.gpus,
        env={k: v for k, v in os.environ.items() if k.startswith(("OPENAI_", "RWPOST_LLM_"))},
    )
    run_shards(executor, task)
    return merge(params)


def _run_one(params: dict[str, Any], progress: Callable[[int], None] | None, shard: str, held: Any) -> None:
    run_shard(params, shard, held, progress=progress)
