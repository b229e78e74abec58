"""AgentFact, the RW-Post paper's multi-agent fact-checker (section IV), as the ``agentfact`` detector.

- :mod:`.agents`: the five agents (Strategy Planning, Text Evidence Retrieval, Image Retrieval and Analysis,
  Reasoning, Explanation Generation) as versioned prompts (``rwpost/prompts/agentfact_*.md``) with answer
  schemas, called through the project's LLM client; every call is a ledger row named ``<agent>@<model>``;
- :mod:`.workflow`: the section IV-C loop (dual reasoning, stop on confidence or 12 steps, re-planning);
- :mod:`.detector`: :class:`AgentFactDetector`, registered as ``agentfact``;
- :mod:`.layout`: a run's predictions in AgentFact's own ``output.jsonl`` layout.

Search is a plug-in (:mod:`rwpost.evaluate.search`); every result passes the leakage guard first.
"""

from typing import Any

from rwpost.evaluate.detectors.agentfact.detector import AgentFactDetector, explanation_text

__all__ = ["AgentFactDetector", "agentfact_rows", "explanation_text", "write_agentfact_output"]


def __getattr__(name: str) -> Any:
    # .layout is also run as a script (python -m ...agentfact.layout): imported here only when asked for,
    # so running it does not import it twice
    if name in ("agentfact_rows", "write_agentfact_output"):
        from rwpost.evaluate.detectors.agentfact import layout

        return getattr(layout, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
