"""T2Agent on one sample: initialization, the search's expansion and evaluation, the decision.

:class:`Agent` is the :class:`~rwpost.evaluate.detectors.t2agent.tree.Policy` of one sample: it asks the
backbone for the sub-task weights (the initialization prompt, only when there is more than one sub-task),
for ``n`` candidate steps at each expansion (the sub-task's task prompt, with the tool cards of the
selected toolset it may use), runs each step's tool through the :class:`Toolbox`, and scores the step with
S^T (and an answer with S^C). :func:`run_case` runs the whole search and the decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rwpost.evaluate.detectors.t2agent.labels import (
    SUBTASKS,
    UNPROVEN_RULE,
    UNVERIFIED,
    Decision,
    SubTask,
    decide,
    normalize_answer,
)
from rwpost.evaluate.detectors.t2agent.tree import Node, Outcome, Search, SearchOptions
from rwpost.evaluate.toolkit.ask import Asker
from rwpost.evaluate.toolkit.tools import Case, Toolbox, Trace

MEMORY_SHOWN = 3
"""Failed trajectories of a sub-task shown in its expansion prompt (the most recent)."""


def trajectory_text(steps: Sequence[Node]) -> str:
    """The Thought / Action / Observation lines of a path (``(none)`` when empty)."""
    lines = []
    for i, step in enumerate(steps, start=1):
        lines += [
            f"Thought {i}: {step.thought}",
            f"Action {i}: {step.tool}[{step.input}]",
            f"Observation {i}: {step.observation}",
        ]
    return "\n".join(lines) or "(none)"


def step_schema(schema: dict[str, Any], tools: Sequence[str], n: int) -> dict[str, Any]:
    """The step schema with its tool enum narrowed to ``tools`` and Finish, and at most ``n`` candidates."""
    candidates = dict(schema["properties"]["candidates"])
    item = dict(candidates["items"])
    properties = dict(item["properties"])
    properties["tool"] = {"type": "string", "enum": [*tools, "Finish"]}
    candidates.update(items={**item, "properties": properties}, maxItems=n)
    return {**schema, "properties": {**schema["properties"], "candidates": candidates}}


@dataclass
class Result:
    """What one sample's search produced: the tree, the decision, the ledger."""

    weights: dict[str, float]
    outcome: Outcome
    decision: Decision
    trace: Trace = field(default_factory=Trace)


