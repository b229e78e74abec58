"""One sample's transcript: the ledger rows of every model and tool call, the guard's drops, images sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from rwpost.evaluate.contract import Call
from rwpost.evaluate.leakage import DROPPED, LeakageGuard, SearchResult


@dataclass
class Trace:
    """What one sample's run recorded: ledger rows (:class:`Call`), the results the leakage guard dropped
    (each also a zero-cost ledger row naming its reason) and the images sent to a model."""

    calls: list[Call] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    images_sent: int = 0

    def answered(self, result: Any, model: str, *, agent: str | None = None, images: int = 0) -> None:
        """The ledger row of one model answer (:class:`~rwpost.llm.ChatResult`) with ``images`` sent."""
        self.images_sent += images
        self.calls.append(Call.of_result(result, model, agent=agent))

    def drop(self, url: str, reason: str, **where: str) -> None:
        """A result set aside before any agent saw it: kept with its reason (and ``where``: the tool or
        query), and a zero-cost ledger row the leakage report counts."""
        self.dropped.append({"url": url, "reason": reason, **where})
        self.calls.append(Call(kind="tool", name=f"{DROPPED}{reason}", cost_usd=0.0))

    def screen(
        self, guard: LeakageGuard, results: list[SearchResult], claim_time: date | None, **where: str
    ) -> list[SearchResult]:
        """The results ``guard`` keeps; each dropped one is recorded (:meth:`drop`)."""
        screened = guard.screen(results, claim_time)
        for dropped in screened.dropped:
            self.drop(dropped.result.url, dropped.reason, **where)
        return screened.kept


__all__ = ["Trace"]
