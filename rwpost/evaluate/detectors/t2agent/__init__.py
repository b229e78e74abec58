"""T2Agent (Cui et al., "T2Agent: A Tool-augmented Multimodal Misinformation Detection Agent with Monte
Carlo Tree Search") as the ``t2agent`` detector.

- :mod:`.tree`: the multi-source verification MCTS of Algorithm 1 (sub-task nodes, modified UCT,
  expansion into n children, dual reward, backpropagation, pruning and early stop), model-free;
- :mod:`.labels`: the sub-tasks' answers, the decision of eqs. 4-6, the native and RW-Post views;
- :mod:`.tools`: the toolset behind one interface (web search and Wikipedia through the leakage guard,
  reverse image search, VQA / entity / counterfactual through the backbone, the forgery-detector slot),
  with the tool cache and a ledger row per call;
- :mod:`.backbone`: the prompts (``rwpost/prompts/t2agent_*.md``) over one chat model;
- :mod:`.agent`: one sample's search; :mod:`.detector`: :class:`T2AgentDetector`.
"""

from rwpost.evaluate.detectors.t2agent.detector import T2AgentDetector

__all__ = ["T2AgentDetector"]
