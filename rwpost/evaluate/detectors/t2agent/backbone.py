"""The backbone model of T2Agent (the paper's LVLM): every prompt of the agent goes through one
:class:`~rwpost.llm.chat.ChatModel`, and every call is a ledger row named by the model and tagged with the
step that made it (``init``, ``expand:text``, ``score:trajectory``, ``score:confidence``, ``tool:VQA``...)."""

from __future__ import annotations

from typing import Any

from rwpost.evaluate.toolkit.ask import Asker
from rwpost.evaluate.toolkit.ask import prompt_hashes as toolkit_prompt_hashes
from rwpost.evaluate.toolkit.ask import schema_hashes as toolkit_schema_hashes

PROMPTS: tuple[str, ...] = (
    "t2agent_init.v1",
    "t2agent_text.v1",
    "t2agent_image.v1",
    "t2agent_match.v1",
    "t2agent_trajectory.v1",
    "t2agent_confidence.v1",
    "t2agent_vqa.v1",
    "t2agent_entity.v1",
    "t2agent_counterfactual.v1",
)
"""Every prompt file of the agent (their hashes enter the run identity)."""


def prompt_hashes() -> dict[str, str]:
    """The hash of every prompt file, by prompt name."""
    return toolkit_prompt_hashes(PROMPTS)


def schema_hashes() -> dict[str, str]:
    """The hash of every answer schema the prompts use, by schema name."""
    return toolkit_schema_hashes(PROMPTS)


def backbone(model: Any, *, temperature: float = 0.0, max_tokens: int | None = 800) -> Asker:
    """The agent's prompts over one chat model (:class:`~rwpost.evaluate.toolkit.ask.Asker`, task
    ``t2agent``): every request at ``temperature``."""
    return Asker(model, task="t2agent", temperature=temperature, max_tokens=max_tokens)


__all__ = ["PROMPTS", "backbone", "prompt_hashes", "schema_hashes"]
