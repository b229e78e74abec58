"""The resumable extraction loop: tagged articles -> extractions, set-aside answers with their raw responses.

:func:`make_extractor` picks the backend, :func:`extract_tagged` runs it over a tagged-articles file and
writes ``extractions.jsonl``, ``rejects.jsonl``, ``summary.json`` (totals of those files) and ``cost.json``
(this run's bill). The ``extract`` stage (:mod:`rwpost.stages.extract`) runs it for ``dvc repro`` and
``rwpost extract``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError, Interrupted, RecordError, signal_name
from rwpost.extract.llm import ExtractionFailure, LLMExtractor
from rwpost.extract.offline import OfflineExtractor
from rwpost.io import (
    append_jsonl,
    drop_jsonl_rows,
    drop_torn_tail,
    folder_lock,
    iter_jsonl,
    merge_jsonl_by_id,
    read_json,
    read_records,
    sort_jsonl_by_id,
    sync_file,
    write_json,
    write_jsonl,
)
from rwpost.llm import LLMSettings, PriceTable, client_from
from rwpost.llm.batch import BatchRunner
from rwpost.llm.client import is_transport_failure
from rwpost.llm.held import local_chat_model
from rwpost.records import Extraction, Provenance, Reject, TaggedArticle

LOCK_FILE = ".extract.lock"
"""The output folder's lock, held while a run extracts into it."""


def make_extractor(
    backend: str,
    settings: LLMSettings,
    *,
    cache_path: str | Path,
    prices: PriceTable | None = None,
    max_article_chars: int,
    local_model: str | Path | None = None,
) -> OfflineExtractor | LLMExtractor:
    """The extractor for ``backend``: ``offline``, ``llm``, ``auto`` (LLM when ``settings`` has a key), or
    ``local`` (the model folder ``local_model``, in-process)."""
    if backend == "auto":
        backend = "llm" if settings.has_key else "offline"
    if backend == "offline":
        return OfflineExtractor()
    if backend == "local":
        if local_model is None:
            raise ConfigError("extract backend local needs a model folder (extract.local_model)")
        model = local_chat_model(local_model)  # held by a model replica: loaded once for its shards
        return LLMExtractor(model, max_article_chars=max_article_chars, backend="local")
    if backend != "llm":
        raise ConfigError(f"extract backend must be auto, offline, llm or local, got {backend!r}")
    client = client_from(settings, cache_path=cache_path, prices=prices)
    return LLMExtractor(client, max_article_chars=max_article_chars)


def _done_ids(*paths: Path) -> set[str]:
    """Ids already written; a last line a kill cut short is removed first, so that record is redone."""
    done: set[str] = set()
    for path in paths:
        drop_torn_tail(path)
        if path.exists():
            for _, row in iter_jsonl(path):
                if isinstance(row, dict) and row.get("id"):
                    done.add(row["id"])
    return done


def retry_transport_failures(rejects_path: Path) -> int:
    """Remove from ``rejects.jsonl`` the articles set aside for a transport reason (a server error, a
    rate limit, a timeout, no connection: :func:`rwpost.llm.client.is_transport_failure`), so a resumed
    run asks for them again; returns how many. Refusals and invalid answers stay set aside."""
    return drop_jsonl_rows(
        rejects_path, lambda row: isinstance(row, dict) and is_transport_failure(str(row.get("reason") or ""))
    )


def _made_by(provenance: Any) -> str:
    """``backend llm, model m, prompt v`` of a record's provenance (a dict or a :class:`Provenance`)."""
    get = provenance.get if isinstance(provenance, dict) else lambda key: getattr(provenance, key, None)
    return f"backend {get('backend')}, model {get('model') or '-'}, prompt {get('prompt_version') or '-'}"


