"""A run folder in the AgentFact authors' own output layout, so their analysis scripts read rwpost's runs.

``rwpost export-run RUN --format agentfact --out DIR``: one run gives ``DIR/output.jsonl`` and
``DIR/output_failed.jsonl``; a grid folder (run folders side by side, as ``rwpost evaluate`` writes a grid)
gives ``DIR/<model>/<T|TI|TE|TIE>[_k<K>]/`` as their ``run_baseline_eval.py`` lays it out. Each answered
sample is one row as their runners write it:

- ``claim_id`` (the sample's position), ``post_info`` {``claim``, ``post_text``, ``post_image``,
  ``claim_time``, ``news_url`` (their join key), ``merged_label`` (the gold label upper case, the released
  spelling), ``fake_type``};
- ``setting`` and ``model`` for runs of any detector but ``agentfact`` (their baseline layout);
- ``evidence_meta`` {``total_count``, ``shown_count``} in gold-evidence cells (their ablation analysis
  skips rows without it);
- ``context["information list with link"]``: ``[{id, content, link}]`` of the evidence the answer cites
  (content from the gold evidence where the id names a gold item);
- ``final_answer.updated_answer``: ``validation_result`` {``3-class_authenticity_label`` (lower case for
  the main workflow, upper case for baselines, as theirs), ``reasoning_logic``, ``key_points`` (each
  point once, without its id list doubled), ``evidence_ids``} and ``confidence_level`` (1-5).

Failed samples go to ``output_failed.jsonl``: the bare ``post_info`` for the main workflow, ``{claim_id,
news_url, raw_output, error}`` for baselines, as their resume logic expects.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rwpost.errors import ConfigError
from rwpost.evaluate.contract import Prediction
from rwpost.io import write_text
from rwpost.records import Sample

FORMATS = ("agentfact",)
_IDS = re.compile(r"\s*\[((?:[A-Za-z]*\d+(?:,\s*)?)+)\]\s*$")


def _key_point(line: str) -> tuple[str, list[str]]:
    """A ``- point [T1, T2]`` explanation line as the point and its ids (the ids written once)."""
    text = line[2:].strip()
    match = _IDS.search(text)
    if not match:
        return text, []
    return text[: match.start()].rstrip(), [x.strip() for x in match.group(1).split(",")]


def _gold_content(sample: Sample, evidence_id: str) -> str:
    number = evidence_id.lstrip("G")
    for item in sample.evidence:
        if str(item.id) == number:
            return item.content or ""
    return ""


def _post_info(sample: Sample, image_root: Path | None) -> dict[str, Any]:
    image = None
    if sample.image is not None and sample.image.path:
        image = str(image_root / sample.image.path) if image_root else sample.image.path
    return {
        "claim": sample.claim,
        "post_text": sample.post_text,
        "post_image": image,
        "claim_time": sample.claim_time.isoformat() if sample.claim_time else None,
        "news_url": sample.news_url,
        "merged_label": str(sample.label).upper() if sample.label else None,
        "fake_type": sample.label_original or "",
    }


def agentfact_row(
    claim_id: int,
    sample: Sample,
    prediction: Prediction,
    *,
    setting: str,
    model: str | None,
    baseline: bool,
    k: int | None,
    image_root: Path | None = None,
) -> dict[str, Any]:
    """One ``output.jsonl`` row (module docstring)."""
    lines = (prediction.explanation or "").splitlines()
    logic = "\n".join(x for x in lines if not x.startswith("- ")).strip()
    points = [_key_point(x) for x in lines if x.startswith("- ")]
    cited = list(dict.fromkeys(i for _, ids in points for i in ids))
    label = str(prediction.label) if prediction.label else None
    label = label.upper() if baseline and label else label.lower() if label else None
    confidence = None
    if prediction.probabilities and prediction.label in prediction.probabilities:
        confidence = str(max(1, min(5, round(prediction.probabilities[prediction.label] * 5))))
    links = list(prediction.evidence_urls)
    information = [
        {"id": i, "content": _gold_content(sample, i) if i.startswith("G") else "", "link": None}
        for i in cited
    ]
    for n, item in enumerate(information):
        item["link"] = links[n] if n < len(links) else None
    row: dict[str, Any] = {"claim_id": claim_id, "post_info": _post_info(sample, image_root)}
    if baseline:
        row["setting"], row["model"] = setting, model
    row["context"] = {"information list with link": information}
    row["final_answer"] = {
        "updated_answer": {
            "validation_result": {
                "3-class_authenticity_label": label,
                "reasoning_logic": logic,
                "key_points": [p for p, _ in points],
                "evidence_ids": cited,
            },
            "confidence_level": confidence,
            "evidence": links,
        },
        "tokens_cost": sum(c.tokens_in + c.tokens_out for c in prediction.calls),
    }
    if "+E" in setting:
        total = len(sample.evidence)
        row["evidence_meta"] = {"total_count": total, "shown_count": total if k is None else min(k, total)}
    return row


def _read_run(run: Path) -> tuple[dict[str, Any], list[Prediction]]:
    from rwpost.evaluate.identity import PREDICTIONS_FILE
    from rwpost.evaluate.runner import read_predictions

    try:
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{run}: no manifest.json (not a finished run folder of rwpost evaluate)") from None
    done = read_predictions(run / PREDICTIONS_FILE)
    return manifest, [Prediction.from_row(row) for (repeat, _), row in done.items() if repeat == 0]


def export_run_folder(
    run: Path, out: Path, samples: Sequence[Sample] | None = None, image_root: Path | None = None
) -> dict[str, int]:
    """Write one run's ``output.jsonl`` and ``output_failed.jsonl`` into ``out``; the counts written."""
    from rwpost.evaluate.task import Cell

    manifest, predictions = _read_run(run)
    if samples is None:
        from rwpost.dataset import read_samples

        path = (manifest.get("data") or {}).get("path")
        if not path or not Path(path).exists():
            raise ConfigError(f"{run}: its data file {path!r} is not there; give the samples with --data")
        samples = list(read_samples(path))
    cell = Cell.parse(manifest["setting"])
    config = manifest.get("detector_config") or {}
    config = config[0] if isinstance(config, list) else config
    baseline = manifest["detector"] != "agentfact"
    model = config.get("model") or manifest["detector"]
    by_id = {p.id: p for p in predictions}
    rows, failed = [], []
    for claim_id, sample in enumerate(samples):
        prediction = by_id.get(sample.id)
        if prediction is None:
            continue
        if prediction.label is None:
            failed.append(
                {
                    "claim_id": claim_id,
                    "news_url": sample.news_url,
                    "raw_output": None,
                    "error": prediction.error,
                }
                if baseline
                else _post_info(sample, image_root)
            )
            continue
        rows.append(
            agentfact_row(
                claim_id,
                sample,
                prediction,
                setting=cell.name.split()[0],  # their --setting: T+E, not T+E k=2
                model=model,
                baseline=baseline,
                k=cell.k,
                image_root=image_root,
            )
        )
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    write_text(out / "output.jsonl", lines)
    write_text(out / "output_failed.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in failed))
    return {"rows": len(rows), "failed": len(failed)}


def export_run(
    run: str | Path,
    out: str | Path,
    fmt: str = "agentfact",
    samples: Sequence[Sample] | None = None,
    image_root: Path | None = None,
) -> dict[str, dict[str, int]]:
    """Export a run folder, or a grid of run folders (``<out>/<model>/<slug>/``), in format ``fmt``."""
    from rwpost.evaluate.task import Cell

    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    run, out = Path(run), Path(out)
    if (run / "manifest.json").is_file():
        return {str(out): export_run_folder(run, out, samples, image_root)}
    runs = sorted(p.parent for p in run.glob("*/manifest.json"))
    if not runs:
        raise ConfigError(f"{run}: no run folder (manifest.json) in it or under it")
    targets = {}
    for folder in runs:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        config = manifest.get("detector_config") or {}
        config = config[0] if isinstance(config, list) else config
        model = str(config.get("model") or manifest["detector"]).replace("/", "_")
        targets[folder] = (out / model, Cell.parse(manifest["setting"]).slug)
    shared = Counter(targets.values())
    written = {}
    for folder, (model_dir, slug) in targets.items():
        # runs of one model in one cell (Table V's ablations, vlm and agentfact on one model) each get
        # their run folder's name in the path: one over the other lost all but the last
        target = model_dir / folder.name / slug if shared[(model_dir, slug)] > 1 else model_dir / slug
        written[str(target)] = export_run_folder(folder, target, samples, image_root)
    return written


__all__ = ["FORMATS", "agentfact_row", "export_run", "export_run_folder"]
