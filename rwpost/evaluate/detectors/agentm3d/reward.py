"""AgentM3D's reward model R (paper eq. 11): a local sequence-classification reward model, or an LLM judge.

:class:`LocalRewardModel` loads a Hugging Face reward model folder with ``transformers``
(``AutoTokenizer`` + ``AutoModelForSequenceClassification``, never downloaded; the paper's
GRM-Gemma2-2B-rewardmodel-ft is such a folder): each candidate is the chat (agent prompt as the user turn,
the candidate's label and reasoning as the assistant turn) rendered by the folder's chat template, and its
reward is the first logit. Candidates that arrive together (every candidate of a sample, and the samples
of the dataset awaiting at the same time) are scored in one batch, split on failure like the local chat
model. bf16 on CUDA, float32 on CPU. Rewards are unbounded logits: ``u = sigmoid(logit)`` puts them on the
critique's [0, 1] scale (eq. 13's "independently normalised").

:class:`JudgeReward` is the fallback when no folder is given: one call of the run's chat model per
candidate with the ``agentm3d_judge`` prompt, a score in [0, 1]. Manifests and reports name it
``llm-judge (fallback)``: it is not the paper's reward model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.llm.local import Coalescer, pick_device, pick_dtype, require_model_folder

FALLBACK = "llm-judge (fallback)"
"""How a run names the LLM judge that stands in for the reward model."""


def sigmoid(x: float) -> float:
    """A reward logit on [0, 1]."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@dataclass
class Scored:
    """The rewards of one group of candidates: normalised scores, raw logits, tokens and seconds."""

    scores: list[float]
    raw: list[float]
    tokens_in: int = 0
    latency_s: float = 0.0


@lru_cache(maxsize=1)
def load_reward_model(path: str, device: str, dtype: str) -> tuple[Any, Any]:
    """``(tokenizer, model)`` of a local reward model folder, on ``device`` in eval mode (kept loaded)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = require_model_folder(path, "reward model")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(
            str(folder), local_files_only=True, dtype=pick_dtype(device, dtype or None)
        )
    except (OSError, ValueError, KeyError) as exc:
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"reward model: cannot load {folder} ({problem[:300]})") from exc
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:  # batched scoring finds each row's last token by the pad id
        model.config.pad_token_id = tokenizer.pad_token_id
    return tokenizer, model.to(device).eval()


class LocalRewardModel:
    """A local sequence-classification reward model (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 32,
        max_length: int = 2048,
    ) -> None:
        self.model_path = str(Path(path).expanduser().resolve())
        self.name = f"reward:{Path(self.model_path).name}"
        self.device = pick_device(device)
        self.dtype_name = str(pick_dtype(self.device, dtype)).removeprefix("torch.")
        self.batch_size, self.max_length = max(1, int(batch_size)), int(max_length)
        self.tokenizer, self.model = load_reward_model(self.model_path, self.device, dtype or "")
        self.batches = 0
        self._batcher = Coalescer(self._score_pending)

    def config(self) -> dict[str, Any]:
        return {
            "reward_model": self.model_path,
            "reward_model_type": getattr(self.model.config, "model_type", None),
            "reward_device": self.device,
            "reward_dtype": self.dtype_name,
        }

    def text(self, prompt: str, response: str) -> str:
        """One candidate as the reward model reads it: the folder's chat template, else plain turns."""
        chat = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(chat, tokenize=False)
        return f"User: {prompt}\nAssistant: {response}"

    def logits(self, texts: Sequence[str]) -> tuple[list[float], list[int]]:
        """The reward logit of each text and its token count, in batches of ``batch_size``."""
        import torch

        rewards, lengths = [], []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            inputs = self.tokenizer(
                chunk, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
            ).to(self.device)
            self.batches += 1
            with torch.inference_mode():
                out = self.model(**inputs).logits[:, 0].float().tolist()
            rewards += [float(x) for x in out]
            lengths += [int(x) for x in inputs["attention_mask"].sum(dim=1).tolist()]
        return rewards, lengths

    async def score(self, prompt: str, responses: Sequence[str]) -> Scored:
        """The rewards of ``responses`` to ``prompt``, scored with whatever else awaits at the same time."""
        return await self._batcher.submit([self.text(prompt, r) for r in responses])

    def _score_pending(self, groups: list[list[str]]) -> list[Scored]:
        """The candidates of every caller that awaited together, in one pass of batches."""
        began = time.perf_counter()
        raw, lengths = self.logits([t for group in groups for t in group])
        share = (time.perf_counter() - began) / max(sum(len(g) for g in groups), 1)
        out, at = [], 0
        for group in groups:
            mine, tokens = raw[at : at + len(group)], lengths[at : at + len(group)]
            at += len(group)
            out.append(Scored([sigmoid(x) for x in mine], mine, sum(tokens), share * len(group)))
        return out

    async def aclose(self) -> None:
        await self._batcher.aclose()


__all__ = ["FALLBACK", "LocalRewardModel", "Scored", "load_reward_model", "sigmoid"]
