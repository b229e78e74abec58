"""AgentFact, the RW-Post paper's multi-agent fact-checker (section IV), as the ``agentfact`` detector.

- :mod:`.agents`: the five agents (Strategy Planning, Text Evidence Retrieval, Image Retrieval and Analysis,
  Reasoning, Explanation Generation) as versioned prompts (``rwpost/prompts/agentfact_*.md``) with answer
  schemas, called through the project's LLM client; every call is a ledger row named ``<agent>@<model>``;
- :mod:`.workflow`: the section IV-C loop (dual reasoning, stop on confidence or 12 steps, re-planning);
- :mod:`.detector`: :class:`AgentFactDetector`, registered as ``agentfact``;
- a run's predictions in AgentFact's own ``output.jsonl`` layout: :mod:`rwpost.evaluate.export`
  (``rwpost export-run RUN --format agentfact``).

Search is a plug-in (:mod:`rwpost.evaluate.search`); every result passes the leakage guard first.
"""

from rwpost.evaluate.detectors.agentfact.detector import AgentFactDetector, explanation_text

__all__ = ["AgentFactDetector", "explanation_text"]
