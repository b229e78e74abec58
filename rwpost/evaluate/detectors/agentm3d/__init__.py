"""AgentM3D (Jiang et al., "Agentic Mixed-Source Multi-Modal Misinformation Detection with Adaptive
Test-Time Scaling", 2026) as the ``agentm3d`` detector.

- :mod:`.ranking`: Best-of-N with critique-aware, early-stopping ranking (Algorithm 1), model-free;
- :mod:`.labels`: the agents' answers, the cascade's gates (eqs. 8-9), the 4-way answer and its views;
- :mod:`.reward`: the reward model R (a local sequence-classification folder, or the LLM-judge fallback);
- :mod:`.agent`: the planner, the cascade of detection agents, the critiques and the tools of one sample;
- :mod:`.detector`: :class:`AgentM3DDetector`.
"""

from rwpost.evaluate.detectors.agentm3d.detector import AgentM3DDetector

__all__ = ["AgentM3DDetector"]
