"""Evaluation speed: runner overhead per sample, scoring time, embedding-detector throughput.

    python -m benchmarks.evaluate [--samples 2000] [--embed-samples 1024] [--device cuda] [--no-embedding]
                                  [--smoke]

Prints the device and writes ``benchmarks/results/evaluate-<device>.json``. The runner overhead is
measured with a detector that answers instantly, so what is timed is blinding, batching, the flushed
append of every prediction and the resume bookkeeping. Samples are generated from the released dev
records (their text repeated), so the text lengths are real.

Scoring is timed twice in the same run: the vectorised bootstrap of ``rwpost.evaluate.metrics`` (one
confusion count per resample, every metric from it) and :func:`reference_intervals`, the previous
implementation (scipy's bootstrap calling scikit-learn once per resample), on the same predictions;
the report gives the ratio. ``tests/test_evaluate_metrics.py`` (class TestTrust) checks that both agree.
Goals: runner overhead < 1 ms per sample; scoring 2,000 samples with 1,000 resamples <= 0.5 s.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS, arguments, goal, load, save
from rwpost.evaluate.contract import Detector

RELEASED = Path(__file__).resolve().parents[1] / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"


class InstantDetector(Detector):
    """Answers False at once: isolates the runner's own cost."""

    name = "instant"

    def predict(self, samples, task, ctx):
        from rwpost.evaluate.contract import Prediction
        from rwpost.labels import Label

        return [Prediction(id=s.id, label=Label.FALSE) for s in samples]


def _samples(n: int) -> list:
    """``n`` samples cycling through the released records, each with its own id."""
    from rwpost.ids import record_id
    from rwpost.rwpost_format import read_released

    base = read_released(RELEASED)
    out = []
    for i in range(n):
        s = base[i % len(base)]
        url = f"{s.news_url.rstrip('/')}-copy-{i}/"
        out.append(s.model_copy(update={"id": record_id(url), "news_url": url}))
    return out


