"""Typed records of every pipeline stage, under one schema version.

Each stage reads and writes these models (JSONL or Parquet on disk); ``schemas/*.schema.json`` are
generated from them by ``rwpost schemas --write`` and a test fails if the two drift apart.
Every record carries ``id`` = :func:`rwpost.ids.record_id` of its fact-check article URL.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rwpost.labels import Label
from rwpost.urls import location_key, url_parts

SCHEMA_VERSION = "1.0"
"""Version of every record schema below; bump it when a field changes meaning or type."""

LinkKind = Literal["image", "video", "webpage"]
Subset = Literal["main", "challenging"]
Split = Literal["dev", "test"]


class Record(BaseModel):
    """Base of all records: strict about unknown fields, carries the schema version."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: str = SCHEMA_VERSION


# --- crawl ---------------------------------------------------------------------------------------


class ImageFile(BaseModel):
    """One downloaded image, content-addressed by its SHA-256."""

    model_config = ConfigDict(extra="forbid")

    url: str
    sha256: str | None = None
    path: str | None = None
    width: int | None = None
    height: int | None = None
    format: str | None = None
    size_bytes: int | None = None
    error: str | None = None


class VideoFile(BaseModel):
    """One downloaded video file a page embeds directly, content-addressed by its SHA-256."""

    model_config = ConfigDict(extra="forbid")

    url: str
    sha256: str | None = None
    path: str | None = None
    format: str | None = Field(default=None, description="the container (mp4, webm, ...)")
    size_bytes: int | None = None
    error: str | None = None


ClaimReviewSource = Literal["json-ld", "microdata", "rdfa", "feed"]


class ClaimReviewFacts(BaseModel):
    """One schema.org ClaimReview as the page (or feed) gives it: values verbatim, numbers in their own
    type (``"1"`` and ``1`` differ), so a record can be checked against its page byte for byte."""

    model_config = ConfigDict(extra="forbid")

    claim_reviewed: str | None = None
    rating_alternate_name: str | None = Field(default=None, description="reviewRating.alternateName")
    rating_name: str | None = Field(default=None, description="reviewRating.name")
    rating_value: str | int | float | None = None
    best_rating: str | int | float | None = None
    worst_rating: str | int | float | None = None
    appearances: list[str] = Field(
        default_factory=list, description="itemReviewed.appearance + firstAppearance URLs: the post"
    )
    item_reviewed_author: str | None = Field(default=None, description="who made the claim")
    claim_date: str | None = Field(default=None, description="itemReviewed.datePublished, verbatim")
    date_published: str | None = Field(default=None, description="the review's datePublished, verbatim")
    author: str | None = Field(default=None, description="the review's author (the fact-checker)")
    url: str | None = None
    in_language: str | None = None
    sd_license: str | None = Field(default=None, description="sdLicense (or license) of the markup")
    source: ClaimReviewSource

    @property
    def rating_words(self) -> str | None:
        """The rating's wording: alternateName, else name."""
        return self.rating_alternate_name or self.rating_name


def _unset(value: object) -> bool:
    return value is None or value == [] or value == {}


