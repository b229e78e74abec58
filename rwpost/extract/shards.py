"""The ``extract:`` settings and their run: one local pass, or shards run locally, on Ray or as a Slurm array.

:class:`ExtractSettings` is the typed ``extract:`` section the stage (:mod:`rwpost.stages.extract`) extends
with its funnel; :func:`extract_all` runs it, plainly (:func:`rwpost.extract.run.extract_tagged` into
``out``) or, with an ``executor:`` other than one local shard, splitting the articles by id into shards
under ``<out>.shards`` (:mod:`rwpost.executors`), running those not done (:func:`run_shard`) and
:func:`merge`-ing them: the same bytes in ``out`` whatever ran them. Credentials come from the environment.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveFloat, PositiveInt

from rwpost.errors import ConfigError
from rwpost.executors import (
    ExecutorParams,
    ShardJob,
    ShardStore,
    Submitted,
    check_shard_count,
    run_job,
    shard_index,
    shard_inputs,
    shard_keys,
    shard_of,
)
from rwpost.extract.run import OUTPUT_FILES, check_resume, extract_tagged, make_extractor, merge_outputs
from rwpost.io import unsynced
from rwpost.llm import Price, PriceTable, settings_from_env
from rwpost.llm.batch import BatchRunner


class ExtractSettings(BaseModel):
    """What extraction reads, writes and asks with, and the executor running it."""

    model_config = ConfigDict(extra="forbid")

    input: Path = Path("data/work/tagged/articles.jsonl")
    out: Path = Path("data/work/extract")
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
    """The LLM client's price table of the settings' prices."""
    return dict(prices)


def extractor_of(settings: ExtractSettings) -> Any:
    """The extractor of ``backend``, with the LLM settings from the environment."""
    return make_extractor(
        settings.backend,
        settings_from_env(model=settings.model, concurrency=settings.concurrency),
        cache_path=settings.cache,
        prices=price_table(settings.prices),
        max_article_chars=settings.max_article_chars,
        local_model=settings.local_model,
    )


def batch_of(settings: ExtractSettings, extractor: Any) -> BatchRunner | None:
    """The Batch API runner of an API extractor when ``batch_api`` is asked, else None."""
    if not settings.batch_api:
        return None
    client = getattr(getattr(extractor, "model", None), "client", None)
    if client is None:
        raise ConfigError("extract.batch_api needs the llm backend (an OpenAI-compatible server)")
    state = settings.cache.with_name(f"{settings.cache.name}.batches.json")
    return BatchRunner(client, state, poll_s=settings.batch_poll_s)


def extract_all(
    settings: ExtractSettings, *, module: str, progress: Callable[[int], None] | None = None
) -> dict[str, Any] | Submitted:
    """Extract into ``out``; returns its bill (``cost.json``), or the Slurm job written (``module``: the one
    whose ``run_shard`` and ``merge`` its tasks call). ``progress`` is told of each article done (local)."""
    if settings.executor.sharded:
        if settings.backend != "local":  # a local model is loaded by its shards only; each checks its own
            check_resume(settings.out, extractor_of(settings).provenance())
        return run_sharded(settings, module=module, progress=progress)
    extractor = extractor_of(settings)
    return extract_tagged(
        settings.input,
        settings.out,
        extractor,
        limit=settings.limit,
        retry_rejects=settings.retry_rejects,
        progress=progress,
        batch=batch_of(settings, extractor),
    )


def _store(settings: ExtractSettings) -> ShardStore:
    return ShardStore(settings.executor.work_dir(settings.out))


def run_shard(
    settings: ExtractSettings,
    shard: str,
    *,
    progress: Callable[[int], None] | None = None,
    key: str | None = None,
) -> None:
    """Extract one shard's articles into its folder and mark it done; a shard already done on the same
    input is skipped (unless ``retry_rejects``). ``key``: the shard's input key when the job has it
    (:func:`shard_keys` of the input, read here otherwise). A local model is the one the worker holds, if
    it holds one (:mod:`rwpost.executors.held`)."""
    index, count = shard_index(shard)
    store = _store(settings)
    key = key if key is not None else shard_keys(settings.input, count)[shard]
    if store.done(shard, key) and not settings.retry_rejects:
        return
    store.clear(shard)
    folder = store.folder(shard)
    extractor = extractor_of(settings)
    with unsynced():  # the marker's hashes check the shard's files (a crash costs a rerun of the shard)
        extract_tagged(
            settings.input,
            folder,
            extractor,
            batch=batch_of(settings, extractor),
            retry_rejects=settings.retry_rejects,
            progress=progress,
            select=lambda record_id: shard_of(record_id, count) == index,
        )
        store.finish(shard, key, [folder / name for name in (*OUTPUT_FILES, "cost.json")])


def merge(
    settings: ExtractSettings, keys: Mapping[str, str] | None = None, ran: Collection[str] | None = None
) -> dict[str, Any]:
    """Join the finished shards into ``out`` (records in id order); returns the bill. Refused, naming them,
    while any shard has no completion marker for the current input (``keys``: the shards' input keys when
    the caller has just read them, as :func:`run_sharded` has). ``ran``: the shards this run ran (the
    others' records count as skipped in its bill); None: every shard's bill (a Slurm job's merge)."""
    store = _store(settings)
    keys = keys if keys is not None else shard_keys(settings.input, settings.executor.shards)
    store.require(keys, f"extract {settings.input}")
    earlier = [store.folder(shard) for shard in keys if ran is not None and shard not in ran]
    return merge_outputs([store.folder(shard) for shard in keys], settings.out, earlier)


def run_sharded(
    settings: ExtractSettings, *, module: str, progress: Callable[[int], None] | None = None
) -> dict[str, Any] | Submitted:
    """Split the input into ``executor.shards`` shards (at most one per record), run those not done with
    the executor and merge; a scheduler's executor (Slurm) returns the job it wrote instead (its tasks call
    ``module``'s ``run_shard`` and ``merge``)."""
    if settings.limit is not None:
        raise ConfigError("extract.limit needs one local shard (executor local, shards 1)")
    executor, store = settings.executor, _store(settings)
    split = shard_inputs(settings.input, executor.shards)
    check_shard_count(executor.shards, split.records, str(settings.input))
    keys = split.keys
    job = ShardJob(
        name="extract",
        keys=keys,
        pending=list(keys) if settings.retry_rejects else store.pending(keys),
        run=functools.partial(_run_one, settings, keys),
        root=store.root,
        models=frozenset(keys) if settings.backend == "local" else frozenset(),
        module=module,
        params=settings.model_dump(mode="json"),
        gpus=executor.gpus,
        env={k: v for k, v in os.environ.items() if k.startswith(("OPENAI_", "RWPOST_LLM_"))},
        progress=progress,
        sizes=split.sizes,
    )
    submitted = run_job(executor, job)
    return submitted if submitted is not None else merge(settings, keys, ran=job.pending)


def _run_one(
    settings: ExtractSettings, keys: Mapping[str, str], shard: str, progress: Callable[[int], None] | None
) -> None:
    run_shard(settings, shard, progress=progress, key=keys[shard])