def check_resume(out_dir: Path, provenance: Provenance) -> None:
    """Refuse to resume into ``out_dir`` when what it holds was extracted by another backend, model or
    prompt version than ``provenance`` (as ``evaluate`` refuses a folder of a different run): a resume
    would skip those records and then label the whole folder as this run's. Nothing is written."""
    mine = _made_by(provenance)
    theirs: Counter[str] = Counter()
    path = out_dir / "extractions.jsonl"
    if path.exists():
        for _, row in iter_jsonl(path, on_error=lambda _error, _raw: None):
            if isinstance(row, dict) and isinstance(row.get("provenance"), dict):
                theirs[_made_by(row["provenance"])] += 1
    summary = out_dir / "summary.json"
    if not theirs and summary.is_file():  # every record set aside: the summary says who made them
        held = read_json(summary)
        if isinstance(held, dict) and (held.get("backend"), held.get("prompt_version")) != (
            provenance.backend,
            provenance.prompt_version,
        ):
            theirs[f"backend {held.get('backend')}, prompt {held.get('prompt_version') or '-'}"] += 1
    others = {made: n for made, n in theirs.items() if made != mine}
    if others:
        held_text = "; ".join(f"{n} by {made}" for made, n in sorted(others.items()))
        raise ConfigError(
            f"{out_dir} holds the extractions of another run ({held_text}); this run is {mine}: "
            f"give another --out (extract.out), or remove {out_dir} to extract again"
        )


def _reject_key(row: Any) -> tuple[Any, ...]:
    """What makes one set-aside input line the same line in two runs."""
    if not isinstance(row, dict):
        return (row,)
    return tuple(str(row.get(key)) for key in ("stage", "source", "line", "id", "reason"))


def extract_tagged(
    in_path: Path,
    out_dir: Path,
    extractor: OfflineExtractor | LLMExtractor,
    *,
    limit: int | None = None,
    retry_rejects: bool = False,
    progress: Callable[[int], None] | None = None,
    select: Callable[[str], bool] | None = None,
    batch: BatchRunner | None = None,
) -> dict[str, Any]:
    """Tagged articles -> ``extractions.jsonl`` + ``rejects.jsonl`` (raw responses kept) + ``cost.json``.

    Resumable: ids already in ``extractions.jsonl`` (and in ``rejects.jsonl`` unless ``retry_rejects``)
    are skipped; each result is appended as it completes, so a killed run loses nothing, and the files are
    flushed to disk once at the end (or the interrupt) of the run, not per record.
    ``select(id)`` keeps the input's records (and set-aside input lines, by their id or ``""``) of one
    shard (:func:`rwpost.executors.shard_of`); None: all. With ``batch`` (an API model's
    :class:`~rwpost.llm.batch.BatchRunner`) the questions go through the Batch API first
    (:func:`batch_prefill`); the loop then reads them from the cache and asks only what the batch failed.
    The folder is locked throughout (:func:`rwpost.io.folder_lock`): a second run into it is refused.
    """
    with folder_lock(out_dir, LOCK_FILE, runs="extract runs"):
        return _extract_locked(in_path, out_dir, extractor, limit, retry_rejects, progress, select, batch)


