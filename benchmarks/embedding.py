"""Embedding detector throughput: the sorted, pre-tokenised encoder against ``SentenceTransformer.encode``.

    python -m benchmarks.embedding [--samples N] [--batch-size 512] [--smoke]

Texts are the embedding detector's inputs built from the released dev records (cycled), so lengths are
real. On a GPU machine it times the encoder on CUDA (float16) and on the same machine's CPU (float32)
and prints the GPU/CPU ratio (issue 15's goal on an H100: >= 15,000 samples/s at batch 512). On a
CPU-only machine it prints the CPU figure and its ratio to the old ``encode`` path. The cosine between
the two paths' embeddings is printed too. Writes ``benchmarks/results/embedding-<device>.json``.
"""

from __future__ import annotations

import os
import platform
import sys
import time

from benchmarks import RESULTS, arguments, goal, load, save


def _texts(n: int) -> list[str]:
    from benchmarks.evaluate import _samples
    from rwpost.evaluate.detectors.embedding import sample_text
    from rwpost.evaluate.task import Cell

    return [sample_text(s, Cell.parse("T+I")) for s in _samples(n)]


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _time(fn, texts: list[str], device: str, repeats: int) -> tuple[float, object]:
    """Best-of-``repeats`` samples/s of ``fn(texts)`` after one warm-up call, and its output."""
    out = fn(texts[: min(len(texts), 1024)])  # warm-up (kernels, allocator)
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        began = time.perf_counter()
        out = fn(texts)
        _sync(device)
        best = min(best, time.perf_counter() - began)
    return len(texts) / best, out


def _cosine_min(a, b) -> float:
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float((np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))).min())


def measure(device: str, texts: list[str], batch_size: int, repeats: int, old_path: bool) -> dict:
    """samples/s of the new encoder on ``device`` (and of plain ``encode`` in float32 if ``old_path``)."""
    from rwpost.evaluate.detectors.embedding import SentenceEncoder

    encoder = SentenceEncoder(device=device, batch_size=batch_size)
    rate, new = _time(encoder, texts, device, repeats)
    row = {"device": device, "precision": encoder.precision, "samples_per_s": rate}
    if old_path:
        from sentence_transformers import SentenceTransformer

        plain = SentenceTransformer(str(encoder.path), device=device, local_files_only=True)

        def encode(batch: list[str]):
            return plain.encode(
                batch,
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )

        old_rate, old = _time(encode, texts, device, repeats)
        row.update(
            encode_samples_per_s=old_rate,
            speedup_vs_encode=rate / old_rate,
            min_cosine_vs_encode_float32=_cosine_min(new, old),
        )
    return row


def main(argv: list[str] | None = None) -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=None, help="texts (default 16384 GPU, 1024 CPU)")
    parser.add_argument("--cpu-samples", type=int, default=2048, help="texts for the GPU machine's CPU run")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is kept")
    args = parser.parse_args(argv or [])
    if args.smoke:
        args.samples, args.cpu_samples, args.batch_size, args.repeats = 32, 32, 16, 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    before = load()
    gpu = torch.cuda.is_available()
    n = args.samples or (16384 if gpu else 1024)
    name = torch.cuda.get_device_name(0) if gpu else (platform.processor() or platform.machine())
    print(f"device: {'cuda' if gpu else 'cpu'} ({name}); torch threads {torch.get_num_threads()}")
    result: dict = {"gpu": name if gpu else None, "batch_size": args.batch_size, "cpu_count": os.cpu_count()}
    if gpu:
        texts = _texts(n)
        result["cuda"] = measure("cuda", texts, args.batch_size, args.repeats, old_path=True)
        result["cpu"] = measure("cpu", texts[: args.cpu_samples], args.batch_size, 1, old_path=False)
        result["gpu_over_cpu"] = result["cuda"]["samples_per_s"] / result["cpu"]["samples_per_s"]
        cuda = result["cuda"]
        print(
            f"cuda {cuda['precision']}, batch {args.batch_size}: {cuda['samples_per_s']:,.0f} samples/s "
            f"(plain encode, float32: {cuda['encode_samples_per_s']:,.0f}; "
            f"x{cuda['speedup_vs_encode']:.1f}; min cosine {cuda['min_cosine_vs_encode_float32']:.5f})"
        )
        print(
            f"cpu float32 on the same machine: {result['cpu']['samples_per_s']:,.0f} samples/s; "
            f"GPU/CPU ratio {result['gpu_over_cpu']:.1f}x (goal >= 15,000 samples/s on an H100)"
        )
        goal(
            f"{cuda['samples_per_s']:,.0f} samples/s on {name} (target >= 15,000 on an H100), "
            f"{cuda['speedup_vs_encode']:.1f}x plain encode in this run",
            before,
        )
    else:
        texts = _texts(n)
        result["cpu"] = measure("cpu", texts, args.batch_size, args.repeats, old_path=True)
        cpu = result["cpu"]
        print(
            f"cpu float32, batch {args.batch_size}, {n} texts: {cpu['samples_per_s']:,.1f} samples/s; "
            f"old encode path {cpu['encode_samples_per_s']:,.1f} samples/s; "
            f"ratio {cpu['speedup_vs_encode']:.2f}x; min cosine {cpu['min_cosine_vs_encode_float32']:.6f} "
            "(no GPU: the GPU/CPU ratio needs a CUDA machine)"
        )
        goal(
            f"{cpu['samples_per_s']:,.1f} samples/s on CPU, {cpu['speedup_vs_encode']:.2f}x plain encode "
            "in this run (the target, >= 15,000 samples/s, is for an H100)",
            before,
        )
    result.update(load_before=before, load_after=load())
    save(RESULTS / f"embedding-{'cuda' if gpu else 'cpu'}.json", result, args.smoke)


if __name__ == "__main__":
    main(sys.argv[1:])
