"""AgentM3D's answer spaces: each detection agent's labels, the cascade's gates (eqs. 8-9), the final
4-way answer and its two views.

The paper's answer is one of four mixed-source classes (MMFakeBench's ``fake_cls``): ``original``,
``textual_veracity_distortion``, ``visual_veracity_distortion`` and ``mismatch`` (the cross-modal
consistency distortion). Each detection agent answers ``original`` or its own distortion; the first agent
that finds a distortion ends the cascade and names the class, and a post that passes every activated agent
is ``original``. Two views reach the runner's labels:

- ``native``: original -> True, any distortion -> False (the binary view of MMFakeBench and the Combined
  benchmark); the 4-way answer is the first line of the explanation (:func:`native_class` reads it);
- ``rw-post`` (*adapted*: the paper has no "insufficient evidence" class): every agent may also answer
  ``not_enough_evidence``, which is no distortion (the cascade goes on, eq. 8's delta is 0); the answer is
  False when an agent found a distortion, else Unproven when an agent lacked evidence, else True.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rwpost.labels import Label

ORIGINAL = "original"
NOT_ENOUGH_EVIDENCE = "not_enough_evidence"
"""The answer the RW-Post view adds to every agent (the rule behind Unproven)."""

AGENTS: dict[str, str] = {
    "text": "textual_veracity_distortion",
    "image": "visual_veracity_distortion",
    "cross": "mismatch",
}
"""Each detection agent, in cascade order, with the distortion class it detects."""

CLASSES: tuple[str, ...] = (ORIGINAL, *AGENTS.values())
"""The paper's 4-way answer space (MMFakeBench's order)."""

VIEWS = {
    "rw-post": "RW-Post 3-class (adapted: not_enough_evidence answers; False / Unproven / True)",
    "native": "AgentM3D native (original -> True, a distortion -> False; the 4-way answer explained)",
}

HEAD = "AgentM3D answer: "
"""The explanation's first line starts with this, then the 4-way class."""


def agent_labels(agent: str, view: str) -> list[str]:
    """The labels agent ``agent`` may answer in ``view``."""
    return [ORIGINAL, AGENTS[agent]] + ([NOT_ENOUGH_EVIDENCE] if view == "rw-post" else [])


def distorted(label: str) -> bool:
    """Eq. 8's delta: the agent found a distortion (``not_enough_evidence`` is none)."""
    return label in AGENTS.values()


@dataclass(frozen=True)
class Decision:
    """The cascade's answer: the 4-way class and its view's label."""

    native: str
    label: Label


def decide(answers: Mapping[str, str], *, view: str) -> Decision:
    """The answer from the agents that ran (``answers``: agent -> label, in cascade order)."""
    for label in answers.values():
        if distorted(label):
            return Decision(label, Label.FALSE)
    if view == "rw-post" and NOT_ENOUGH_EVIDENCE in answers.values():
        return Decision(ORIGINAL, Label.UNPROVEN)
    return Decision(ORIGINAL, Label.TRUE)


def native_class(prediction: object) -> str:
    """The 4-way answer from a prediction's explanation (``X``, MMFakeBench's unparsed class, if none)."""
    first = (getattr(prediction, "explanation", None) or "").split("\n", 1)[0]
    value = first.removeprefix(HEAD).split(" (")[0].strip()
    return value if value in CLASSES else "X"


__all__ = [
    "AGENTS",
    "CLASSES",
    "HEAD",
    "NOT_ENOUGH_EVIDENCE",
    "ORIGINAL",
    "VIEWS",
    "Decision",
    "agent_labels",
    "decide",
    "distorted",
    "native_class",
]