class CrawledArticle(Record):
    """One fetched fact-check page: parsed fields plus the verbatim HTML (gzip, by hash)."""

    id: str
    url: str = Field(description="canonical article URL")
    fetched_url: str | None = Field(default=None, description="the URL actually fetched")
    http_status: int
    fetched_at: datetime
    layout: str | None = Field(default=None, description="which page layout the parser recognised")
    category: str | None = None
    headline: str | None = None
    claim: str | None = None
    rating: str | None = Field(default=None, description="the Snopes rating, original wording")
    date_published: datetime | None = None
    date_modified: datetime | None = None
    author: str | None = None
    html_sha256: str | None = None
    html_path: str | None = Field(default=None, description="gzip file of the verbatim HTML")
    image_urls: list[str] = Field(default_factory=list)
    images: list[ImageFile] = Field(default_factory=list)
    videos: list[VideoFile] = Field(
        default_factory=list,
        exclude_if=lambda videos: not videos,
        description="the video files the page embeds directly (<video src=...>), downloaded",
    )
    parse_error: str | None = Field(default=None, description="why the page could not be parsed, if so")
    # The multi-site reader's fields (rwpost.sites); a Snopes record has none of them, so it is written
    # byte for byte as before.
    site: str | None = Field(default=None, exclude_if=_unset, description="the host, without www.")
    publisher: str | None = Field(default=None, exclude_if=_unset)
    language: str | None = Field(
        default=None, exclude_if=_unset, description="ISO 639 code detected from the article body"
    )
    language_declared: str | None = Field(default=None, exclude_if=_unset, description="<html lang>")
    claim_reviews: list[ClaimReviewFacts] = Field(default_factory=list, exclude_if=_unset)
    metadata_only: bool | None = Field(
        default=None,
        exclude_if=_unset,
        description="True when the page has no ClaimReview and was read from its Article metadata",
    )
    field_sources: dict[str, str] = Field(
        default_factory=dict,
        exclude_if=_unset,
        description="where each read field came from (json-ld, microdata, rdfa, feed, article, meta, ...)",
    )
    read_problems: list[str] = Field(
        default_factory=list,
        exclude_if=_unset,
        description="what the reader could not use on a page it read all the same (e.g. a JSON-LD script "
        "no repair could read)",
    )

    def image_for(self, link: str) -> ImageFile | None:
        """The downloaded image of a link as the tagged text gives it, or None.

        The tagged text resolves relative links against the canonical URL, while the crawler downloads
        them from the host the page was fetched from (a mirror, such as the loopback sample site). A link
        matches an image by URL, ignoring scheme, query and fragment, or by the same path on that host.
        """
        wanted = location_key(link)
        fetched_host = url_parts(self.fetched_url or self.url).netloc.lower()
        canonical_host = url_parts(self.url).netloc.lower()
        for image in self.images:
            key = location_key(image.url)
            if key == wanted:
                return image
            parts = url_parts(image.url)
            if (
                parts.netloc.lower() == fetched_host
                and location_key(f"//{canonical_host}{parts.path}") == wanted
            ):
                return image
        return None


# --- reformat --------------------------------------------------------------------------------------


class Link(BaseModel):
    """One link of an article body, as numbered in the tagged text."""

    model_config = ConfigDict(extra="forbid")

    id: int
    kind: LinkKind
    url: str
    anchor: str = ""
    context: str = Field(default="", description="the sentence around the link")


class TaggedArticle(Record):
    """An article as text with tagged URLs (paper III-B.2) and the link table the tags refer to."""

    id: str
    news_url: str
    headline: str | None = None
    claim: str | None = None
    rating: str | None = None
    label: Label | None = None
    category: str | None = None
    claim_time: date | None = None
    text: str
    links: list[Link] = Field(default_factory=list)
    word_count: int


# --- extract ---------------------------------------------------------------------------------------


class Post(BaseModel):
    """The claim's original post as extracted from the article."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    image_links: list[str] = Field(default_factory=list)
    video_link: str | None = None
    post_link: str | None = None


class Evidence(BaseModel):
    """One evidence item aligned with key points (paper III-B.3)."""

    model_config = ConfigDict(extra="forbid")

    id: int
    type: str = Field(description="modality as written, e.g. Text, Image, Video, Web Link, Text/Image")
    description: str | None = None
    content: str | None = None
    source: str | None = None
    url: str | None = None
    key_point_ids: list[int] = Field(default_factory=list)


class Provenance(BaseModel):
    """Who produced a record's extracted fields."""

    model_config = ConfigDict(extra="forbid")

    backend: str = Field(description="'offline', 'llm' or 'released' (imported from the authors' release)")
    model: str | None = None
    prompt_version: str | None = None
    source: str | None = Field(default=None, description="file the record was imported from, if any")


class Extraction(Record):
    """Post, rationale and evidence extracted from one tagged article."""

    id: str
    news_url: str
    post: Post
    reasoning_logic: str | None = None
    key_points: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    hallucinated_urls: list[str] = Field(
        default_factory=list, description="URLs the model returned that are not in the link table (dropped)"
    )
    provenance: Provenance


# --- filter ----------------------------------------------------------------------------------------


class Decision(Record):
    """One filter's verdict on one record: a measurement, the verdict and why (STYLE.md 1 and 10)."""

    id: str
    filter: str
    keep: bool
    reason: str = ""
    score: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Reject(Record):
    """A record set aside by a stage, kept with its data and the reason."""

    id: str | None = None
    stage: str
    reason: str
    source: str | None = None
    line: int | None = None
    data: dict[str, Any] | str | None = None


# --- funnel and filter stage ---------------------------------------------------------------------


