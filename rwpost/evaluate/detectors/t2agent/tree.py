"""Multi-source verification MCTS (paper Algorithm 1), apart from the model and the tools that drive it.

The root's children are the sub-task nodes (one per forgery source), their value V set to the
initialization weight. Each of the ``K`` simulations:

1. **selects** a sub-task node by ``V(s') + C sqrt(ln(N(root) + 1) / (N(s') + 1))`` (Algorithm 1's
   selection line; confirmed sub-tasks are pruned from it);
2. walks down while the node is not terminal and its depth is below ``d``: a node without children is
   **expanded** into ``n`` children proposed by the model, each run (its tool, or its Finish answer) and
   scored at once (S^T, eq. 1; an answer node also S^C, eq. 2); the next node is the child with the
   highest modified UCT (eq. 3) ``V(s_t) / (N(s_t) + 1) + C sqrt(ln(N(s) + 1) / (N(s_t) + 1))``;
3. takes the leaf's value ``V = alpha S^T + (1 - alpha) S^C`` (an answer node; a node without an answer:
   ``S^T``) and **backpropagates** it as a running mean up the path, root included:
   ``V(s_t) <- (V(s_t) N(s_t) + V) / (N(s_t) + 1)``, ``N(s_t) += 1``;
4. on an answer with ``S^C >= confidence``: a supporting one **prunes** its sub-task (confirmed real), a
   refuting one **stops the search early** (the news is fake, no aggregation).

A node's own value before it is first visited is its score (S^T, or the combined value of an answer).
The search stops before ``K`` when every sub-task is confirmed. Scores are the 1-10 integers of the
prompts divided by 10.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rwpost.evaluate.detectors.t2agent.labels import Verdict


@dataclass(frozen=True)
class SearchOptions:
    """The search's hyperparameters: n, C and alpha as in the paper's experiments; K, d and the
    confidence threshold as in the MIT-licensed port (the paper does not give them)."""

    simulations: int = 12
    """K, the most simulations per sample."""
    depth: int = 4
    """d, the most actions on one path below a sub-task node."""
    children: int = 2
    """n, the children proposed at each expansion (paper: 2)."""
    exploration: float = 2.0
    """C, the UCT exploration weight (paper: 2)."""
    alpha: float = 0.5
    """Weight of S^T against S^C in an answer node's value (paper: 0.5)."""
    confidence: float = 0.8
    """An answer with S^C at least this is high-confidence: it prunes (support) or stops (refute)."""
    early_stop: bool = True
    """Stop the search on a high-confidence refutation (the paper's early stop)."""
    prune: bool = True
    """Stop exploring a sub-task once a high-confidence answer supports it (the paper's pruning)."""


@dataclass
class Node:
    """A node of the tree: the root, a sub-task node, or one Thought / Action / Observation step."""

    subtask: str
    depth: int = 0
    thought: str = ""
    tool: str = ""
    input: str = ""
    observation: str = ""
    parent: Node | None = field(default=None, repr=False)
    children: list[Node] = field(default_factory=list, repr=False)
    visits: int = 0
    value: float = 0.0
    s_t: float | None = None
    s_c: float | None = None
    answer: str | None = None
    """The Finish answer (normalized) of an answer node."""
    verdict: Verdict | None = None
    dead_end: bool = False
    """The model proposed no usable step here: nothing to expand into."""
    confirmed: bool = False
    """A sub-task node pruned by a high-confidence supporting answer."""
    urls: list[str] = field(default_factory=list)
    """URLs of the search results its observation showed."""

    @property
    def terminal(self) -> bool:
        return self.answer is not None or self.dead_end

    def path(self) -> list[Node]:
        """The steps from the sub-task node (excluded) down to this node."""
        steps, node = [], self
        while node is not None and node.depth > 0:
            steps.append(node)
            node = node.parent
        return steps[::-1]

    def reward(self, alpha: float) -> float:
        """The node's own value: ``alpha S^T + (1 - alpha) S^C`` for an answer node, else ``S^T``."""
        s_t = self.s_t or 0.0
        if self.answer is not None and self.s_c is not None:
            return alpha * s_t + (1.0 - alpha) * self.s_c
        return s_t


class Policy(Protocol):
    """What the search asks of the model and the tools."""

    async def expand(self, node: Node, memory: Sequence[str]) -> list[Node]:
        """Up to ``n`` new children of ``node`` (thought, tool, input set; not yet run)."""
        ...

    async def evaluate(self, node: Node) -> None:
        """Run the node's action (a tool, or Finish) and score it: sets observation, S^T, and for an answer
        node answer, verdict and S^C."""
        ...


def subtask_score(node: Node, root: Node, c: float) -> float:
    """Algorithm 1's selection among sub-task nodes: ``V + C sqrt(ln(N(root) + 1) / (N + 1))``."""
    return node.value + c * math.sqrt(math.log(root.visits + 1) / (node.visits + 1))


