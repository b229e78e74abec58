"""Join the stage outputs of one article into a published :class:`~rwpost.records.Sample`.

Inputs per record id: the crawled page (images on disk), the tagged article (claim, rating, category,
date), the extraction (post, rationale, evidence, provenance) and the filter decisions (measurements and
verdicts). A record that any filter rejects, or that cannot be assembled, becomes a
:class:`~rwpost.records.Reject` with its reason. Human verdicts from annotation are applied afterwards,
to the assembled samples (:mod:`rwpost.annotate.merge`, stage ``annotate_merge``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwpost.errors import UnknownRatingError
from rwpost.labels import map_rating
from rwpost.records import CrawledArticle, Decision, Extraction, Image, Reject, Sample, TaggedArticle


@dataclass
class Assembly:
    """What assembling produced: samples, rejects, and what removed the others.

    ``removed_by`` counts every removal by its cause (a filter's name, ``extraction``, ``label mapping``,
    ``assemble``); ``filtered`` the part of it a filter decided.
    """

    samples: list[Sample]
    rejects: list[Reject]
    removed_by: Counter[str]
    filtered: Counter[str] = field(default_factory=Counter)

    @property
    def removed_here(self) -> Counter[str]:
        """Removals by assembling itself (the filter stage's funnel already counts the filters')."""
        return self.removed_by - self.filtered


def _post_image(extraction: Extraction, crawled: CrawledArticle | None, crawl_root: Path) -> Image | None:
    """The first extracted post image that the crawl downloaded, with its bytes."""
    if crawled is None:
        return None
    for url in extraction.post.image_links:
        found = crawled.image_for(url)
        if found is None or not found.sha256 or not found.path:
            continue
        path = crawl_root / found.path
        if not path.exists():
            continue
        return Image(
            bytes=path.read_bytes(),
            link=url,
            sha256=found.sha256,
            width=found.width,
            height=found.height,
        )
    return None


def _measurements(decisions: Iterable[Decision]) -> dict[str, Any]:
    """Sample fields that filters measured (OCR text, watermark keywords, necessity, cluster id)."""
    out: dict[str, Any] = {}
    for decision in decisions:
        details = decision.details
        if "ocr_text" in details:
            out["ocr"] = details["ocr_text"]
        if "watermarked" in details:
            out["watermarked"] = bool(details["watermarked"])
            out["watermark_keywords"] = list(details.get("matched_keywords") or [])
        if details.get("image_required") in ("yes", "no", "uncertain"):
            out["image_required"] = details["image_required"]
        if details.get("cluster_id"):
            out["cluster_id"] = str(details["cluster_id"])
    return out


def _first_rejection(decisions: list[Decision], order: list[str]) -> Decision | None:
    rank = {name: i for i, name in enumerate(order)}
    failing = [d for d in decisions if not d.keep]
    return min(failing, key=lambda d: rank.get(d.filter, len(rank))) if failing else None


def assemble_samples(
    tagged: Iterable[TaggedArticle],
    extractions: dict[str, Extraction],
    crawled: dict[str, CrawledArticle],
    decisions: dict[str, list[Decision]],
    crawl_root: Path,
    filter_order: list[str] | None = None,
) -> Assembly:
    """Build samples for every tagged article; everything not published is returned as a reject."""
    samples: list[Sample] = []
    rejects: list[Reject] = []
    removed: Counter[str] = Counter()
    filtered: Counter[str] = Counter()
    order = filter_order or []
    for article in tagged:
        extraction = extractions.get(article.id)
        if extraction is None:
            removed["extraction"] += 1
            rejects.append(Reject(id=article.id, stage="assemble", reason="no extraction for this article"))
            continue
        try:
            label = article.label or (map_rating(article.rating).label if article.rating else None)
        except UnknownRatingError as exc:
            removed["label mapping"] += 1
            rejects.append(Reject(id=article.id, stage="assemble", reason=str(exc)))
            continue
        record_decisions = decisions.get(article.id, [])
        failing = _first_rejection(record_decisions, order)
        if failing is not None:
            removed[failing.filter] += 1
            filtered[failing.filter] += 1
            rejects.append(
                Reject(
                    id=article.id,
                    stage=f"filter:{failing.filter}",
                    reason=failing.reason,
                    data={"score": failing.score, "details": failing.details},
                )
            )
            continue
        sample = Sample(
            id=article.id,
            claim=article.claim or "",
            post_text=extraction.post.text,
            post_url=extraction.post.post_link,
            image=_post_image(extraction, crawled.get(article.id), crawl_root),
            video_link=extraction.post.video_link,
            label=label,
            label_original=article.rating,
            category=article.category,
            claim_time=article.claim_time,
            news_url=article.news_url,
            reasoning_logic=extraction.reasoning_logic,
            key_points=extraction.key_points,
            evidence=extraction.evidence,
            provenance=extraction.provenance,
            **_measurements(record_decisions),
        )
        if not sample.claim:
            removed["assemble"] += 1
            rejects.append(Reject(id=article.id, stage="assemble", reason="the page gave no claim"))
            continue
        samples.append(sample)
    return Assembly(samples=samples, rejects=rejects, removed_by=removed, filtered=filtered)