class Agent:
    """The search policy of one sample (see the module docstring)."""

    def __init__(
        self,
        backbone: Asker,
        toolbox: Toolbox,
        case: Case,
        options: SearchOptions,
        view: str,
        trace: Trace,
        subtasks: Mapping[str, SubTask] = SUBTASKS,
    ) -> None:
        self.backbone, self.toolbox, self.case = backbone, toolbox, case
        self.options, self.view, self.trace = options, view, trace
        self.tasks = dict(subtasks)
        """The run's sub-task set (default MMFakeBench's three), in the initialization's order."""

    def subtasks(self) -> list[str]:
        """The sub-tasks this sample has: those without an image always, the image ones with an image."""
        return [n for n, s in self.tasks.items() if self.case.image is not None or not s.needs_image]

    async def weights(self) -> dict[str, float]:
        """The sub-task nodes' initial values: the initialization prompt's [p1, p2, p3]."""
        names = self.subtasks()
        if len(names) == 1:
            return {names[0]: 1.0}
        if names == list(SUBTASKS):  # the paper's prompt for MMFakeBench's three sources
            data = await self.backbone.ask(
                "t2agent_init.v1",
                self.case.key,
                self.trace,
                agent="init",
                images=(self.case.image,),
                news=self.case.news,
            )
        else:
            from rwpost.llm import load_llm_schema

            schema = load_llm_schema("t2agent_init")
            items = {**schema["properties"]["probabilities"], "minItems": len(names), "maxItems": len(names)}
            data = await self.backbone.ask(
                "t2agent_init_sources.v1",
                self.case.key,
                self.trace,
                agent="init",
                images=(self.case.image,),
                schema={**schema, "properties": {"probabilities": items}},
                news=self.case.news,
                count=str(len(names)),
                sources="\n".join(
                    f"({i}) {self.tasks[n].source}"
                    + (f": {self.tasks[n].task}" if self.tasks[n].task else "")
                    for i, n in enumerate(names, start=1)
                ),
            )
        return {name: float(p) for name, p in zip(names, data["probabilities"], strict=True)}

    async def expand(self, node: Node, memory: Sequence[str]) -> list[Node]:
        from rwpost.llm import load_llm_schema

        subtask = self.tasks[node.subtask]
        cards = self.toolbox.cards(subtask.toolset_name, self.case)
        own = {"task": subtask.task, "support": subtask.support, "refute": subtask.refute}
        own |= {"image": "\nThe news image is attached.\n" if subtask.needs_image else ""}
        schema = step_schema(load_llm_schema("t2agent_step"), [c.name for c in cards], self.options.children)
        data = await self.backbone.ask(
            subtask.prompt,
            self.case.key,
            self.trace,
            agent=f"expand:{node.subtask}",
            images=(self.case.image,) if subtask.needs_image else (),
            schema=schema,
            news=self.case.news,
            actions="\n".join(c.line() for c in cards) or "(no tools: judge directly)",
            rule=UNPROVEN_RULE if self.view == "rw-post" else "",
            n=str(self.options.children),
            trajectory=trajectory_text(node.path()),
            memory="\n".join(f"- {m}" for m in memory[-MEMORY_SHOWN:]) or "(none)",
            **(own if subtask.task else {}),
        )
        return [
            Node(subtask=node.subtask, thought=str(c["thought"]), tool=str(c["tool"]), input=str(c["input"]))
            for c in data["candidates"]
        ]

    async def evaluate(self, node: Node) -> None:
        subtask = self.tasks[node.subtask]
        if node.tool == "Finish":
            answer = normalize_answer(node.input)
            verdict = subtask.verdict(answer)
            if verdict == "unverified" and self.view != "rw-post":
                verdict = None
            if verdict is None:
                allowed = [subtask.support, subtask.refute] + ([UNVERIFIED] if self.view == "rw-post" else [])
                node.observation = f"Invalid answer {node.input!r}: answer one of {', '.join(allowed)}."
            else:
                node.answer, node.verdict, node.observation = answer, verdict, "Sub-task finished."
        else:
            observed = await self.toolbox.call(node.tool, node.input, self.case, self.trace)
            node.observation, node.urls = observed.text, observed.urls
        steps = node.path()
        score = await self.backbone.ask(
            "t2agent_trajectory.v1",
            self.case.key,
            self.trace,
            agent="score:trajectory",
            news=self.case.news,
            subtask=subtask.name,
            trajectory=trajectory_text(steps),
        )
        node.s_t = int(score["score"]) / 10.0
        if node.answer is not None:
            score = await self.backbone.ask(
                "t2agent_confidence.v1",
                self.case.key,
                self.trace,
                agent="score:confidence",
                news=self.case.news,
                trajectory=trajectory_text(steps),
                answer=node.answer,
            )
            node.s_c = int(score["score"]) / 10.0


async def run_case(
    backbone: Asker,
    toolbox: Toolbox,
    case: Case,
    options: SearchOptions,
    *,
    view: str,
    unproven_at_most: float,
    trace: Trace,
    subtasks: Mapping[str, SubTask] = SUBTASKS,
) -> Result:
    """The search and the decision for one sample over the sub-task set ``subtasks``, its ledger in
    ``trace`` (raises ToolFailed / ModelFailed: the sample fails)."""
    agent = Agent(backbone, toolbox, case, options, view, trace, subtasks)
    weights = await agent.weights()
    outcome = await Search(agent, options).run(weights)
    decision = decide(
        outcome.verified(),
        view=view,
        early=outcome.early,
        unproven_at_most=unproven_at_most,
        subtasks=subtasks,
    )
    return Result(weights, outcome, decision, trace)


__all__ = ["Agent", "Result", "run_case", "step_schema", "trajectory_text"]
