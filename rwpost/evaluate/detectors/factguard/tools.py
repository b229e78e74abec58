"""FactGuard's tools (paper section 3.3, appendix B): FactProbe and ClipScout.

- :class:`FactProbe`: a web search through the run's text search plug-in (``serper``: organic results
  only), results from user-generated and social media sources excluded (:data:`SOCIAL_DOMAINS`), the rest
  through the leakage guard, then the titles, snippets and sources put together as one compact report
  (the paper's "lightweight retrieval-and-snippet strategy"; no page is read). It is T2Agent's search tool
  (:class:`~rwpost.evaluate.toolkit.tools.SearchTool`): cached by content, a ledger row per call
  (``tool:FactProbe``), dropped results as ``leakage-guard:dropped:<reason>`` rows.
- :func:`clip_scout`: 4 frames sampled uniformly in the interval the model asks for, tiled 2 x 2 and scaled
  to at most :data:`rwpost.evaluate.video.MAX_GRID_SIDE` (:mod:`rwpost.evaluate.video`); at most one call
  per sample (the detector's two turns make one).
"""

from __future__ import annotations

import time
from typing import Any

from rwpost.evaluate.leakage import BlockList
from rwpost.evaluate.toolkit.tools import (
    Case,
    Observed,
    SearchTool,
    Tool,
    ToolCard,
    Trace,
    _results,
)
from rwpost.evaluate.video import Video, frames, tile
from rwpost.llm.types import ImageInput

SOCIAL_DOMAINS: frozenset[str] = frozenset(
    {
        "youtube.com", "youtu.be", "tiktok.com", "douyin.com", "kuaishou.com", "bilibili.com",
        "ixigua.com", "facebook.com", "fb.watch", "instagram.com", "threads.net", "twitter.com",
        "x.com", "reddit.com", "weibo.com", "weibo.cn", "xiaohongshu.com", "zhihu.com", "quora.com",
        "pinterest.com", "tumblr.com", "linkedin.com", "snapchat.com", "t.me", "vk.com", "medium.com",
        "rumble.com", "bitchute.com", "dailymotion.com",
    }
)  # fmt: skip
"""User-generated and social media sources FactProbe excludes (the paper's reliability heuristic)."""

SOCIAL = BlockList(SOCIAL_DOMAINS, substrings=(), source="FactProbe social and user-generated sources")

FACTPROBE = ToolCard(
    "FactProbe",
    "query",
    "Searches the web for a factual query and returns a report of the organic results' snippets "
    "(social and user-generated sources excluded).",
    ("video",),
    web=True,
)

CLIPSCOUT = "ClipScout: give an interval (start and end in seconds) and see 4 frames of it, tiled 2 x 2."

REPORT_CHARS = 2000
"""The longest FactProbe report."""


class FactProbe(SearchTool):
    """FactProbe[query] (see the module docstring)."""

    def observe(self, raw: Any, argument: str, case: Case, trace: Trace) -> Observed:
        results = _results(raw)
        social = [r for r in results if SOCIAL.blocked_domain(r.url)]
        for _ in social:
            self.excluded(trace, "social")
        kept = trace.screen(
            self.guard, [r for r in results if r not in social], case.claim_time, tool="FactProbe"
        )
        if not kept:
            return Observed(f"FactProbe report for {argument!r}: no results.")
        lines = [f"FactProbe report for {argument!r} ({len(kept)} sources):"]
        for i, r in enumerate(kept, start=1):
            source = r.url.split("/")[2] if "//" in r.url else r.url
            dated = f", {r.published}" if r.published else ""
            lines.append(f"{i}. {r.title} ({source}{dated}): {r.snippet}")
        return Observed("\n".join(lines)[:REPORT_CHARS], [r.url for r in kept])


class ClipScout(Tool):
    """ClipScout[interval] as a ledger sees it: a local tool at no cost, its rows ``clipscout`` of the agent
    ``tool:ClipScout`` (:meth:`Tool.call_row`); :func:`clip_scout` runs it."""

    card = ToolCard("ClipScout", "interval", CLIPSCOUT.removeprefix("ClipScout: "), ("video",))
    cost_usd = 0.0


CLIP_SCOUT = ClipScout()


def clip_scout(video: Video, start_s: float, end_s: float, trace: Trace) -> tuple[ImageInput, str]:
    """ClipScout: the 2 x 2 grid of 4 frames of ``[start_s, end_s]`` and a line saying which; its ledger
    row goes to ``trace`` (raises :class:`~rwpost.evaluate.video.VideoRefused`)."""
    began = time.perf_counter()
    grid = tile(frames(video, start_s, end_s, 4))
    trace.calls.append(CLIP_SCOUT.call_row(False, time.perf_counter() - began))
    return ImageInput(
        grid, "image/jpeg"
    ), f"ClipScout: 4 frames of {start_s:g}-{end_s:g} s, attached (2 x 2)."


__all__ = ["CLIPSCOUT", "CLIP_SCOUT", "FACTPROBE", "SOCIAL_DOMAINS", "ClipScout", "FactProbe", "clip_scout"]