class FunnelStep(BaseModel):
    """One line of the dataset card's funnel: how many records a step got, removed (and why) and passed on.

    Extra keys a stage adds (the filter's ``filter`` and ``version``) are kept.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    step: str
    entered: int = Field(alias="in")
    removed: int
    out: int
    reasons: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, step: str, out: int, reasons: Mapping[str, int], **extra: Any) -> FunnelStep:
        """A step that passed ``out`` records on and removed ``reasons`` (reason -> count)."""
        removed = sum(reasons.values())
        return cls(step=step, entered=out + removed, removed=removed, out=out, reasons=dict(reasons), **extra)

    def row(self) -> dict[str, Any]:
        """The step as written in ``funnel.json`` and the manifest (``in``, not ``entered``)."""
        return self.model_dump(by_alias=True)


class Candidate(BaseModel):
    """What the filters see of one record: text sizes, the claim, the post and its one image."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    word_count: int | None = Field(default=None, description="words of the fact-check article")
    claim: str | None = None
    post_text: str | None = None
    image_url: str | None = Field(default=None, description="the post image as linked in the article")
    image_path: str | None = Field(
        default=None, description="local file of the image, absolute or cwd-relative"
    )
    image_sha256: str | None = Field(default=None, description="content hash of the image file")
    image_error: str | None = Field(
        default=None, description="why the image could not be fetched, e.g. 'http 404'"
    )
    ocr_text: str | None = Field(
        default=None, description="OCR of the image already known (e.g. released records)"
    )


class FilterVerdict(BaseModel):
    """The filter stage's summary of one record (``verdicts.jsonl``): kept or not, by whom, and the fields
    later stages use."""

    model_config = ConfigDict(extra="forbid")

    id: str
    keep: bool
    dropped_by: str | None = None
    reason: str = "ok"
    cluster_id: str | None = None
    watermarked: bool | None = None
    watermark_keywords: list[str] = Field(default_factory=list)
    ocr: str | None = None
    image_required: str | None = None


# --- final sample ----------------------------------------------------------------------------------


class Image(BaseModel):
    """The post image: bytes (or a path to them) plus where it came from (bytes are base64 in JSON)."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    bytes: builtins.bytes | None = None
    path: str | None = None
    link: str | None = None
    sha256: str | None = None
    width: int | None = None
    height: int | None = None


class Sample(Record):
    """One RW-Post sample as published in the Parquet splits."""

    id: str
    claim: str
    post_text: str | None = None
    post_url: str | None = None
    image: Image | None = None
    video_link: str | None = None
    label: Label | None = Field(default=None, description="RW-Post label; None when the rating is excluded")
    label_original: str | None = Field(default=None, description="the rating as the source gave it")
    category: str | None = None
    claim_time: date | None = None
    news_url: str
    reasoning_logic: str | None = None
    key_points: list[str] | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    ocr: str | None = None
    image_required: Literal["yes", "no", "uncertain"] | None = None
    watermarked: bool | None = None
    watermark_keywords: list[str] = Field(default_factory=list)
    cluster_id: str | None = None
    split: Split | None = None
    subset: Subset | None = None
    provenance: Provenance
    extra: dict[str, Any] = Field(
        default_factory=dict, description="source fields with no column of their own, kept for round trips"
    )


class SiteSample(Sample):
    """One sample of the multi-site config (``multisite``): a :class:`Sample` of any fact-checker, with
    where it comes from, its language and verdict as written, and what may be republished. Like every
    published record it holds no article body."""

    site: str = Field(description="the fact-checker's host, without www.")
    publisher: str
    language: str | None = Field(default=None, description="ISO 639 code detected from the article body")
    rating_original: str | None = Field(default=None, description="the verdict as the publisher wrote it")
    review_date: date | None = Field(default=None, description="when the fact-check was published")
    claim_date: date | None = Field(default=None, description="when the claim appeared, if the markup says")
    licence: str = Field(description="sdLicense of the markup where given, else the site's terms")
    redistributable: bool = Field(description="True only when the licence allows republishing the text")
    claimreview_source: str | None = Field(
        default=None, description="json-ld, microdata, rdfa or feed: where the ClaimReview was read"
    )


# --- annotate (human validation, paper III-D and V-D) --------------------------------------------

PostCheck = Literal["correct", "missing", "incorrect", "false_positive"]
"""Human judgement of the extracted post link (paper III-D)."""
ImageRole = Literal["necessary", "relevant", "irrelevant"]
"""Human judgement of the post image's role for the claim (paper III-D, Figure 2)."""
VerdictStatus = Literal["agreed", "adjudicated", "disputed", "pending"]