def reference_intervals(
    y_true: list[str], y_pred: list[str | None], classes: list[str], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, list[float]] | None:
    """The previous implementation's 95% intervals (before issue 14): scipy's percentile bootstrap with a
    scikit-learn call per resample, a failure an ``Other`` answer outside the averaged classes (it
    agrees with every failure policy when every sample is answered inside the view)."""
    import numpy as np
    from scipy import stats
    from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

    from rwpost.evaluate.metrics import HEADLINE

    index = {c: i for i, c in enumerate(classes)}
    true = np.array([index.get(y, len(classes)) for y in y_true])
    pred = np.array([index.get(y, len(classes)) if y is not None else len(classes) for y in y_pred])
    codes = list(range(len(classes)))

    def statistic(idx: np.ndarray) -> np.ndarray:
        t, p = true[idx], pred[idx]
        precision, recall, f1, _ = precision_recall_fscore_support(
            t, p, labels=codes, average="weighted", zero_division=0
        )
        scores = {
            "accuracy": accuracy_score(t, p),
            "macro_f1": f1_score(t, p, labels=codes, average="macro", zero_division=0),
            "weighted_f1": f1,
            "weighted_precision": precision,
            "weighted_recall": recall,
        }
        return np.array([scores[k] for k in HEADLINE])

    if len(true) < 2 or n_resamples <= 0:
        return None
    result = stats.bootstrap(
        (np.arange(len(true)),),
        statistic,
        n_resamples=n_resamples,
        vectorized=False,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = result.confidence_interval
    return {k: [float(lo), float(hi)] for k, lo, hi in zip(HEADLINE, low, high, strict=True)}


def scoring_speed(samples: list, predictions: list, n_resamples: int = 1000) -> dict:
    """Bootstrap intervals of every non-empty view, new vs previous implementation, in this run."""
    from rwpost.evaluate.metrics import VIEWS, encode, headline_intervals

    new_s = old_s = 0.0
    views = 0
    for view in VIEWS.values():
        keep = [i for i, s in enumerate(samples) if s.label in view.gold]
        if not keep:
            continue
        views += 1
        y_true = [view.view_class(samples[i].label) for i in keep]
        y_pred = [view.view_class(predictions[i].label) for i in keep]
        began = time.perf_counter()
        headline_intervals(encode(y_true, y_pred, view.classes), n_resamples=n_resamples)
        new_s += time.perf_counter() - began
        began = time.perf_counter()
        reference_intervals(y_true, y_pred, list(view.classes), n_resamples=n_resamples)
        old_s += time.perf_counter() - began
    return {"views": views, "bootstrap_new_s": new_s, "bootstrap_old_s": old_s, "speedup": old_s / new_s}


def runner_overhead(n: int, batch_size: int, n_resamples: int = 1000) -> dict:
    from rwpost.evaluate.leakage import BlockList
    from rwpost.evaluate.runner import RunSpec, run
    from rwpost.evaluate.scoring import score_run

    samples = _samples(n)
    with tempfile.TemporaryDirectory() as tmp:
        spec = RunSpec("benchmarks.evaluate:InstantDetector", batch_size=batch_size)
        began = time.perf_counter()
        result = run(samples, spec, Path(tmp) / "run")
        run_s = time.perf_counter() - began
        began = time.perf_counter()
        run(samples, spec, Path(tmp) / "run")
        resume_s = time.perf_counter() - began
        began = time.perf_counter()
        score_run(samples, result.predictions[0], blocklist=BlockList(), n_resamples=n_resamples)
        score_s = time.perf_counter() - began
        speed = scoring_speed(samples, result.predictions[0], n_resamples)
    # the previous score_run differed in its bootstrap only (the rest is shared): swap that part in
    previous = score_s - speed["bootstrap_new_s"] + speed["bootstrap_old_s"]
    return {
        "samples": n,
        "batch_size": batch_size,
        "run_s": run_s,
        "overhead_ms_per_sample": 1000 * run_s / n,
        "resume_scan_ms_per_sample": 1000 * resume_s / n,
        "resamples": n_resamples,
        "scoring_s_with_1000_bootstrap": score_s,
        "scoring_s_previous_implementation": previous,
        "scoring_speedup": previous / score_s,
        "bootstrap": speed,
    }


def embedding_throughput(n: int, device: str | None, batch_sizes: list[int]) -> dict:
    from rwpost.evaluate.contract import RunContext
    from rwpost.evaluate.detectors.embedding import EmbeddingDetector
    from rwpost.evaluate.task import EvalTask
    from rwpost.llm.local import pick_device

    samples = _samples(n)
    task, ctx = EvalTask.of("T+I", samples), RunContext()
    train = [task.blind(s, keep_label=True) for s in samples[:46]]
    test = [task.blind(s) for s in samples]
    out = {"device": pick_device(device), "samples": n, "by_batch_size": {}}
    for batch_size in batch_sizes:
        detector = EmbeddingDetector.build({"device": device, "batch_size": batch_size})
        detector.fit(train, task, ctx)
        detector.predict(test[:batch_size], task, ctx)  # warm-up
        began = time.perf_counter()
        detector.predict(test, task, ctx)
        seconds = time.perf_counter() - began
        out["by_batch_size"][str(batch_size)] = {"seconds": seconds, "samples_per_s": n / seconds}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="samples for the runner overhead")
    parser.add_argument("--embed-samples", type=int, default=1024, help="samples for embedding throughput")
    parser.add_argument("--batch-sizes", default="32,128", help="embedding batch sizes, comma-separated")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    parser.add_argument("--no-embedding", action="store_true", help="skip the embedding throughput")
    args = parser.parse_args(argv or [])
    resamples = 100 if args.smoke else 1000
    if args.smoke:
        args.samples, args.embed_samples, args.batch_sizes = 100, 16, "16"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from rwpost.llm.local import pick_device

    before = load()
    device = pick_device(args.device)
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else None
    print(f"device: {device}" + (f" ({gpu})" if gpu else f" ({platform.processor() or platform.machine()})"))
    print(f"torch threads: {torch.get_num_threads()}, cpu count: {os.cpu_count()}")
    runner = runner_overhead(args.samples, 16, resamples)
    boot = runner["bootstrap"]
    print(
        f"runner overhead: {runner['overhead_ms_per_sample']:.3f} ms/sample over {args.samples} samples "
        f"(resume scan {runner['resume_scan_ms_per_sample']:.3f} ms/sample); "
        f"scoring with {resamples} bootstrap resamples: {runner['scoring_s_with_1000_bootstrap']:.2f} s "
        f"(previous implementation {runner['scoring_s_previous_implementation']:.1f} s in this run, "
        f"{runner['scoring_speedup']:.0f}x)"
    )
    print(
        f"bootstrap intervals of {boot['views']} views, {resamples} resamples: "
        f"new {boot['bootstrap_new_s']:.3f} s, "
        f"previous implementation {boot['bootstrap_old_s']:.2f} s, {boot['speedup']:.0f}x faster"
    )
    embedding = None
    if not args.no_embedding:
        batch_sizes = [int(x) for x in args.batch_sizes.split(",")]
        embedding = embedding_throughput(args.embed_samples, device, batch_sizes)
        for batch_size, row in embedding["by_batch_size"].items():
            print(f"embedding detector ({device}, batch {batch_size}): {row['samples_per_s']:.1f} samples/s")
    goal(
        f"runner overhead {runner['overhead_ms_per_sample']:.3f} ms/sample (target < 1); scoring "
        f"{args.samples:,} samples with {resamples:,} resamples "
        f"{runner['scoring_s_with_1000_bootstrap']:.3f} s "
        f"(target <= 0.5 s at 2,000), {runner['scoring_speedup']:.0f}x the previous implementation "
        "in this run",
        before,
    )
    result = {
        "device": device,
        "gpu": gpu,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "load_before": before,
        "load_after": load(),
        "runner": runner,
        "embedding": embedding,
    }
    path = RESULTS / f"evaluate-{device}.json"
    if embedding is None and path.exists():  # --no-embedding: keep the last embedding figures
        result["embedding"] = json.loads(path.read_text(encoding="utf-8")).get("embedding")
    save(path, result, args.smoke)


if __name__ == "__main__":
    main(sys.argv[1:])
