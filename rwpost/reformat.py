"""Crawl store -> tagged articles (text with tagged URLs + link table), rejects kept with their reason.

Per record: the verbatim HTML from the store, :func:`rwpost.tagged.tag_article`, then the word-count bound.
The ``reformat`` stage (:mod:`rwpost.stages.reformat`) runs it and starts the dataset card's funnel.
"""

from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from rwpost.errors import RecordError, RwpostError
from rwpost.io import (
    MAX_PAGE_BYTES,
    TooLarge,
    read_bounded,
    read_records,
    sorted_rejects,
    write_json,
    write_jsonl,
)
from rwpost.labels import UNRATED
from rwpost.records import CrawledArticle, Reject, TaggedArticle
from rwpost.tagged import rating_outcome, tag_article


def _read_html(crawl_dir: Path, article: CrawledArticle) -> str:
    candidates = []
    if article.html_path:
        path = Path(article.html_path)
        candidates.append(path if path.is_absolute() else crawl_dir / path)
    if article.html_sha256:
        candidates.append(crawl_dir / "html" / f"{article.html_sha256}.html.gz")
    for path in candidates:
        if path.exists():
            try:  # bounded: a gzip bomb is set aside, never read into memory whole
                data = read_bounded(path, MAX_PAGE_BYTES, gunzip=path.suffix == ".gz")
            except (OSError, EOFError, zlib.error, TooLarge) as exc:  # a truncated or corrupt .gz: EOFError
                problem = f"verbatim HTML {path} unreadable ({type(exc).__name__}: {exc or 'truncated'})"
                raise RecordError(problem, record_id=article.id, field="html_path") from exc
            return data.decode("utf-8", errors="replace")
    raise RecordError("verbatim HTML not found", record_id=article.id, field="html_path")


def reformat_store(crawl_dir: Path, out_dir: Path, *, min_words: int) -> dict[str, Any]:
    """Crawl store (``articles.jsonl`` + ``html/``) -> tagged ``articles.jsonl``, ``rejects.jsonl`` and
    ``report.json`` (records in, kept, rejected by reason) under ``out_dir``; returns the report.

    A record is rejected (with its reason) when it is not a crawled article, failed to parse, its HTML is
    missing, it has no rating ("No Rating", none: counted as ``unrated``) or a rating word Table II does not
    know (counted as ``unknown-rating: <word>``), or its body has fewer than ``min_words`` words.
    """
    source = crawl_dir / "articles.jsonl"
    kept: list[TaggedArticle] = []
    rejects: list[Reject] = []
    reasons: Counter[str] = Counter()

    def reject(reason: str, key: str, article: CrawledArticle) -> None:
        reasons[key] += 1
        rejects.append(Reject(stage="reformat", reason=reason, source=str(source), id=article.id))

    for crawled in read_records(source, CrawledArticle, rejects=rejects, stage="reformat"):
        if crawled.parse_error or crawled.http_status != 200:
            why = crawled.parse_error or f"HTTP {crawled.http_status}"
            key = UNRATED if why.startswith("no rating") else "crawl error"
            reject(f"crawl did not parse the page: {why}", key, crawled)
            continue
        try:
            html = _read_html(crawl_dir, crawled)
            tagged = tag_article(html, crawled.url, crawled)
        except RwpostError as exc:
            reject(str(exc), type(exc).__name__, crawled)
            continue
        label, why = rating_outcome(tagged.rating)
        if label is None and why is not None and (why == UNRATED or why.startswith("unknown-rating")):
            # No Rating, no rating, or a word Table II does not know: set aside and counted, never guessed
            # (ratings excluded as not factual, e.g. Satire, pass on and are counted by the split stage).
            reject(f"rating {tagged.rating!r}: {why}", why, crawled)
            continue
        if tagged.word_count < min_words:
            reject(f"body has {tagged.word_count} words (< {min_words})", "too short", crawled)
            continue
        kept.append(tagged)
    invalid = len(rejects) - sum(reasons.values())
    if invalid:
        reasons["invalid record"] = invalid
    write_jsonl(out_dir / "articles.jsonl", sorted(kept, key=lambda a: a.id))
    write_jsonl(out_dir / "rejects.jsonl", sorted_rejects(rejects))
    report = {"in": len(kept) + len(rejects), "kept": len(kept), "rejected": dict(reasons)}
    write_json(out_dir / "report.json", report)
    return report
