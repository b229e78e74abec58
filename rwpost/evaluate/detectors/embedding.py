"""Sentence embedding + logistic regression: the trained text baseline.

The post is embedded (claim, post text and OCR; plus the gold evidence texts in the gold-evidence cells)
with a local sentence-transformers model (:mod:`rwpost.evaluate.encoders`: CUDA in float16 when present,
else CPU in float32; a local folder only, never a download), and a scikit-learn logistic regression is
fitted on the training samples.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, PositiveInt

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Call, Capabilities, Detector, Prediction, RunContext
from rwpost.evaluate.encoders import SentenceEncoder, default_model_path, pick_precision, shared_encoder
from rwpost.evaluate.task import Cell, EvalTask, EvidenceSource
from rwpost.labels import Label
from rwpost.records import Sample

__all__ = [
    "EmbeddingDetector",
    "SentenceEncoder",
    "default_model_path",
    "pick_precision",
    "sample_text",
    "shared_encoder",
]


def sample_text(sample: Sample, cell: Cell, *, use_ocr: bool = True, evidence_chars: int = 2000) -> str:
    """The text a text-only detector sees: claim, post text, OCR, and gold evidence when allowed."""
    parts = [sample.claim, sample.post_text or ""]
    if use_ocr and sample.ocr:
        parts.append(f"Image text: {sample.ocr}")
    if cell.evidence is EvidenceSource.GOLD and sample.evidence:
        evidence = " ".join(e.content or e.description or "" for e in sample.evidence)
        parts.append(f"Evidence: {evidence[:evidence_chars]}")
    return "\n".join(p for p in parts if p)


class EmbeddingDetector(Detector):
    """Sentence embedding of the post + logistic regression trained on labelled samples."""

    name = "embedding"
    # the OCR text of an image cell, never the image itself
    # deterministic: the sentence encoder and scikit-learn's lbfgs solver use no seed
    capabilities = Capabilities(needs_training=True, uses_gpu=True, deterministic=True)

    class Config(BaseModel):
        model_config = ConfigDict(extra="forbid")

        model_path: str | None = None
        """A local sentence-transformers folder; None: the shipped all-MiniLM-L6-v2."""
        device: str | None = None
        batch_size: PositiveInt = 32
        C: float = 1.0  # noqa: N815 (scikit-learn's name)
        class_weight: Literal["balanced"] | None = "balanced"
        use_ocr: bool = True
        precision: str | None = None
        """float32, float16 or bfloat16; None: float16 on CUDA, float32 elsewhere."""

    def __init__(self, config: Config | None = None) -> None:
        super().__init__(config)
        o = self.options
        self.encoder = shared_encoder(o.model_path, o.device, o.batch_size, o.precision)
        self.device = self.encoder.device
        self._model: Any = None

    def config(self) -> dict[str, Any]:
        o = self.options
        return {
            "model": self.encoder.name,
            "model_path": str(self.encoder.path),
            "device": self.device,
            "batch_size": o.batch_size,
            "precision": self.encoder.precision,
            "head": "logistic_regression",
            "C": o.C,
            "class_weight": o.class_weight,
            "use_ocr": o.use_ocr,
        }

    def _texts(self, samples: Sequence[Sample], cell: Cell) -> list[str]:
        return [sample_text(s, cell, use_ocr=self.options.use_ocr) for s in samples]

    def fit(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> None:
        from sklearn.linear_model import LogisticRegression

        labelled = [s for s in samples if s.label is not None]
        classes = {s.label for s in labelled}
        if len(classes) < 2:
            raise ConfigError(
                f"embedding detector needs two labels or more to train, found {sorted(classes)}"
            )
        features = self.encoder(self._texts(labelled, task.cell))
        self._model = LogisticRegression(
            C=self.options.C, class_weight=self.options.class_weight, max_iter=2000, random_state=ctx.seed
        ).fit(features, [str(s.label) for s in labelled])

    def predict(self, samples: Sequence[Sample], task: EvalTask, ctx: RunContext) -> list[Prediction]:
        if self._model is None:
            raise ConfigError("embedding detector was asked to predict before fit()")
        texts = self._texts(samples, task.cell)
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
