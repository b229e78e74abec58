"""A BERT encoder in plain torch: the forward pass of transformers' ``BertModel`` (SDPA attention, absolute
positions, eval mode), op for op, so its hidden states are the very same bits, without importing
transformers (about 2.5 s of a cold evaluate stage on two cores).

Read from a model folder's config.json, model.safetensors and tokenizer.json (tokenised by the
``tokenizers`` library that transformers' fast tokenizer wraps, with the same truncation and padding);
:func:`rwpost.evaluate.encoders.plain_bert` says whether a folder is such a model (else the encoder loads
it with transformers).
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from rwpost.errors import ConfigError


class Bert:
    """The encoder of a :func:`rwpost.evaluate.encoders.plain_bert` folder (without the pooler: nothing
    reads it)."""

    def __init__(self, path: Path, config: dict[str, Any]):
        from safetensors.torch import load_file

        self.hidden_size: int = config["hidden_size"]
        self.layers: int = config["num_hidden_layers"]
        self.head_size = config["hidden_size"] // config["num_attention_heads"]
        self.scaling = self.head_size**-0.5  # transformers' BertSelfAttention.scaling
        self.eps: float = config.get("layer_norm_eps", 1e-12)
        weights = load_file(path / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        self.w = {
            k.removeprefix(prefix): v
            for k, v in weights.items()
            if k.startswith(prefix) and v.is_floating_point()  # not the saved position_ids buffer
        }
        self.position_ids = torch.arange(config.get("max_position_embeddings", 512)).expand((1, -1))

    def to(self, target: str | torch.dtype) -> Bert:
        """Moved to a device, or its weights cast to a float dtype (as ``nn.Module.to``)."""
        self.w = {k: v.to(target) for k, v in self.w.items()}
        if not isinstance(target, torch.dtype):
            self.position_ids = self.position_ids.to(target)
        return self

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(
            x, (self.hidden_size,), self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps
        )

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def __call__(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        """The last hidden state, as ``BertModel(...).last_hidden_state`` computes it."""
        w = self.w
        batch, length = input_ids.shape
        x = F.embedding(input_ids, w["embeddings.word_embeddings.weight"])
        x = x + F.embedding(token_type_ids, w["embeddings.token_type_embeddings.weight"])
        x = x + F.embedding(self.position_ids[:, :length], w["embeddings.position_embeddings.weight"])
        x = self._norm(x, "embeddings.LayerNorm")
        # transformers' SDPA mask: none without padding, else (batch, 1, query, key) booleans, materialised
        mask = (
            None
            if attention_mask.all()
            else attention_mask.bool()[:, None, None, :].expand(batch, 1, length, length).contiguous()
        )
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._linear(x, f"{p}.attention.self.{n}")
                .view(batch, length, -1, self.head_size)
                .transpose(1, 2)
                for n in ("query", "key", "value")
            )
            a = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=0.0, scale=self.scaling, is_causal=False
            )
            a = a.reshape(batch, -1, length, v.shape[-1]).transpose(1, 2).contiguous()
            a = a.reshape(batch, length, -1).contiguous()
            x = self._norm(
                self._linear(a, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm"
            )
            h = F.gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(self._linear(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x


class BertTokenizer:
    """The folder's tokenizer.json as transformers' fast tokenizer runs it with ``padding=True,
    truncation="longest_first"``: truncated to ``max_length``, padded on the right to the longest text with
    the ``pad`` token (type 0, mask 0). The padding is done in numpy from the unpadded ids: a padded batch
    turned into tensors from Python lists costs more than a GPU's forward pass over it."""

    def __init__(self, path: Path, max_length: int, pad: str):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tok.enable_truncation(max_length=max_length, strategy="longest_first", direction="right")
        self._tok.no_padding()  # a tokenizer.json may pad (the shipped MiniLM's pads to 128): padded below
        pad_id = self._tok.token_to_id(pad)
        if pad_id is None:
            raise ConfigError(f"{path / 'tokenizer.json'}: no padding token {pad!r} in its vocabulary")
        self.pad_id: int = pad_id

    def lengths(self, texts: list[str]) -> list[int]:
        """Tokens per text, truncated."""
        return [len(e.ids) for e in self._tok.encode_batch(texts)]

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """``input_ids``, ``token_type_ids`` and ``attention_mask`` of ``texts``, padded."""
        encodings = self._tok.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        mask = np.arange(lengths.max(initial=0)) < lengths[:, None]
        total = int(lengths.sum())
        ids = np.full(mask.shape, self.pad_id, dtype=np.int64)
        ids[mask] = np.fromiter(chain.from_iterable(e.ids for e in encodings), np.int64, total)
        types = np.zeros(mask.shape, dtype=np.int64)
        types[mask] = np.fromiter(chain.from_iterable(e.type_ids for e in encodings), np.int64, total)
        return {
            "input_ids": torch.from_numpy(ids),
            "token_type_ids": torch.from_numpy(types),
            "attention_mask": torch.from_numpy(mask.astype(np.int64)),
        }