def _extract_locked(
    in_path: Path,
    out_dir: Path,
    extractor: OfflineExtractor | LLMExtractor,
    limit: int | None,
    retry_rejects: bool,
    progress: Callable[[int], None] | None,
    select: Callable[[str], bool] | None,
    batch: BatchRunner | None,
) -> dict[str, Any]:
    out_path, rejects_path = out_dir / "extractions.jsonl", out_dir / "rejects.jsonl"
    check_resume(out_dir, extractor.provenance())
    retried = retry_transport_failures(rejects_path)
    if retry_rejects and rejects_path.exists():
        rejected = {row.get("id") for _, row in iter_jsonl(rejects_path) if isinstance(row, dict)}
        done = _done_ids(out_path) - rejected
        kept_rejects = [row for _, row in iter_jsonl(rejects_path) if row.get("id") in done]
        write_jsonl(rejects_path, kept_rejects)
    done = _done_ids(out_path) if retry_rejects else _done_ids(out_path, rejects_path)
    input_rejects: list[Reject] = []
    articles = read_records(in_path, TaggedArticle, rejects=input_rejects, stage="extract", select=select)
    todo = [a for a in articles if a.id not in done]
    if select is not None:  # lines that are not JSON: the shard of "" has them
        input_rejects = [r for r in input_rejects if select(r.id or "")]
    if limit is not None:
        todo = todo[:limit]
    # an input line set aside by an earlier run is in rejects.jsonl already: a rerun does not add it again
    recorded = {_reject_key(row) for _, row in iter_jsonl(rejects_path)} if rejects_path.exists() else set()
    for reject in input_rejects:
        if _reject_key(reject.model_dump(mode="json")) not in recorded:
            append_jsonl(rejects_path, reject, sync=False)
    counts: Counter[str] = Counter(skipped=len(done), input_rejects=len(input_rejects))
    if retried:
        counts["retried_transport_failures"] = retried

    def record(article: TaggedArticle, outcome: Extraction | ExtractionFailure) -> None:
        # no fsync per record: a killed run keeps every appended line (the kernel has it); the files are
        # flushed to disk once, at the end of this run (below), before a shard's marker says it is done
        if isinstance(outcome, Extraction):
            append_jsonl(out_path, outcome, sync=False)
            counts["extracted"] += 1
            counts["hallucinated_urls"] += len(outcome.hallucinated_urls)
        else:
            append_jsonl(rejects_path, outcome.as_reject(), sync=False)
            counts["set_aside"] += 1
            if is_transport_failure(outcome.error):
                counts["transport_failures"] += 1  # an outage: the next run asks again
        if progress is not None:
            progress(1)

    try:
        if isinstance(extractor, LLMExtractor):
            if batch is not None:
                batch_prefill(extractor, todo, batch)
            extractor.run(todo, on_done=record)
            cost = extractor.model.report()
            if batch is not None:
                cost["batch"] = batch.report()
        else:
            for article in todo:
                try:
                    outcome: Extraction | ExtractionFailure = extractor.extract(article)
                except RecordError as exc:  # an article the rules cannot read: set aside with the reason
                    outcome = ExtractionFailure(id=article.id, task="offline", error=str(exc))
                record(article, outcome)
            cost = {"model": None, "total": {"requests": 0, "cost_usd": 0.0}}
    except KeyboardInterrupt as exc:  # say what is kept and what was lost
        kept = counts["extracted"] + counts["set_aside"]
        sync_file(out_path)  # what this run appended, on disk before it says it is kept
        sync_file(rejects_path)
        raise Interrupted(
            signal_name(exc),
            f"{len(done) + kept} articles kept in {out_dir} ({kept} by this run, in extractions.jsonl and "
            f"rejects.jsonl); the other {len(todo) - kept} were in flight or not started: the next run does "
            "them"
            + (" (answers the LLM cache holds are not asked again)" if extractor.backend == "llm" else ""),
        ) from None
    sync_file(out_path)  # the commit of this run's appends (the sort below may find them in order)
    sync_file(rejects_path)
    sort_jsonl_by_id(out_path)  # appended in completion order; the stage's output is in id order
    sort_jsonl_by_id(rejects_path)
    cost["backend"] = extractor.backend
    cost["prompt_version"] = extractor.provenance().prompt_version
    cost["counts"] = dict(counts)
    cost["summary"] = output_summary(out_dir, extractor.backend, extractor.provenance().prompt_version)
    # summary.json is what the outputs hold (the same after a resume as after one run); cost.json is this
    # run's bill (what it asked, what the cache served): run-specific, kept out of DVC's hash (.dvcignore)
    write_json(out_dir / "summary.json", cost["summary"])
    write_json(out_dir / "cost.json", cost)
    return cost


def batch_prefill(extractor: LLMExtractor, articles: Sequence[TaggedArticle], batch: BatchRunner) -> None:
    """Post and rationale of every article in one batch, then evidence (it needs the key points) in a
    second, for the articles whose rationale the first answered; the answers land in the cache."""
    batch.fill([extractor.request(task, a) for a in articles for task in ("post", "rationale")])
    evidence = []
    for article in articles:
        rationale = batch.cached(extractor.request("rationale", article))
        if rationale is not None:
            key_points = [str(k) for k in rationale.get("key_points") or []]
            evidence.append(extractor.request("evidence", article, key_points))
    batch.fill(evidence)


def output_summary(out_dir: Path, backend: str, prompt_version: str) -> dict[str, Any]:
    """Totals of the stage's outputs, computed from the files (not from this run's counters)."""
    extracted = hallucinated = 0
    reasons: Counter[str] = Counter()
    extractions, rejects = out_dir / "extractions.jsonl", out_dir / "rejects.jsonl"
    for _, row in iter_jsonl(extractions) if extractions.exists() else ():
        extracted += 1
        hallucinated += len(row.get("hallucinated_urls") or [])
    for _, row in iter_jsonl(rejects) if rejects.exists() else ():
        reasons[str(row.get("stage") or "extract")] += 1
    return {
        "backend": backend,
        "prompt_version": prompt_version,
        "extracted": extracted,
        "set_aside": sum(reasons.values()),
        "set_aside_by_stage": dict(sorted(reasons.items())),
        "hallucinated_urls": hallucinated,
    }


OUTPUT_FILES = ("extractions.jsonl", "rejects.jsonl")
"""The record files of an extraction folder (a shard's or the stage's)."""


