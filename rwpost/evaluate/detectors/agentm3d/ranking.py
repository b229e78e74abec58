"""Best-of-N with critique-aware ranking (AgentM3D, paper section 3.2 and Algorithm 1), model-free.

Each of an agent's N candidates gets a fused score ``s = u + q`` (eq. 13): ``u`` the reward model's
score normalised to [0, 1], ``q`` the critique agent's score in [0, 1] (text and image agents; the
cross-modal agent has none, ``s = u``). The early-stopping ranking (eqs. 14-16) walks the candidates and
stops at the smallest ``m >= 2`` whose top-m average gap ``s(1) - mean(s(2..m))`` exceeds ``tau``; the
answer is the best of the top ``m``.

Algorithm 1 as printed scores all N candidates before ranking, which makes the stop change nothing
(the best of the top m is always the overall best). Here the cheap part is done for all N at once (the
reward model scores every candidate in one batch) and the expensive part lazily: candidates are
critiqued in descending reward order, the gap is taken over the candidates scored so far, and once it
exceeds ``tau`` the rest are not critiqued. That is where the paper's latency saving ("w/o ESR") comes
from; with ``early_stop=False`` every candidate is critiqued.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field


def top_m_gap(scores: Sequence[float], m: int) -> float:
    """Eq. 14: the best score minus the mean of the next ``m - 1`` (``scores`` in any order, m >= 2)."""
    ranked = sorted(scores, reverse=True)
    if not 2 <= m <= len(ranked):
        raise ValueError(f"top-m gap needs 2 <= m <= {len(ranked)}, got m={m}")
    return ranked[0] - sum(ranked[1:m]) / (m - 1)


@dataclass
class Ranking:
    """How one agent's candidates were ranked: who won, where the walk stopped, every score taken."""

    chosen: int
    """Index of the selected candidate (eq. 16)."""
    m: int
    """Candidates ranked before the stop (m*, eq. 15; N when no gap exceeded tau)."""
    stopped_early: bool
    rewards: list[float]
    critiques: dict[int, float] = field(default_factory=dict)
    """Critique scores by candidate index (only those critiqued)."""
    fused: dict[int, float] = field(default_factory=dict)
    gaps: list[float] = field(default_factory=list)
    """Delta_m for m = 2, 3, ... as the walk went."""


async def rank(
    rewards: Sequence[float],
    critique: Callable[[int], Awaitable[float]] | None,
    tau: float,
    *,
    early_stop: bool = True,
) -> Ranking:
    """Rank candidates by ``rewards`` (normalised) plus ``await critique(i)`` (None: reward only), stopping
    at the first top-m gap above ``tau`` (see the module docstring). Ties go to the earlier candidate."""
    if not rewards:
        raise ValueError("no candidates to rank")
    order = sorted(range(len(rewards)), key=lambda i: (-rewards[i], i))
    ranking = Ranking(chosen=order[0], m=len(rewards), stopped_early=False, rewards=list(rewards))
    for k, i in enumerate(order, start=1):
        q = await critique(i) if critique is not None else None
        if q is not None:
            ranking.critiques[i] = q
        ranking.fused[i] = rewards[i] + (q or 0.0)
        if k < 2:
            continue
        gap = top_m_gap(list(ranking.fused.values()), k)
        ranking.gaps.append(gap)
        if gap > tau and early_stop:
            ranking.m, ranking.stopped_early = k, k < len(rewards)
            break
    if not early_stop:  # every candidate scored: m* of eq. 15 over the full ranking, for the record
        scores = list(ranking.fused.values())
        ranking.m = next((m for m in range(2, len(scores) + 1) if top_m_gap(scores, m) > tau), len(scores))
    ranking.chosen = max(ranking.fused, key=lambda i: (ranking.fused[i], -order.index(i)))
    return ranking


__all__ = ["Ranking", "rank", "top_m_gap"]
