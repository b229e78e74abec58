"""The scripted T2Agent backbone the T2Agent tests share (the loopback LLM server answers with it)."""

from __future__ import annotations

import re

from rwpost.labels import Label
from rwpost.records import Image
from rwpost.testing.llm import Reply, message_text
from tests.evaluate_helpers import image_bytes, make_sample, schema_of

TASKS = {"Task 1": "text", "Task 2": "image", "Task 3": "match"}
"""The prompt's sub-task heading -> the sub-task."""


class Backbone:
    """A scripted T2Agent backbone for the loopback LLM server.

    ``steps[(subtask, last action)]`` are the candidates an expansion proposes below the node whose last
    action is ``last action`` (``""``: the sub-task node); by default a sub-task finishes with its
    supporting answer. ``st[action]`` is the trajectory score (1-10) of a path ending in ``action``,
    ``sc[answer]`` the confidence score of an answer (both 5 unless given). Tools answer ``seen by <tool>``.
    """

    SUPPORT = {"text": "TEXT SUPPORT", "image": "IMAGE SUPPORT", "match": "MATCH"}

    def __init__(self, weights=(0.5, 0.2, 0.3), steps=None, st=None, sc=None) -> None:
        self.weights, self.steps, self.st, self.sc = list(weights), steps or {}, st or {}, sc or {}

    def __call__(self, body) -> Reply:
        schema, user, system = schema_of(body), message_text(body, "user"), message_text(body, "system")
        actions = re.findall(r"^Action \d+: (.*)$", user, re.MULTILINE)
        last = actions[-1] if actions else ""
        if schema == "t2agent_init":
            return Reply.answer({"probabilities": self.weights})
        if schema == "t2agent_step":
            subtask = TASKS[system.split(":")[0]]
            default = [("Finish", self.SUPPORT[subtask])]
            candidates = self.steps.get((subtask, last), default)
            return Reply.answer(
                {"candidates": [{"thought": f"try {t}", "tool": t, "input": i} for t, i in candidates]}
            )
        if schema == "t2agent_score" and system.startswith("Task: Analyze"):
            return Reply.answer({"analysis": "ok", "score": self.st.get(last, 5)})
        if schema == "t2agent_score":
            answer = re.search(r"^Answer: (.*)$", user, re.MULTILINE).group(1)
            return Reply.answer({"analysis": "ok", "score": self.sc.get(answer, 5)})
        if schema == "t2agent_observation":
            return Reply.answer({"observation": f"seen by {system.split()[4]}"})
        return Reply(status=500, error=f"unscripted schema {schema}")


def with_image(n: int, label: Label, **fields):
    """A sample whose post image is ``n``'s own colour, as bytes."""
    return make_sample(n, label, image=Image(bytes=image_bytes((10 * n, 80, 120))), **fields)