def merge_outputs(parts: Sequence[Path], out_dir: Path, earlier: Collection[Path] = ()) -> dict[str, Any]:
    """Join the extraction folders ``parts`` (finished shards, in shard order) into ``out_dir``: records
    in id order (the same bytes as one unsharded run), ``summary.json`` the shards' totals added up, and
    ``cost.json`` this run's bill: the bills of the shards it ran added up, and the records of the shards
    done before it (``earlier``) counted as skipped, nothing asked or paid for them, as a resumed plain
    run counts its records done before. Returns the merged bill, as :func:`extract_tagged` does."""
    for name in OUTPUT_FILES:
        sources = [part / name for part in parts if (part / name).exists()]
        target = out_dir / name
        if sources:
            merge_jsonl_by_id(sources, target)
        else:  # a file no shard wrote (no rejects): as a single run leaves it, absent
            target.unlink(missing_ok=True)
    bills = [read_json(part / "cost.json") for part in parts]
    kinds = {(bill.get("backend"), bill.get("prompt_version")) for bill in bills}
    if len(kinds) > 1:
        raise ConfigError(
            f"{out_dir}: the shards were extracted differently ({sorted(map(str, kinds))}); "
            "rerun them with one backend and prompt version"
        )
    backend, prompt_version = kinds.pop() if kinds else ("offline", "")
    done_before = set(earlier)
    ran = [bill for part, bill in zip(parts, bills, strict=True) if part not in done_before]
    cost = _add_up(ran or [_nothing_spent(bills[0])]) if bills else {}
    before = sum(_records(bill) for part, bill in zip(parts, bills, strict=True) if part in done_before)
    if before:
        counts = cost.setdefault("counts", {})
        counts["skipped"] = counts.get("skipped", 0) + before
    cost.update(backend=backend, prompt_version=prompt_version, shards=len(parts))
    cost["summary"] = _summed([bill.get("summary") for bill in bills]) or output_summary(
        out_dir, backend, prompt_version
    )
    write_json(out_dir / "summary.json", cost["summary"])
    write_json(out_dir / "cost.json", cost)
    return cost


def _records(bill: Any) -> int:
    """The records a shard's outputs hold (extracted or set aside), from its bill's summary."""
    summary = bill.get("summary") or {}
    return int(summary.get("extracted") or 0) + int(summary.get("set_aside") or 0)


def _nothing_spent(bill: Any) -> Any:
    """A bill of the shape of ``bill`` with every count and cost 0 (its descriptions kept): a run that
    asked nothing."""
    if isinstance(bill, dict):
        return {k: v if k in _NOT_ADDED else _nothing_spent(v) for k, v in bill.items() if k != "summary"}
    if isinstance(bill, bool) or not isinstance(bill, int | float):
        return bill
    return type(bill)(0)


def _summed(summaries: Sequence[Any]) -> dict[str, Any] | None:
    """The :func:`output_summary` of the merged files, from the shards' own (each in its ``cost.json``,
    which its marker hashes): the merge joins the shards' lines, so the totals add up. None when a shard
    has none (or there are no shards): the caller reads the merged files instead."""
    if not summaries or not all(isinstance(summary, dict) for summary in summaries):
        return None
    total = _add_up(summaries)
    total["set_aside_by_stage"] = dict(sorted(total["set_aside_by_stage"].items()))
    return total


_NOT_ADDED = frozenset({"model", "price_per_mtok", "response_mode", "backend", "prompt_version", "discount"})
"""Keys of a bill that describe it rather than count: kept from the first shard."""


def _add_up(bills: Sequence[Any]) -> Any:
    """Bills added up: counts summed (``max_in_flight``: the largest), dicts key by key, descriptions
    (:data:`_NOT_ADDED`) and anything else kept from the first bill that has them."""
    first = bills[0]
    if isinstance(first, dict):
        merged = {}
        for key in dict.fromkeys(k for bill in bills if isinstance(bill, dict) for k in bill):
            values = [b[key] for b in bills if isinstance(b, dict) and key in b]
            if key in _NOT_ADDED:
                merged[key] = values[0]
            elif key == "max_in_flight":
                merged[key] = max((v for v in values if isinstance(v, int)), default=0)
            else:
                merged[key] = _add_up(values)
        return merged
    if all(isinstance(b, int | float) and not isinstance(b, bool) for b in bills):
        total = sum(bills)
        return round(total, 6) if isinstance(total, float) else total
    return first
