"""The backbone model of T2Agent (the paper's LVLM): every prompt of the agent goes through one
:class:`~rwpost.llm.chat.ChatModel`, and every call is a ledger row named by the model and tagged with the
step that made it (``init``, ``expand:text``, ``score:trajectory``, ``score:confidence``, ``tool:VQA``...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rwpost.evaluate.contract import Call
from rwpost.evaluate.detectors.t2agent.tools import ModelFailed, Trace
from rwpost.prompts import load_prompt

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
    return {name: load_prompt(name).sha256 for name in PROMPTS}


def schema_hashes() -> dict[str, str]:
    """The hash of every answer schema the prompts use, by schema name."""
    from rwpost.io import sha256_hex
    from rwpost.llm.schemas import LLM_SCHEMA_DIR

    names = sorted({load_prompt(name).schema_name for name in PROMPTS})
    return {n: sha256_hex((LLM_SCHEMA_DIR / f"{n}.schema.json").read_bytes()) for n in names}


class Backbone:
    """The agent's prompts over one chat model."""

    def __init__(self, model: Any, *, temperature: float = 0.0, max_tokens: int | None = 800) -> None:
        self.model, self.temperature, self.max_tokens = model, temperature, max_tokens

    async def ask(
        self,
        prompt_name: str,
        key: str,
        trace: Trace,
        *,
        agent: str,
        images: Sequence[Any] = (),
        schema: dict[str, Any] | None = None,
        **values: str,
    ) -> dict[str, Any]:
        """The answer of prompt ``prompt_name`` filled with ``values``; its ledger row goes to ``trace``.
        Raises :class:`ModelFailed` when the model gave no answer that satisfies the schema."""
        from rwpost.llm import LLMRequest, load_llm_schema

        prompt = load_prompt(prompt_name)
        attached = tuple(i for i in images if i is not None)
        request = LLMRequest(
            key=key,
            task=f"t2agent-{agent}",
            system=prompt.system,
            user=prompt.render_user(**values),
            schema=schema or load_llm_schema(prompt.schema_name),
            schema_name=prompt.schema_name,
            prompt_version=prompt.version,
            images=attached,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        result = await self.model.complete(request)
        trace.images_sent += len(attached)
        trace.calls.append(Call.of_result(result, self.model.name, agent=agent))
        if not result.ok or result.data is None:
            raise ModelFailed(f"model answer rejected ({agent}): {result.error}")
        return result.data


__all__ = ["PROMPTS", "Backbone", "prompt_hashes", "schema_hashes"]
