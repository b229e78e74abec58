"""Where a local model runs: the one device choice of the embedding encoder and the local VLM."""

from __future__ import annotations


def pick_device(device: str | None = None) -> str:
    """``device`` if given, else ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


__all__ = ["pick_device"]
