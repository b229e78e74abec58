"""Explanation quality: evidence URLs against the gold evidence, key-point coverage, and the paired
explanations file for human evaluation (paper section V-C, Table IV).

The paired explanations JSONL has one :class:`~rwpost.records.ExplanationItem` per sample, the record
``rwpost annotate push-explanations`` reads::

    {"id": ..., "claim": ..., "post_text": ..., "image_link": ..., "gold_label": "False",
     "outputs": [{"system": "gold", "label": ..., "explanation": ..., "evidence_urls": [...]},
                 {"system": "<run name>", "label": ..., "explanation": ..., "evidence_urls": [...]}]}

The gold output's explanation is the sample's reasoning logic followed by its key points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import cosine_similarity

from rwpost.errors import ConfigError, failed_import
from rwpost.evaluate.contract import Prediction
from rwpost.records import GOLD_SYSTEM, ExplanationItem, ExplanationOutput, Sample
from rwpost.urls import evidence_key


def gold_urls(sample: Sample) -> set[str]:
    """The normalised URLs of a sample's gold evidence."""
    return {evidence_key(e.url) for e in sample.evidence if e.url}


def evidence_url_scores(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, Any]:
    """Precision and recall of cited evidence URLs against the gold evidence URLs.

    Macro: the mean per-sample precision (over samples citing at least one URL) and recall (over samples
    with gold URLs). Micro: over all cited and gold URLs pooled.
    """
    precisions, recalls = [], []
    hits = cited_total = gold_total = 0
    for sample, pred in zip(samples, predictions, strict=True):
        gold = gold_urls(sample)
        cited = {evidence_key(u) for u in pred.evidence_urls if u}
        found = len(gold & cited)
        hits, cited_total, gold_total = hits + found, cited_total + len(cited), gold_total + len(gold)
        if cited:
            precisions.append(found / len(cited))
        if gold:
            recalls.append(found / len(gold))
    return {
        "samples_citing": len(precisions),
        "samples_with_gold_urls": len(recalls),
        "macro_precision": float(np.mean(precisions)) if precisions else None,
        "macro_recall": float(np.mean(recalls)) if recalls else None,
        "micro_precision": hits / cited_total if cited_total else None,
        "micro_recall": hits / gold_total if gold_total else None,
    }


def key_point_coverage(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    encode: Callable[[list[str]], np.ndarray],
    *,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """How well explanations cover the gold key points: cosine similarity of the explanation's embedding
    to each key point's; a key point is covered at or above ``threshold``. Not scored (``not_scored``
    says why, beside the empty figures): no answer explains a sample with gold key points, or the local
    embedding model is not installed (the ``[embed]`` extra)."""
    pairs = [
        (p.explanation, s.key_points)
        for s, p in zip(samples, predictions, strict=True)
        if p.explanation and s.key_points
    ]
    empty = {"samples": 0, "threshold": threshold, "mean_similarity": None, "coverage": None}
    if not pairs:
        return {**empty, "not_scored": "no answer explains a sample that has gold key points"}
    try:
        explanations = encode([e for e, _ in pairs])
        points = encode([k for _, kps in pairs for k in kps])
    except (ImportError, ConfigError) as exc:
        missing = failed_import(exc)
        if missing is None:
            raise
        return {**empty, "not_scored": f"{missing} is not installed: pip install 'rwpost[embed]'"}
    sims, start = [], 0
    for i, (_, kps) in enumerate(pairs):
        sims.append(cosine_similarity(explanations[i : i + 1], points[start : start + len(kps)])[0])
        start += len(kps)
    flat = np.concatenate(sims)
    return {
        "samples": len(pairs),
        "threshold": threshold,
        "mean_similarity": float(flat.mean()),
        "coverage": float(np.mean([(s >= threshold).mean() for s in sims])),
    }


def paired_explanations(
    samples: Sequence[Sample], predictions: Sequence[Prediction], system: str
) -> list[dict[str, Any]]:
    """One :class:`~rwpost.records.ExplanationItem` per sample (as JSON): the claim and post, the gold
    output and this system's output."""
    return [
        ExplanationItem(
            id=s.id,
            claim=s.claim,
            post_text=s.post_text,
            image_link=s.image.link if s.image else None,
            news_url=s.news_url,
            gold_label=str(s.label) if s.label else None,
            outputs=[
                ExplanationOutput.gold(s),
                ExplanationOutput(
                    system=system,
                    label=str(p.label) if p.label else None,
                    explanation=p.explanation,
                    evidence_urls=list(p.evidence_urls),
                ),
            ],
        ).model_dump(mode="json")
        for s, p in zip(samples, predictions, strict=True)
    ]


def merge_paired_explanations(
    runs: Iterable[Sequence[dict[str, Any]]], run_names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Merge several runs' paired rows by id: the gold output once, then every system's, in run order.
    Two runs with one system name both stay, the later named ``system (its run_names entry)``."""
    merged: dict[str, dict[str, Any]] = {}
    owner: dict[str, int] = {}  # system name -> the run that gave it first
    for index, rows in enumerate(runs):
        for row in rows:
            target = merged.setdefault(row["id"], {**row, "outputs": []})
            seen = {o["system"] for o in target["outputs"]}
            for output in row["outputs"]:
                name = output["system"]
                if name != GOLD_SYSTEM and owner.setdefault(name, index) != index:
                    name = f"{name} ({run_names[index] if run_names else f'run {index + 1}'})"
                if name not in seen:
                    target["outputs"].append({**output, "system": name})
                    seen.add(name)
    return list(merged.values())
