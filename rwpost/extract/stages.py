"""The reformat and extract stages as library functions: per-record, resumable, rejects kept.

``pipelines/reformat.py``, ``pipelines/extract.py`` and the CLI call these with explicit arguments;
nothing here reads params.yaml or the environment.
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rwpost.errors import ConfigError, RecordError, RwpostError
from rwpost.extract.llm import ExtractionFailure, LLMExtractor
from rwpost.extract.offline import OfflineExtractor
from rwpost.io import append_jsonl, iter_jsonl, write_json, write_jsonl
from rwpost.llm import LLMSettings, Price, PriceTable, client_from
from rwpost.records import CrawledArticle, Extraction, Reject, TaggedArticle
from rwpost.tagged import tag_article


def _read_html(crawl_dir: Path, article: CrawledArticle) -> str:
    candidates = []
    if article.html_path:
        path = Path(article.html_path)
        candidates.append(path if path.is_absolute() else crawl_dir / path)
    if article.html_sha256:
        candidates.append(crawl_dir / "html" / f"{article.html_sha256}.html.gz")
    for path in candidates:
        if path.exists():
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            return data.decode("utf-8", errors="replace")
    raise RecordError("verbatim HTML not found", record_id=article.id, field="html_path")


def reformat_store(crawl_dir: Path, out_dir: Path, *, min_words: int = 1) -> dict[str, Any]:
    """Crawl store (``articles.jsonl`` + ``html/``) -> ``articles.jsonl`` of tagged articles + rejects.

    A record is rejected (with its reason) when it failed to parse, its HTML is missing, its rating is
    unknown, or its body has fewer than ``min_words`` words.
    """
    source = crawl_dir / "articles.jsonl"
    kept: list[TaggedArticle] = []
    rejects: list[Reject] = []
    reasons: Counter[str] = Counter()

    def reject(reason: str, key: str, **fields: Any) -> None:
        reasons[key] += 1
        rejects.append(Reject(stage="reformat", reason=reason, source=str(source), **fields))

    for line, row in iter_jsonl(source):
        try:
            crawled = CrawledArticle.model_validate(row)
        except ValidationError as exc:
            reject(f"not a crawled article: {exc.errors()[0]['msg']}", "invalid record", line=line, data=row)
            continue
        if crawled.parse_error or crawled.http_status != 200:
            why = crawled.parse_error or f"HTTP {crawled.http_status}"
            reject(f"crawl did not parse the page: {why}", "crawl error", id=crawled.id, line=line)
            continue
        try:
            html = _read_html(crawl_dir, crawled)
            tagged = tag_article(html, crawled.url, crawled)
        except RwpostError as exc:
            reject(str(exc), type(exc).__name__, id=crawled.id, line=line)
            continue
        if tagged.word_count < min_words:
            reject(
                f"body has {tagged.word_count} words (< {min_words})", "too short", id=crawled.id, line=line
            )
            continue
        kept.append(tagged)
    write_jsonl(out_dir / "articles.jsonl", kept)
    write_jsonl(out_dir / "rejects.jsonl", rejects)
    report = {"in": len(kept) + len(rejects), "kept": len(kept), "rejected": dict(reasons)}
    write_json(out_dir / "report.json", report)
    return report


def read_tagged(path: Path, rejects: list[Reject] | None = None) -> Iterator[TaggedArticle]:
    """Tagged articles of a JSONL file; an invalid row becomes a reject (when a list is given) or raises."""
    for line, row in iter_jsonl(path):
        try:
            yield TaggedArticle.model_validate(row)
        except ValidationError as exc:
            error = RecordError(
                f"not a tagged article: {exc.errors()[0]['msg']}",
                source=str(path),
                line=line,
                record_id=row.get("id") if isinstance(row, dict) else None,
            )
            if rejects is None:
                raise error from exc
            rejects.append(Reject(stage="extract", reason=str(error), source=str(path), line=line, data=row))


def _done_ids(*paths: Path) -> set[str]:
    done: set[str] = set()
    for path in paths:
        if path.exists():
            for _, row in iter_jsonl(path):
                if isinstance(row, dict) and row.get("id"):
                    done.add(row["id"])
    return done


def extract_tagged(
    in_path: Path,
    out_dir: Path,
    extractor: OfflineExtractor | LLMExtractor,
    *,
    limit: int | None = None,
    retry_rejects: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Tagged articles -> ``extractions.jsonl`` + ``rejects.jsonl`` (raw responses kept) + ``cost.json``.

    Resumable: ids already in ``extractions.jsonl`` (and in ``rejects.jsonl`` unless ``retry_rejects``)
    are skipped; each result is appended and flushed as it completes, so a killed run loses nothing.
    """
    out_path, rejects_path = out_dir / "extractions.jsonl", out_dir / "rejects.jsonl"
    if retry_rejects and rejects_path.exists():
        rejected = {row.get("id") for _, row in iter_jsonl(rejects_path) if isinstance(row, dict)}
        done = _done_ids(out_path) - rejected
        kept_rejects = [row for _, row in iter_jsonl(rejects_path) if row.get("id") in done]
        write_jsonl(rejects_path, kept_rejects)
    done = _done_ids(out_path) if retry_rejects else _done_ids(out_path, rejects_path)
    input_rejects: list[Reject] = []
    todo = [a for a in read_tagged(in_path, input_rejects) if a.id not in done]
    if limit is not None:
        todo = todo[:limit]
    for reject in input_rejects:
        append_jsonl(rejects_path, reject)
    counts: Counter[str] = Counter(skipped=len(done), input_rejects=len(input_rejects))

    def record(article: TaggedArticle, outcome: Extraction | ExtractionFailure) -> None:
        if isinstance(outcome, Extraction):
            append_jsonl(out_path, outcome)
            counts["extracted"] += 1
            counts["hallucinated_urls"] += len(outcome.hallucinated_urls)
        else:
            append_jsonl(rejects_path, outcome.as_reject())
            counts["set_aside"] += 1
        if progress is not None:
            progress(1)

    if isinstance(extractor, LLMExtractor):
        extractor.run(todo, on_done=record)
        cost = extractor.client.report()
    else:
        for article in todo:
            record(article, extractor.extract(article))
        cost = {"model": None, "total": {"requests": 0, "cost_usd": 0.0}}
    cost["backend"] = extractor.backend
    cost["prompt_version"] = extractor.provenance().prompt_version
    cost["counts"] = dict(counts)
    write_json(out_dir / "cost.json", cost)
    return cost


def make_extractor(
    backend: str,
    settings: LLMSettings,
    *,
    cache_path: str | Path = "data/cache/llm.sqlite",
    prices: PriceTable | None = None,
    max_article_chars: int = 60_000,
) -> OfflineExtractor | LLMExtractor:
    """The extractor for ``backend``: ``offline``, ``llm``, or ``auto`` (LLM when ``settings`` has a key)."""
    if backend == "auto":
        backend = "llm" if settings.has_key else "offline"
    if backend == "offline":
        return OfflineExtractor()
    if backend != "llm":
        raise ConfigError(f"extract backend must be auto, offline or llm, got {backend!r}")
    client = client_from(settings, cache_path=cache_path, prices=prices)
    return LLMExtractor(client, max_article_chars=max_article_chars)


def price_table(prices: dict[str, dict[str, float]] | None) -> PriceTable:
    """A price table from a mapping ``model -> {input_per_mtok, output_per_mtok}`` (params.yaml form)."""
    return {
        model: Price(float(p["input_per_mtok"]), float(p["output_per_mtok"]))
        for model, p in (prices or {}).items()
    }
