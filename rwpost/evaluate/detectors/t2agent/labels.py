"""T2Agent's answer spaces: the sub-tasks' answers, the final decision (paper eqs. 4-6), and the views.

Each sub-task (one forgery source) ends in a ``Finish[...]`` answer that supports or refutes the news.
T2Agent's native answer is ``original`` or the forgery source of MMFakeBench (``textual_veracity_distortion``,
``visual_veracity_distortion``, ``mismatch``, the cross-modal consistency distortion), and so real / fake.
Two views of it reach the runner's labels:

- ``native``: real -> True, fake -> False (MMFakeBench's binary view; the 4-class answer is the first line
  of the explanation); no verified sub-task is no answer;
- ``rw-post`` (*adapted*: the paper has no "insufficient evidence" class): every sub-task may also finish
  with ``NOT ENOUGH EVIDENCE``, which verifies nothing; the answer is Unproven when no sub-task was
  verified, or when the winning probability of eq. 6 is at most ``unproven_at_most``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from rwpost.labels import Label

Verdict = Literal["support", "refute", "unverified"]

UNVERIFIED = "NOT ENOUGH EVIDENCE"
"""The answer the RW-Post view adds to every sub-task (the rule behind Unproven)."""

UNPROVEN_RULE = (
    f" If the evidence you can gather neither supports nor refutes it, please answer in the form: "
    f"Finish[{UNVERIFIED}]."
)
"""What the RW-Post view appends to each sub-task's Finish instruction."""

ORIGINAL = "original"
"""The native answer for real news."""


@dataclass(frozen=True)
class SubTask:
    """One forgery source: its expansion prompt, its native class, its two answers."""

    name: str
    prompt: str
    source: str
    """The native (MMFakeBench) class of news whose forgery comes from here."""
    support: str
    refute: str
    needs_image: bool
    task: str = ""
    """A user-defined sub-task: what it verifies (the ``t2agent_subtask`` prompt's task line)."""
    tools_of: str = ""
    """The built-in sub-task whose tools it may call (``text``, ``image`` or ``match``; "": its own)."""

    @property
    def toolset_name(self) -> str:
        """The sub-task name the tool cards list (a user-defined one borrows a built-in's)."""
        return self.tools_of or self.name

    def verdict(self, answer: str) -> Verdict | None:
        """What a Finish answer says about this source (None: not one of its answers)."""
        if answer == self.support:
            return "support"
        if answer == self.refute:
            return "refute"
        if answer == UNVERIFIED:
            return "unverified"
        return None


SUBTASKS: dict[str, SubTask] = {
    "text": SubTask(
        "text", "t2agent_text.v1", "textual_veracity_distortion", "TEXT SUPPORT", "TEXT REFUTE", False
    ),
    "image": SubTask(
        "image", "t2agent_image.v1", "visual_veracity_distortion", "IMAGE SUPPORT", "IMAGE REFUTE", True
    ),
    "match": SubTask("match", "t2agent_match.v1", "mismatch", "MATCH", "MISMATCH", True),
}
"""The sub-task nodes of the tree's first layer, in the order of the initialization prompt's [p1, p2, p3]."""

NATIVE_CLASSES: tuple[str, ...] = (ORIGINAL, *(s.source for s in SUBTASKS.values()))
"""T2Agent's native answer space (MMFakeBench's ``fake_cls`` values)."""


def normalize_answer(text: str) -> str:
    """``text_refute`` / ``Text Refute`` / `` TEXT  REFUTE `` -> ``TEXT REFUTE``."""
    return " ".join(text.replace("_", " ").upper().split())


@dataclass(frozen=True)
class Decision:
    """The final answer: the native class, its view's label, and the probabilities behind it."""

    native: str | None
    """``original``, a forgery source, or None when no sub-task was verified."""
    label: Label | None
    """None: the native view with no verified sub-task (no answer)."""
    p_real: float | None
    p_fake: dict[str, float]
    """p(fake^i) by sub-task name, verified sub-tasks only (eq. 4)."""
    early_stop: bool = False


def decide(
    verified: Mapping[str, tuple[Verdict, float]],
    *,
    view: str,
    early: tuple[str, float] | None = None,
    unproven_at_most: float = 0.5,
    subtasks: Mapping[str, SubTask] = SUBTASKS,
) -> Decision:
    """The answer from each verified sub-task's ``(verdict, S^C)``, or ``early`` = ``(sub-task, S^C)`` of
    a confident refutation that stopped the search (no aggregation).

    Eq. 4: p(fake^i) = S^C,i if sub-task i refutes, else 1 - S^C,i; eq. 5: p(real) =
    prod (1 - p(fake^i))^(1/n) over the n verified sub-tasks; eq. 6: the argmax of p(real) and the
    p(fake^i) (ties: real first, then the sub-tasks in order); ``subtasks`` names each sub-task's class."""
    if early is not None:
        name, confidence = early
        return Decision(subtasks[name].source, Label.FALSE, None, {name: confidence}, early_stop=True)
    p_fake = {
        name: (score if verdict == "refute" else 1.0 - score)
        for name, (verdict, score) in verified.items()
        if verdict in ("support", "refute")
    }
    if not p_fake:
        return Decision(None, Label.UNPROVEN if view == "rw-post" else None, None, {})
    p_real = math.prod(1.0 - p for p in p_fake.values()) ** (1.0 / len(p_fake))
    best, best_p = ORIGINAL, p_real
    for name, p in p_fake.items():
        if p > best_p:
            best, best_p = subtasks[name].source, p
    label = Label.TRUE if best == ORIGINAL else Label.FALSE
    if view == "rw-post" and best_p <= unproven_at_most:
        label = Label.UNPROVEN
    return Decision(best, label, p_real, p_fake)


__all__ = [
    "NATIVE_CLASSES",
    "ORIGINAL",
    "SUBTASKS",
    "UNPROVEN_RULE",
    "UNVERIFIED",
    "Decision",
    "SubTask",
    "decide",
    "normalize_answer",
]
