"""Assembling stage outputs into samples: filters and human verdicts decide, rejects keep reasons."""

from datetime import UTC, date, datetime

from rwpost.assemble import assemble_samples
from rwpost.ids import record_id
from rwpost.records import (
    CrawledArticle,
    Decision,
    Evidence,
    Extraction,
    ImageFile,
    Post,
    Provenance,
    TaggedArticle,
)


def _article(slug: str, rating: str = "False") -> TaggedArticle:
    url = f"https://www.snopes.com/fact-check/{slug}/"
    return TaggedArticle(
        id=record_id(url),
        news_url=url,
        claim=f"claim {slug}",
        rating=rating,
        category="Fauxtography",
        claim_time=date(2021, 5, 1),
        text="...",
        word_count=300,
    )


def _extraction(article: TaggedArticle, image: str | None = None) -> Extraction:
    return Extraction(
        id=article.id,
        news_url=article.news_url,
        post=Post(text="post", image_links=[image] if image else [], post_link="https://x.com/p/1"),
        reasoning_logic="because",
        key_points=["k1"],
        evidence=[Evidence(id=1, type="Text", url="https://e.org/1", key_point_ids=[1])],
        provenance=Provenance(backend="offline", prompt_version="offline-1"),
    )


def test_kept_record_becomes_a_sample_with_image_bytes_and_measurements(tmp_path):
    article = _article("a")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "ab.jpg").write_bytes(b"\xff\xd8jpeg")
    crawled = CrawledArticle(
        id=article.id,
        url=article.news_url,
        http_status=200,
        fetched_at=datetime.now(UTC),
        images=[ImageFile(url="https://m/a.jpg", sha256="ab", path="images/ab.jpg", width=640, height=480)],
    )
    decisions = [
        Decision(
            id=article.id,
            filter="watermark",
            keep=True,
            details={"ocr_text": "HELLO", "watermarked": False, "matched_keywords": []},
        ),
        Decision(id=article.id, filter="near_duplicates", keep=True, details={"cluster_id": "c7"}),
    ]
    result = assemble_samples(
        [article],
        {article.id: _extraction(article, "https://m/a.jpg")},
        {article.id: crawled},
        {article.id: decisions},
        tmp_path,
    )
    (sample,) = result.samples
    assert sample.image.bytes == b"\xff\xd8jpeg" and sample.image.width == 640
    assert sample.ocr == "HELLO" and sample.watermarked is False and sample.cluster_id == "c7"
    assert str(sample.label) == "False" and sample.label_original == "False"
    assert result.rejects == []


def test_first_failing_filter_in_order_is_the_reason(tmp_path):
    article = _article("b")
    decisions = [
        Decision(id=article.id, filter="watermark", keep=False, reason="FAKE stamp"),
        Decision(id=article.id, filter="size", keep=False, reason="image 100x80 < 200x200"),
    ]
    result = assemble_samples(
        [article],
        {article.id: _extraction(article)},
        {},
        {article.id: decisions},
        tmp_path,
        filter_order=["size", "watermark"],
    )
    assert result.samples == []
    (reject,) = result.rejects
    assert reject.stage == "filter:size" and "200x200" in reject.reason
    assert result.removed_by == {"size": 1}


def test_missing_extraction_and_unknown_rating_are_rejects_not_silent_drops(tmp_path):
    no_extraction, odd = _article("e"), _article("f", rating="Pants on Fire")
    result = assemble_samples([no_extraction, odd], {odd.id: _extraction(odd)}, {}, {}, tmp_path)
    assert result.samples == []
    reasons = sorted(r.reason for r in result.rejects)
    assert reasons[0] == "no extraction for this article" and "unknown Snopes rating" in reasons[1]