class ValidationVerdict(Record):
    """One annotator's judgement of one record's extracted post and image, as exported from Label Studio."""

    id: str
    annotator: str = Field(description="the annotator's Label Studio e-mail")
    post_extraction: PostCheck | None = None
    image_role: ImageRole | None = None
    note: str = ""
    adjudicated: bool = Field(default=False, description="True when given in the adjudication project")
    project: str
    task_id: int
    annotation_id: int
    updated_at: datetime | None = None


class ExplanationScore(Record):
    """One annotator's scores of one explanation: 0 = no error .. 2 = severe (paper V-D, Tables S3-S5)."""

    id: str
    annotator: str
    slot: int = Field(ge=1, le=3, description="the anonymised output id the annotator saw")
    source: str = Field(
        description="who wrote the output (a detector name or 'gold'), unblinded after export"
    )
    reasoning_hallucination: int = Field(ge=0, le=2)
    evidence_hallucination: int = Field(ge=0, le=2)
    label_justification: int = Field(ge=0, le=2)
    task_id: int
    annotation_id: int


class HumanVerdict(Record):
    """The human verdict on one record after two annotators (and adjudication where they disagreed)."""

    id: str
    status: VerdictStatus = Field(
        description="agreed: both annotators gave the same answers; adjudicated: resolved in the "
        "adjudication project; disputed: waiting for adjudication; pending: fewer than two annotations yet"
    )
    post_extraction: PostCheck | None = None
    image_role: ImageRole | None = None
    annotators: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


# --- paired explanations: written by `rwpost evaluate`, read by `rwpost annotate push-explanations` ---

GOLD_SYSTEM = "gold"
"""The system name of the fact-checker's own label and rationale among the outputs of an explanation item."""


class ExplanationOutput(BaseModel):
    """One system's answer to one claim: a detector's, or the fact-checker's (:data:`GOLD_SYSTEM`)."""

    model_config = ConfigDict(extra="forbid")

    system: str
    label: str | None = Field(default=None, description="None when the system gave no usable answer")
    explanation: str | None = None
    evidence_urls: list[str] = Field(default_factory=list)

    @classmethod
    def gold(cls, sample: Sample) -> ExplanationOutput:
        """The fact-checker's output: the label, the reasoning then one ``- `` line per key point, and the
        evidence URLs."""
        parts = [sample.reasoning_logic or ""] + [f"- {k}" for k in sample.key_points or []]
        return cls(
            system=GOLD_SYSTEM,
            label=str(sample.label) if sample.label else None,
            explanation="\n".join(p for p in parts if p).strip() or None,
            evidence_urls=[e.url for e in sample.evidence if e.url],
        )


class ExplanationItem(Record):
    """One claim with the outputs to compare, one line of ``explanations.jsonl`` (paper V-D): gold first,
    then each system's output once. The human explanation evaluation shows three of them, blinded."""

    id: str
    claim: str
    post_text: str | None = None
    image_link: str | None = None
    image_path: str | None = Field(default=None, description="a local copy of the post image to show")
    news_url: str | None = None
    gold_label: str | None = None
    outputs: list[ExplanationOutput] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_output_per_system(self) -> ExplanationItem:
        systems = [o.system for o in self.outputs]
        repeated = sorted({name for name in systems if systems.count(name) > 1})
        if repeated:
            raise ValueError(f"outputs: system {', '.join(repeated)} given more than once")
        return self

    def by_system(self) -> dict[str, ExplanationOutput]:
        """The outputs by system name, in file order."""
        return {o.system: o for o in self.outputs}


ALL_MODELS: dict[str, type[BaseModel]] = {
    "crawled_article": CrawledArticle,
    "tagged_article": TaggedArticle,
    "extraction": Extraction,
    "decision": Decision,
    "reject": Reject,
    "sample": Sample,
    "site_sample": SiteSample,
    "validation_verdict": ValidationVerdict,
    "explanation_score": ExplanationScore,
    "human_verdict": HumanVerdict,
    "explanation_item": ExplanationItem,
    "funnel_step": FunnelStep,
    "candidate": Candidate,
    "filter_verdict": FilterVerdict,
}
"""Every record type by schema file name (``schemas/<name>.schema.json``)."""
