"""FactGuard (Li et al., "FactGuard: Agentic Video Misinformation Detection via Reinforcement Learning",
2026) at inference as the ``factguard`` detector: :mod:`.tools` (FactProbe, ClipScout), :mod:`.detector`."""

from rwpost.evaluate.detectors.factguard.detector import FactGuardDetector

__all__ = ["FactGuardDetector"]
