"""Build filter candidates from the stage outputs: tagged articles + extractions + the crawl store.

A candidate's image is the post's first image link (RW-Post has one image per sample), found in the
crawl store by URL. Lines that do not parse become :class:`rwpost.records.Reject` rows; a record with
no extraction or no downloaded image is still a candidate, and the size filter says why it goes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rwpost.images import FETCH_DELAY, ImageFetcher
from rwpost.io import read_records, sha256_file
from rwpost.records import Candidate, CrawledArticle, Extraction, ImageFile, Reject, TaggedArticle

STAGE = "filter"
"""The stage named on the rejects of unreadable input lines."""


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
        extractions = {e.id: e for e in read_records(extractions_path, Extraction, rejects=sink, stage=STAGE)}
    crawled: dict[str, CrawledArticle] = {}
    if crawl_path and Path(crawl_path).exists():
        crawled = {a.id: a for a in read_records(crawl_path, CrawledArticle, rejects=sink, stage=STAGE)}
    root = Path(crawl_root) if crawl_root else (Path(crawl_path).parent if crawl_path else Path("."))
    out: list[Candidate] = []
    for article in read_records(tagged_path, TaggedArticle, rejects=sink, stage=STAGE):
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
    candidates: Iterable[Candidate],
    store_dir: str | Path,
    *,
    timeout: float = 20.0,
    allow_loopback: bool = False,
    delay: float = FETCH_DELAY,
) -> list[Candidate]:
    """Download post images the crawl does not hold into ``store_dir/<sha256>.<ext>``, with the crawler's
    rules (:class:`rwpost.images.ImageFetcher`); a refused or failed fetch is recorded as ``image_error``."""
    out: list[Candidate] = []
    with ImageFetcher(store_dir, allow_loopback=allow_loopback, delay=delay, timeout=timeout) as fetcher:
        for candidate in candidates:
            if candidate.image_path or candidate.image_error or not candidate.image_url:
                out.append(candidate)
                continue
            got = fetcher.fetch(candidate.image_url)
            if got.error:
                out.append(candidate.model_copy(update={"image_error": got.error}))
            else:
                out.append(candidate.model_copy(update={"image_path": got.path, "image_sha256": got.sha256}))
    return out
