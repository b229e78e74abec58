"""The seam between the filters and an LLM: prompts (paper Tables S1, S2) and the callables filters take.

The filters do not talk to an API. They accept a *judge*, a plain callable, so any client fits:
rwpost's own LLM client (``rwpost/llm/``, with its content-addressed cache, retries and cost
accounting; :func:`client_judges`), a local model, or a test double. The prompts are the files
``rwpost/prompts/{watermark_s1,necessity_s2}.md``. A judge returns the JSON object the prompt asks
for; :func:`parse_watermark_answer` and :func:`parse_necessity_answer` validate it, so a malformed
answer is a measurement error with the raw text kept, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from rwpost.errors import RwpostError
from rwpost.io import sha256_hex
from rwpost.prompts import load_prompt

VisionJudge = Callable[[str, Path], Mapping[str, Any]]
"""``judge(prompt, image_path) -> {"watermarked": bool, "matched_keywords": [...], "reason": str}``."""

TextJudge = Callable[[str], Mapping[str, Any]]
"""``judge(prompt) -> {"image_required": "yes" | "no" | "uncertain" | "unsure", "reason": str}``."""

Necessity = Literal["yes", "no", "uncertain"]

WATERMARK_PROMPT = "watermark_s1"
NECESSITY_PROMPT = "necessity_s2"


def prompt_version(text: str) -> str:
    """A short content hash of a rendered prompt: part of the filters' measurement versions."""
    return sha256_hex(text)[:12]


def watermark_prompt() -> str:
    """Table S1: label-watermark detection (the image goes alongside)."""
    return load_prompt(WATERMARK_PROMPT).render_user()


def necessity_prompt(claim: str) -> str:
    """Table S2 filled with one claim."""
    return load_prompt(NECESSITY_PROMPT).render_user(claim=claim)


def parse_watermark_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a Table S1 answer; raises RwpostError naming the bad field."""
    marked = answer.get("watermarked")
    if not isinstance(marked, bool):
        raise RwpostError(f"watermark answer: 'watermarked' must be true/false, found {marked!r}")
    keywords = answer.get("matched_keywords") or []
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise RwpostError(
            f"watermark answer: 'matched_keywords' must be a list of strings, found {keywords!r}"
        )
    return {"watermarked": marked, "matched_keywords": keywords, "reason": str(answer.get("reason") or "")}


def parse_necessity_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a Table S2 answer; 'unsure' (the prompt's own spelling) reads as 'uncertain'."""
    value = str(answer.get("image_required", "")).strip().lower()
    value = {"unsure": "uncertain"}.get(value, value)
    if value not in ("yes", "no", "uncertain"):
        raise RwpostError(f"necessity answer: 'image_required' must be yes/no/uncertain, found {value!r}")
    return {"image_required": value, "reason": str(answer.get("reason") or "")}


def client_judges(client: Any) -> tuple[VisionJudge, TextJudge]:
    """Judges backed by rwpost's LLM client (:class:`rwpost.llm.LLMClient`): Table S1 with the image,
    Table S2 with the claim; answers are schema-checked (``schemas/llm/{watermark,necessity}``) and
    cached by the client. A failed call raises :class:`RwpostError`, which the filters record."""
    from rwpost.llm import ImageInput, LLMRequest, load_llm_schema

    watermark, necessity = load_prompt(WATERMARK_PROMPT), load_prompt(NECESSITY_PROMPT)
    watermark_schema = load_llm_schema(watermark.schema_name)
    necessity_schema = load_llm_schema(necessity.schema_name)

    def _ask(request: Any) -> Mapping[str, Any]:
        [result] = client.run([request])
        if not result.ok or result.data is None:
            raise RwpostError(f"LLM {request.task} call for {request.key} failed: {result.error}")
        return result.data

    def vision(prompt: str, image: Path) -> Mapping[str, Any]:
        picture = ImageInput.from_path(image)
        return _ask(
            LLMRequest(
                key=picture.sha256,
                task="watermark",
                system=watermark.system,
                user=prompt,
                schema=watermark_schema,
                schema_name=watermark.schema_name,
                prompt_version=watermark.version,
                images=(picture,),
            )
        )

    def text(prompt: str) -> Mapping[str, Any]:
        return _ask(
            LLMRequest(
                key=prompt_version(prompt),
                task="necessity",
                system=necessity.system,
                user=prompt,
                schema=necessity_schema,
                schema_name=necessity.schema_name,
                prompt_version=necessity.version,
            )
        )

    return vision, text
