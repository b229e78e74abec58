"""Build filter candidates from the stage outputs: tagged articles + extractions + the crawl store.

A candidate's image is the post's first image link (RW-Post has one image per sample), found in the
crawl store by URL. Lines that do not parse become :class:`rwpost.records.Reject` rows; a record with
no extraction or no downloaded image is still a candidate, and the size filter says why it goes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from rwpost.errors import RecordError
from rwpost.filters.base import Candidate
from rwpost.filters.images import fetch_image
from rwpost.io import iter_jsonl, sha256_file
from rwpost.records import CrawledArticle, Extraction, ImageFile, Reject, TaggedArticle


def _read(path: str | Path, model: type[BaseModel], rejects: list[Reject]) -> Iterator[Any]:
    """Validated records of one JSONL file; invalid lines go to ``rejects`` with the reason."""
    for line, obj in iter_jsonl(path):
        try:
            yield model.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ()))
            reason = RecordError(
                first.get("msg", "invalid"), source=str(path), line=line, field=where or None
            )
            rid = obj.get("id") if isinstance(obj, dict) else None
            rejects.append(
                Reject(id=rid, stage="filter", reason=str(reason), source=str(path), line=line, data=obj)
            )


def _file_sha256(path: Path) -> str | None:
    try:
        return sha256_file(path)
    except OSError:
        return None


def build_candidates(
    tagged_path: str | Path,
    extractions_path: str | Path | None,
    crawl_path: str | Path | None,
    *,
    crawl_root: str | Path | None = None,
    rejects: list[Reject] | None = None,
) -> list[Candidate]:
    """One candidate per tagged article, in file order; image paths resolved under ``crawl_root``."""
    sink = rejects if rejects is not None else []
    extractions: dict[str, Extraction] = {}
    if extractions_path and Path(extractions_path).exists():
        extractions = {e.id: e for e in _read(extractions_path, Extraction, sink)}
    crawled: dict[str, CrawledArticle] = {}
    if crawl_path and Path(crawl_path).exists():
        crawled = {a.id: a for a in _read(crawl_path, CrawledArticle, sink)}
    root = Path(crawl_root) if crawl_root else (Path(crawl_path).parent if crawl_path else Path("."))
    out: list[Candidate] = []
    for article in _read(tagged_path, TaggedArticle, sink):
        extraction = extractions.get(article.id)
        post_text = extraction.post.text if extraction else None
        links = extraction.post.image_links if extraction else []
        image = _find_image(links, crawled.get(article.id))
        fields: dict[str, Any] = {}
        if links:
            fields["image_url"] = links[0]
        if image is not None:
            fields["image_url"] = image.url
            fields["image_error"] = image.error
            if image.path:
                path = root / image.path
                fields["image_path"] = str(path)
                fields["image_sha256"] = image.sha256 or _file_sha256(path)
        out.append(
            Candidate(
                id=article.id,
                word_count=article.word_count,
                claim=article.claim,
                post_text=post_text,
                **fields,
            )
        )
    return out


def _find_image(links: Iterable[str], article: CrawledArticle | None) -> ImageFile | None:
    """The crawled file of the first post image link that the crawl holds."""
    if article is None:
        return None
    for link in links:
        if (image := article.image_for(link)) is not None:
            return image
    return None


def fetch_missing(
    candidates: Iterable[Candidate], store_dir: str | Path, *, timeout: float = 20.0
) -> list[Candidate]:
    """Download post images the crawl does not hold; a failed fetch is recorded as ``image_error``."""
    out: list[Candidate] = []
    with httpx.Client(
        timeout=timeout, follow_redirects=True, headers={"User-Agent": "rwpost-filter"}
    ) as client:
        for candidate in candidates:
            if candidate.image_path or candidate.image_error or not candidate.image_url:
                out.append(candidate)
                continue
            if not candidate.image_url.startswith(("http://", "https://")):
                out.append(candidate.model_copy(update={"image_error": "not an http(s) URL"}))
                continue
            got = fetch_image(candidate.image_url, store_dir, client)
            if "error" in got:
                out.append(candidate.model_copy(update={"image_error": got["error"]}))
            else:
                out.append(
                    candidate.model_copy(update={"image_path": got["path"], "image_sha256": got["sha256"]})
                )
    return out


def candidates_from_released(path: str | Path) -> list[Candidate]:
    """Candidates from the authors' released JSONL (claim, post text, OCR; images are not released)."""
    from rwpost.ids import record_id

    out = []
    for _line, obj in iter_jsonl(path):
        out.append(
            Candidate(
                id=record_id(obj["news_url"]),
                claim=obj.get("claim"),
                post_text=obj.get("post_text"),
                image_url=obj.get("image_link"),
                ocr_text=obj.get("OCR"),
            )
        )
    return out
