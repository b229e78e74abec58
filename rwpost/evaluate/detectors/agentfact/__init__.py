"""AgentFact, the RW-Post paper's multi-agent fact-checker (section IV), as the ``agentfact`` detector.

- :mod:`.agents`: the five agents (Strategy Planning, Text Evidence Retrieval, Image Retrieval and Analysis,
  Reasoning, Explanation Generation) as versioned prompts (``rwpost/prompts/agentfact_*.md``) with answer
  schemas, called through the project's LLM client; every call is a ledger row named ``<agent>@<model>``;
- :mod:`.workflow`: the section IV-C loop (dual reasoning, stop on confidence or 12 steps, re-planning);
- :mod:`.detector`: :class:`AgentFactDetector`, registered as ``agentfact``;
- :mod:`.layout`: a run's predictions in AgentFact's own ``output.jsonl`` layout.

Search is a plug-in (:mod:`rwpost.evaluate.search`); every result passes the leakage guard first.
"""

from rwpost.evaluate.detectors.agentfact.detector import AgentFactDetector, explanation_text
from rwpost.evaluate.detectors.agentfact.layout import agentfact_rows, write_agentfact_output

__all__ = ["AgentFactDetector", "agentfact_rows", "explanation_text", "write_agentfact_output"]
