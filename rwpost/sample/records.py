"""Released RW-Post records as the sample site's articles (:class:`SiteArticle`).

Every article page of the site carries a real released record's claim, rating, category, date, post
text, evidence sentences and their real URLs; the page lives at the record's ``news_url`` path so
crawled ids equal the released ids. What the release does not carry (headlines, authors, intros, the
images) is generated elsewhere in :mod:`rwpost.sample` and labelled as such.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwpost.errors import RecordError, RwpostError
from rwpost.ids import record_id, stable_seed
from rwpost.snopes.layouts import LAYOUT_2018_LATE, LAYOUT_2018_MICRODATA, LAYOUT_2020S, LAYOUT_WORDPRESS
from rwpost.urls import path_key

_RATING_WORDS = {
    "FALSE": "False",
    "TRUE": "True",
    "MIXTURE": "Mixture",
    "UNPROVEN": "Unproven",
    "SATIRE": "Satire",
    "OUTDATED": "Outdated",
}


@dataclass
class SiteEvidence:
    """One evidence item of a released record, rendered as a body paragraph with its source link."""

    content: str
    source: str | None
    url: str | None


@dataclass
class SiteArticle:
    """One article page of the sample site: released fields plus where the page lives."""

    news_url: str
    id: str
    path: str
    claim: str
    rating: str
    category: str | None
    date: str | None
    headline: str
    post_text: str | None
    post_link: str | None
    image_link: str | None
    ocr: str | None
    reasoning_logic: str | None
    evidence: list[SiteEvidence] = field(default_factory=list)
    source_file: str = ""
    image_path: str | None = None
    image_size: tuple[int, int] | None = None

    @property
    def layout(self) -> str:
        """The theme Snopes used at the article's date: :func:`layout_for_date`."""
        return layout_for_date(self.date, self.id)

    @property
    def slug(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


OLDER_THEMES = (LAYOUT_2018_MICRODATA, LAYOUT_2018_LATE, LAYOUT_WORDPRESS)
"""Themes an undated or pre-2017 page is spread across (by its id, deterministically)."""


def layout_for_date(day: str | None, article_id: str) -> str:
    """2022 on: the 2020s theme (JSON-LD); 2019-2021: WordPress; July-December 2018: the card theme;
    2017 to June 2018: the microdata theme; earlier or undated: one of :data:`OLDER_THEMES` by id."""
    if day and day[:4] >= "2022":
        return LAYOUT_2020S
    if day and day[:4] >= "2019":
        return LAYOUT_WORDPRESS
    if day and day[:7] >= "2018-07":
        return LAYOUT_2018_LATE
    if day and day[:4] >= "2017":
        return LAYOUT_2018_MICRODATA
    # the seed's top 32 bits: the committed sample site was generated from the digest's first 4 bytes
    return OLDER_THEMES[(stable_seed(article_id) >> 32) % len(OLDER_THEMES)]


def _clean(value: Any) -> str | None:
    """A released text field, or None for the release's empty markers ("None", "", null); mojibake of the
    release repaired as ``import-released`` repairs it (ftfy's ``fix_encoding``: "Risqu√© Business" is
    shown as "Risqué Business", as Snopes shows it)."""
    if value is None:
        return None
    text = str(value).strip()
    if text in ("", "None", "null"):
        return None
    from ftfy import fix_encoding

    return fix_encoding(text)


def _page_path(news_url: str) -> str:
    """Local path of a released article: the news URL's path, cleaned of the release's stray quotes."""
    return path_key(news_url)


def _headline(claim: str, rating: str) -> str:
    """A generated headline (the release carries none): the claim, shortened, with the rating."""
    words = claim.split()
    short = " ".join(words[:14]) + ("..." if len(words) > 14 else "")
    return f"Fact check ({rating}): {short}"


def article_from_released(row: dict[str, Any], *, source: str, line: int) -> SiteArticle:
    """Map one released record (flat dev format or nested demo format) to a site article."""
    news_url = _clean(row.get("news_url"))
    claim = _clean(row.get("claim"))
    if not news_url or not claim:
        raise RecordError("needs news_url and claim", source=source, line=line)
    steps = row.get("steps_in_groundtruth_generated")
    if isinstance(steps, dict):  # demo format: fields nested by pipeline step
        post = steps.get("Post") or {}
        post_text, post_link = _clean(post.get("text")), _clean(post.get("post_link"))
        image_link, ocr = _clean(post.get("image_link")), _clean(post.get("OCR"))
        reasoning = _clean((steps.get("Sub_step_1") or {}).get("reasoning_logic"))
        raw_evidence = (steps.get("Sub_step_5") or {}).get("fact_checking_evidence") or []
        evidence = [
            SiteEvidence(
                content=str(item.get("evidence_content") or ""),
                source=_clean(item.get("evidence_source")),
                url=_clean(item.get("evidence_url")),
            )
            for item in raw_evidence
        ]
        rating = str(row.get("label_original"))
    else:
        post_text, post_link = _clean(row.get("post_text")), _clean(row.get("post_link"))
        image_link, ocr = _clean(row.get("image_link")), _clean(row.get("OCR"))
        reasoning = _clean(row.get("reasoning_logic"))
        evidence = [
            SiteEvidence(
                content=str(item.get("content") or ""),
                source=_clean(item.get("source")),
                url=_clean(item.get("url")),
            )
            for item in row.get("fact_checking_evidence") or []
        ]
        label = str(row.get("label") or "").strip()
        if label.upper() not in _RATING_WORDS:
            raise RecordError(f"unknown label {label!r}", source=source, line=line, field="label")
        rating = _RATING_WORDS[label.upper()]
    return SiteArticle(
        news_url=news_url,
        id=record_id(news_url),
        path=_page_path(news_url),
        claim=claim,
        rating=rating,
        category=_clean(row.get("category")),
        date=_clean(row.get("claim_time")),
        headline=_headline(claim, rating),
        post_text=post_text,
        post_link=post_link,
        image_link=image_link,
        ocr=ocr,
        reasoning_logic=reasoning,
        evidence=evidence,
        source_file=source,
    )


def load_released_articles(released_dir: Path, names: Iterable[str]) -> list[SiteArticle]:
    """Read the released files ``names`` (JSON read directly) as site articles, each id once."""
    articles: list[SiteArticle] = []
    seen: set[str] = set()
    for name in names:
        path = released_dir / name
        if not path.exists():
            raise RwpostError(f"{path}: released file not found (needed to build the sample site)")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            article = article_from_released(json.loads(line), source=name, line=number)
            if article.id in seen:
                continue
            seen.add(article.id)
            articles.append(article)
    return articles