def uct(node: Node, parent: Node, c: float) -> float:
    """The modified UCT of eq. 3: ``V / (N + 1) + C sqrt(ln(N(parent) + 1) / (N + 1))``."""
    return node.value / (node.visits + 1) + c * math.sqrt(math.log(parent.visits + 1) / (node.visits + 1))


@dataclass
class Simulation:
    """One simulation, for the trace: the sub-task, the path's tools, the leaf's answer and value."""

    index: int
    subtask: str
    path: list[str]
    answer: str | None
    value: float


@dataclass
class Outcome:
    """The finished search: the tree, its simulations, how it stopped, and the early answer if any."""

    root: Node
    simulations: list[Simulation]
    stopped: str
    """``early-stop``, ``all-confirmed`` or ``exhausted`` (K simulations run)."""
    early: tuple[str, float] | None = None
    """``(sub-task, S^C)`` of the refutation that stopped the search early."""

    def subtask(self, name: str) -> Node:
        return next(c for c in self.root.children if c.subtask == name)

    def answers(self, name: str) -> list[Node]:
        """Every answer node of sub-task ``name``, in the order they were made."""
        found: list[Node] = []

        def walk(node: Node) -> None:
            for child in node.children:
                if child.answer is not None:
                    found.append(child)
                walk(child)

        walk(self.subtask(name))
        return found

    def best(self, name: str) -> Node | None:
        """The sub-task's most confident supporting or refuting answer (first made among equals)."""
        candidates = [n for n in self.answers(name) if n.verdict in ("support", "refute")]
        return max(candidates, key=lambda n: n.s_c or 0.0) if candidates else None

    def verified(self) -> dict[str, tuple[Verdict, float]]:
        """``(verdict, S^C)`` of each sub-task's best answer."""
        out: dict[str, tuple[Verdict, float]] = {}
        for child in self.root.children:
            best = self.best(child.subtask)
            if best is not None and best.verdict is not None:
                out[child.subtask] = (best.verdict, best.s_c or 0.0)
        return out


class Search:
    """Algorithm 1 over ``policy`` with ``options``; ``on_simulation`` is told after each simulation."""

    def __init__(
        self,
        policy: Policy,
        options: SearchOptions,
        on_simulation: Callable[[Simulation], Any] | None = None,
    ) -> None:
        self.policy, self.options, self.on_simulation = policy, options, on_simulation
        self.memory: dict[str, list[str]] = {}

    async def run(self, weights: dict[str, float]) -> Outcome:
        """Search a tree whose sub-task nodes are ``weights``' keys, valued by the weights."""
        o = self.options
        root = Node(subtask="root", depth=-1)
        for name, weight in weights.items():
            root.children.append(Node(subtask=name, depth=0, parent=root, value=float(weight)))
        simulations: list[Simulation] = []
        stopped, early = "exhausted", None
        for k in range(o.simulations):
            open_nodes = [c for c in root.children if not c.confirmed]
            if not open_nodes:
                stopped = "all-confirmed"
                break
            node = max(open_nodes, key=lambda c: subtask_score(c, root, o.exploration))
            path = [root, node]
            while not node.terminal and node.depth < o.depth:
                if not node.children:
                    await self._expand(node)
                    if not node.children:
                        node.dead_end = True
                        break
                parent = node
                node = max(parent.children, key=lambda c: uct(c, parent, o.exploration))
                path.append(node)
            leaf = node
            value = leaf.reward(o.alpha) if leaf.depth > 0 else 0.0
            for step in path:
                step.value = (step.value * step.visits + value) / (step.visits + 1)
                step.visits += 1
            subtask = path[1]
            simulation = Simulation(k, subtask.subtask, [n.tool for n in path[2:]], leaf.answer, value)
            simulations.append(simulation)
            if self.on_simulation is not None:
                self.on_simulation(simulation)
            if leaf.answer is None:
                tools = " -> ".join(f"{n.tool}[{n.input}]" for n in leaf.path()) or "(no step)"
                self.memory.setdefault(subtask.subtask, []).append(
                    f"{tools} ended without an answer (value {value:.2f})"
                )
                continue
            confident = (leaf.s_c or 0.0) >= o.confidence
            if confident and leaf.verdict == "support" and o.prune:
                subtask.confirmed = True
            if confident and leaf.verdict == "refute" and o.early_stop:
                stopped, early = "early-stop", (subtask.subtask, leaf.s_c or 0.0)
                break
        return Outcome(root, simulations, stopped, early)

    async def _expand(self, node: Node) -> None:
        memory = self.memory.get(node.subtask, [])
        for child in (await self.policy.expand(node, memory))[: self.options.children]:
            child.parent, child.depth, child.subtask = node, node.depth + 1, node.subtask
            await self.policy.evaluate(child)
            child.value = child.reward(self.options.alpha)
            node.children.append(child)


__all__ = ["Node", "Outcome", "Policy", "Search", "SearchOptions", "Simulation", "subtask_score", "uct"]
