"""Size filter (paper III-A): article length and post image size, plus every way an image can be bad.

Articles of 90 to 2,000 words are kept and post images under 200x200 pixels dropped (the bounds come
from params). A missing, unfetchable, truncated or undecodable image, a decompression bomb, or an
animated GIF is a decision with its own reason code, never a crash. CMYK JPEGs are ordinary photos and
are kept (every consumer converts with :func:`rwpost.filters.images.open_rgb`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import Field, NonNegativeInt, model_validator

from rwpost.filters.base import (
    KEEP,
    FilterContext,
    FilterDecision,
    Thresholds,
    content_key,
    image_inputs,
)
from rwpost.filters.images import probe_image
from rwpost.records import Candidate


class SizeFilter:
    """Words of the article within bounds; the post image present, decodable and at least min x min."""

    name: ClassVar[str] = "size"
    version = "1"

    class Params(Thresholds):
        """Paper III-A bounds (``filter.size_limits`` in params.yaml)."""

        min_words: NonNegativeInt = 90
        max_words: NonNegativeInt = 2000
        min_width: NonNegativeInt = 200
        min_height: NonNegativeInt = 200
        allowed_formats: list[str] = Field(
            default_factory=lambda: ["JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF", "MPO"]
        )
        drop_animated: bool = True

        @model_validator(mode="after")
        def _words_in_order(self) -> Self:
            if self.min_words > self.max_words:
                raise ValueError(f"min_words {self.min_words} is above max_words {self.max_words}")
            return self

    @classmethod
    def from_context(cls, context: FilterContext) -> Self:
        return cls()

    def input_key(self, candidate: Candidate) -> str:
        return content_key({"word_count": candidate.word_count, **image_inputs(candidate)})

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        return {
            "word_count": candidate.word_count,
            "image": probe_image(candidate.image_path, error=candidate.image_error),
        }

    def decide(self, measurement: Mapping[str, Any], params: Params) -> FilterDecision:
        words = measurement.get("word_count")
        image = measurement.get("image") or {"status": "missing"}
        details = {"word_count": words, "image": image}
        if words is None:
            return FilterDecision(keep=False, reason="no_word_count", details=details)
        if words < params.min_words:
            return FilterDecision(keep=False, reason="too_short", score=words, details=details)
        if words > params.max_words:
            return FilterDecision(keep=False, reason="too_long", score=words, details=details)
        status = image.get("status")
        if status != "ok":
            # missing | unavailable | bomb | truncated | unreadable
            return FilterDecision(keep=False, reason=f"image_{status}", score=words, details=details)
        if image.get("format") not in params.allowed_formats:
            return FilterDecision(keep=False, reason="image_format", score=words, details=details)
        if params.drop_animated and image.get("frames", 1) > 1:
            return FilterDecision(keep=False, reason="image_animated", score=words, details=details)
        width, height = image["width"], image["height"]
        if width < params.min_width or height < params.min_height:
            return FilterDecision(
                keep=False, reason="image_too_small", score=min(width, height), details=details
            )
        return FilterDecision(keep=True, reason=KEEP, score=words, details=details)
