"""Label-watermark filter (paper III-C, Table S1): drop images stamped with a fact-check verdict.

Measure: the image's OCR text (local rapidocr, or the OCR text the record already carries), and
optionally a vision LLM's Table S1 answer. Decide: keyword matching (:mod:`rwpost.filters.keywords`)
under the thresholds in params, combined with the LLM answer when there is one. Matching lives in
``decide`` because it is cheap: improving the matcher never re-runs OCR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import NonNegativeInt

from rwpost.errors import RwpostError
from rwpost.filters.base import (
    KEEP,
    FilterContext,
    FilterDecision,
    Share,
    Thresholds,
    content_key,
    image_inputs,
)
from rwpost.filters.keywords import find_keywords, matched_keywords
from rwpost.filters.llm import VisionJudge, parse_watermark_answer, prompt_version, watermark_prompt
from rwpost.filters.ocr import cuda_offered, engine_version, ocr_images
from rwpost.images import ImageRefused
from rwpost.records import Candidate


class WatermarkFilter:
    """OCR (+ optional vision LLM) -> watermark keywords -> drop if the image carries a verdict label."""

    name: ClassVar[str] = "watermark"

    class Params(Thresholds):
        """Keyword matching and how it combines with the LLM (``filter.watermark`` in params.yaml)."""

        max_distance: NonNegativeInt = 2
        require_isolated: bool = False
        min_confidence: Share = 0.5
        combine: Literal["ocr", "llm", "either", "both"] = "either"
        """How OCR keywords and the LLM answer make the verdict."""

    @classmethod
    def from_context(cls, context: FilterContext) -> Self:
        """Takes the vision judge (Table S1), when there is one."""
        return cls(use_given_ocr=context.use_given_ocr, judge=context.vision_judge, judge_id=context.judge_id)

    def __init__(
        self, *, use_given_ocr: bool = True, judge: VisionJudge | None = None, judge_id: str | None = None
    ) -> None:
        """``use_given_ocr``: trust OCR text already on the record instead of reading the image again;
        ``judge``: a vision LLM callable (see :mod:`rwpost.filters.llm`), ``judge_id`` its model name."""
        self.use_given_ocr = use_given_ocr
        self.judge = judge
        self.prompt = watermark_prompt()
        llm = f"+llm:{judge_id or 'judge'}:{prompt_version(self.prompt)}" if judge else ""
        # CUDA's arithmetic is not the CPU's: its measurements are cached apart
        device = "+cuda" if cuda_offered() else ""
        self.version = f"1+rapidocr-{engine_version()}{device}{llm}"

    def input_key(self, candidate: Candidate) -> str:
        given = candidate.ocr_text if self.use_given_ocr else None
        return content_key({"ocr_text": given, **image_inputs(candidate)})

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        return self.measure_many([candidate])[0]

    def measure_many(self, candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
        """:meth:`measure` of each candidate, OCR's recognition batched over all their images."""
        outs: list[dict[str, Any]] = []
        to_read: list[tuple[dict[str, Any], str]] = []
        for candidate in candidates:
            out: dict[str, Any] = {"ocr_source": "none", "ocr_text": "", "ocr_lines": [], "llm": None}
            if self.use_given_ocr and candidate.ocr_text is not None:
                out.update(ocr_source="given", ocr_text=candidate.ocr_text)
            elif candidate.image_path and Path(candidate.image_path).is_file():
                to_read.append((out, candidate.image_path))
            else:
                out["error"] = "no image file"
            outs.append(out)
        if to_read:
            for (out, _path), lines in zip(to_read, ocr_images([p for _, p in to_read]), strict=True):
                if isinstance(lines, ImageRefused):
                    out["error"] = f"{lines.status}: {lines}"
                else:
                    out.update(
                        ocr_source="rapidocr", ocr_lines=lines, ocr_text="\n".join(x["text"] for x in lines)
                    )
        for candidate, out in zip(candidates, outs, strict=True):
            if self.judge is not None and candidate.image_path and Path(candidate.image_path).is_file():
                try:
                    out["llm"] = parse_watermark_answer(self.judge(self.prompt, Path(candidate.image_path)))
                except RwpostError as exc:
                    out["llm"] = {"error": str(exc)}
        return outs

    def decide(self, measurement: Mapping[str, Any], params: Params) -> FilterDecision:
        lines = measurement.get("ocr_lines") or []
        if lines:
            text = "\n".join(x["text"] for x in lines if x.get("confidence", 1.0) >= params.min_confidence)
        else:
            text = measurement.get("ocr_text") or ""
        counted = matched_keywords(
            find_keywords(text), max_distance=params.max_distance, require_isolated=params.require_isolated
        )
        keywords = sorted({m.keyword for m in counted})
        by_ocr = bool(keywords)
        llm = measurement.get("llm") or {}
        by_llm = bool(llm.get("watermarked")) if "watermarked" in llm else None
        combine = params.combine if by_llm is not None else "ocr"
        marked = {
            "ocr": by_ocr,
            "llm": bool(by_llm),
            "either": by_ocr or bool(by_llm),
            "both": by_ocr and bool(by_llm),
        }[combine]
        details = {
            "watermarked": marked,
            "matched_keywords": keywords,
            "matches": [m.to_dict() for m in counted],
            "ocr_text": measurement.get("ocr_text", ""),
            "ocr_source": measurement.get("ocr_source"),
            "llm": measurement.get("llm"),
            "combine": combine,
        }
        if measurement.get("error"):
            details["error"] = measurement["error"]
        if marked:
            why = f"keywords {', '.join(keywords)}" if by_ocr else f"LLM: {llm.get('reason', '')}"
            return FilterDecision(
                keep=False, reason="watermark", score=len(keywords), details={**details, "why": why}
            )
        return FilterDecision(keep=True, reason=KEEP, score=len(keywords), details=details)
