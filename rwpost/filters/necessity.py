"""Image-necessity filter (paper III-C, Table S2): keep claims whose verification needs the image.

The answer is yes / no / uncertain and only *yes* is kept (paper III-C). An LLM answers with the
Table S2 prompt when a judge is given; otherwise the offline rules below answer (the default run):

1. **yes** when the claim names visual evidence: a visual medium (photo, picture, image, video,
   footage, screenshot, meme, map, chart, poster, sign, billboard, flyer, cover, tattoo, ...) or a
   seeing verb (depicts, pictured, seen, spotted, looks like, caught on camera).
2. **no** when it has no such cue but reads as a statement about words, numbers or rules (said,
   quoted, tweeted, wrote, law, bill, percent, study, poll, price, voted, announced).
3. **uncertain** otherwise: an event claim ("Thirty Marines were killed...") that an image may or may
   not prove; the rules cannot tell, and only an LLM or a human can.

Rule 1 is deliberately broad (a claim naming a photo is almost always about it); rules 2 and 3 fail
closed. On the authors' released records (all judged *yes* by GPT-4o) the rules answer yes for about
three in four (74 of 97, ``benchmarks/necessity_rules.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import Field

from rwpost.errors import RwpostError
from rwpost.filters.base import KEEP, FilterContext, FilterDecision, Thresholds, content_key
from rwpost.filters.llm import TextJudge, necessity_prompt, parse_necessity_answer, prompt_version
from rwpost.records import Candidate

_VISUAL = re.compile(
    r"\b(?:photo\w*|pic|pics|picture[sd]?|pictured|image\w*|imagery|video\w*|footage|clip|screen\s?shot\w*|"
    r"selfie\w*|snapshot\w*|meme\w*|graphic\w*|illustration\w*|painting\w*|drawing\w*|cartoon\w*|"
    r"maps?|charts?|graphs?|infographic\w*|signs?|signage|billboards?|posters?|fl[iy]ers?|"
    r"advertisement\w*|ads?|labels?|tattoo\w*|logos?|banners?|murals?|statues?|covers?|t-?shirts?|"
    r"depict\w*|shows?|showing|shown|seen|spotted|looks? like|caught on camera|camera|visual\w*|satellite)\b",
    re.IGNORECASE,
)
_VERBAL = re.compile(
    r"\b(?:said|says|say|stated?|quot\w*|tweet(?:ed|s)?|wrote|writes|law|laws|bill|bills|percent|%|"
    r"study|studies|poll\w*|statistic\w*|price\w*|costs?|voted?|votes|announced?|declared?|signed|passed)\b",
    re.IGNORECASE,
)

RULES_VERSION = "rules-1"


def rule_answer(claim: str | None) -> dict[str, Any]:
    """The offline answer for one claim (see the module docstring for the rules)."""
    text = (claim or "").strip()
    if not text:
        return {"image_required": "uncertain", "reason": "no claim text", "cues": []}
    visual = sorted({m.group(0).lower() for m in _VISUAL.finditer(text)})
    if visual:
        return {
            "image_required": "yes",
            "reason": f"names visual evidence: {', '.join(visual)}",
            "cues": visual,
        }
    verbal = sorted({m.group(0).lower() for m in _VERBAL.finditer(text)})
    if verbal:
        return {
            "image_required": "no",
            "reason": f"a claim about words or numbers: {', '.join(verbal)}",
            "cues": verbal,
        }
    return {"image_required": "uncertain", "reason": "no visual or verbal cue", "cues": []}


class NecessityFilter:
    """Does the claim need its image? LLM (Table S2) when a judge is given, else the offline rules."""

    name: ClassVar[str] = "necessity"

    class Params(Thresholds):
        """Which answers keep a record (``filter.necessity`` in params.yaml)."""

        keep_answers: list[Literal["yes", "no", "uncertain", True, False]] = Field(
            default_factory=lambda: ["yes"]
        )
        """Paper III-C keeps only 'yes'; YAML reads a bare yes / no as a boolean, so both spellings pass."""

    @classmethod
    def from_context(cls, context: FilterContext) -> Self:
        """Takes the text judge (Table S2), when there is one."""
        return cls(judge=context.text_judge, judge_id=context.judge_id)

    def __init__(self, *, judge: TextJudge | None = None, judge_id: str | None = None) -> None:
        self.judge = judge
        template = necessity_prompt("{claim}")
        self.version = (
            f"1+llm:{judge_id or 'judge'}:{prompt_version(template)}" if judge else f"1+{RULES_VERSION}"
        )

    def input_key(self, candidate: Candidate) -> str:
        return content_key({"claim": candidate.claim})

    def measure(self, candidate: Candidate) -> dict[str, Any]:
        if self.judge is None:
            return {"source": "rules", **rule_answer(candidate.claim)}
        if not (candidate.claim or "").strip():
            return {"source": "llm", "image_required": "uncertain", "reason": "no claim text"}
        try:
            answer = parse_necessity_answer(self.judge(necessity_prompt(candidate.claim or "")))
        except RwpostError as exc:
            return {
                "source": "llm",
                "image_required": "uncertain",
                "reason": "invalid answer",
                "error": str(exc),
            }
        return {"source": "llm", **answer}

    def decide(self, measurement: Mapping[str, Any], params: Params) -> FilterDecision:
        # YAML 1.1 reads an unquoted yes / no as a boolean: accept both spellings
        keep = {
            {True: "yes", False: "no"}.get(a, a) if isinstance(a, bool) else str(a)
            for a in params.keep_answers
        }
        answer = measurement.get("image_required", "uncertain")
        score = {"yes": 1.0, "uncertain": 0.5, "no": 0.0}.get(answer)
        details = {
            "image_required": answer,
            "why": measurement.get("reason", ""),
            "source": measurement.get("source"),
        }
        if answer in keep:
            return FilterDecision(keep=True, reason=KEEP, score=score, details=details)
        return FilterDecision(keep=False, reason=f"image_required_{answer}", score=score, details=details)
