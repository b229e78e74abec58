"""`rwpost view` on large generated inputs: a 100,000-sample version and a run of 10,000 samples.

    python -m benchmarks.view [--samples 100000] [--run-samples 10000] [--calls 20] [--pages 20] [--smoke]

The version is written with the published layout (``rwpost.dataset.write_parquet``, four splits, a small
PNG per sample, a manifest); the run is a real ``majority`` run of ``rwpost.evaluate`` over the first
``--run-samples`` samples, whose ``predictions.jsonl`` rows then get ``--calls`` ledger rows each (model
and search calls, leakage-guard drops: the size of an agent's transcript). The view is served by uvicorn on
loopback as ``rwpost view`` serves it and asked over HTTP, as the page asks:

- **open**: a fresh server's first answer for the dataset (summary with facets + the first page of the
  table) and for each run (summary + first page; the second run is the one the comparison pairs), cold;
- **page**: ``--pages`` answers each, median and max: table pages at random offsets with a label filter and
  a search, a sample page (with the work of every folder) and its image; the run's pages filtered to
  errors and by gold class, a sample with its transcript, a comparison page.

Baseline, in the same run: what a viewer that loads everything does (``rwpost.dataset.read_parquet`` of
every split; every ``predictions.jsonl`` row parsed). Goal (issue 38): open < 2 s and page < 300 ms.
Writes ``benchmarks/results/view.json``.
"""

from __future__ import annotations

import io
import json
import random
import socket
import statistics
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx
from PIL import Image as PILImage

from benchmarks import RESULTS, arguments, goal, load, save
from rwpost.dataset import read_parquet, write_parquet
from rwpost.labels import Label
from rwpost.records import Evidence, Image, Provenance, Sample

LABELS = [Label.TRUE, Label.FALSE, Label.UNPROVEN]
CATEGORIES = ["Fauxtography", "Politics", "Health", "Entertainment", "History", "Crime", "Science"]
WORDS = "photo claim shows viral video president senator flood storm war protest vaccine".split()


def _png() -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (64, 48), (120, 80, 200)).save(buffer, "PNG")
    return buffer.getvalue()


def make_version(folder: Path, n: int) -> Path:
    """A version folder of ``n`` generated samples in four splits."""
    rng = random.Random(13)
    png = _png()
    samples: dict[tuple[str, str], list[Sample]] = {}
    for i in range(n):
        subset = "challenging" if i % 5 == 0 else "main"
        split = "dev" if i % 6 == 0 else "test"
        words = " ".join(rng.choice(WORDS) for _ in range(14))
        sample = Sample(
            id=f"rw-{i:012x}",
            claim=f"A {words} number {i}",
            post_text=f"post {words}",
            image=Image(bytes=png, width=64, height=48),
            label=Label.MIXTURE if subset == "challenging" else LABELS[i % 3],
            category=CATEGORIES[i % len(CATEGORIES)],
            claim_time=date(2015 + i % 9, 1 + i % 12, 1),
            news_url=f"https://example.org/fact-check/{i}",
            reasoning_logic=f"rationale {words}",
            key_points=[f"point {words}", "second point"],
            evidence=[
                Evidence(id=1, type="Text", content=words, url="https://example.org/e", key_point_ids=[1])
            ],
            split=split,
            subset=subset,
            provenance=Provenance(backend="offline"),
        )
        samples.setdefault((subset, split), []).append(sample)
    for (subset, split), part in samples.items():
        write_parquet(folder / subset / f"{split}.parquet", part)
    (folder / "manifest.json").write_text(json.dumps({"name": "generated", "version": "bench", "funnel": []}))
    (folder / "README.md").write_text("# generated\n")
    return folder


def make_run(version: Path, out: Path, n: int, calls: int) -> Path:
    """A real majority run over ``n`` samples of ``version``, its answers given ``calls`` ledger rows each."""
    from rwpost.evaluate import RunSpec, evaluate

    test = version / "main" / "test.parquet"
    samples = read_parquet(test)[:n]
    train = read_parquet(version / "main" / "dev.parquet")[:500]
    evaluate(
        samples,
        RunSpec("majority", setting="T", n_resamples=50),
        out,
        train=train,
        data_info={"path": str(test), "subset": "main", "split": "test"},
    )
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    for row in rows:
        row["calls"] = [
            {"kind": "model", "name": "test-model", "agent": "agent", "tokens_in": 400, "tokens_out": 40}
            if k % 3 == 0
            else {"kind": "tool", "name": "search:loopback", "agent": "search"}
            if k % 3 == 1
            else {"kind": "tool", "name": "leakage-guard:dropped:blocked:snopes.com"}
            for k in range(calls)
        ]
    (out / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


class Served:
    """The view app under uvicorn on a free loopback port, in a thread."""

    def __init__(self, folders: list[Path]) -> None:
        import uvicorn

        from rwpost.view.app import build_app

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        app = build_app([str(f) for f in folders])
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        return self.client

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join()


def timed(client: httpx.Client, *paths: str) -> float:
    started = time.perf_counter()
    for path in paths:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text[:300])
    return time.perf_counter() - started


def measure(version: Path, run: Path, other: Path, pages: int, n: int, n_run: int) -> dict[str, Any]:
    rng = random.Random(7)
    result: dict[str, Any] = {}
    with Served([version, run, other]) as client:
        keys = {
            s["kind"] + (s["label"].endswith(other.name) and "-other" or ""): s["key"]
            for s in client.get("/api/sources").json()["sources"]
        }
        v, r, o = keys["version"], keys["run"], keys["run-other"]
        result["open_dataset_s"] = timed(client, f"/api/version/{v}", f"/api/version/{v}/samples?limit=50")
        result["open_run_s"] = timed(client, f"/api/run/{r}", f"/api/run/{r}/samples?limit=50")
        result["open_second_run_s"] = timed(client, f"/api/run/{o}", f"/api/run/{o}/samples?limit=50")
        dataset_pages, run_pages = [], []
        for _ in range(pages):
            offset = rng.randrange(0, max(1, n // 3))
            sample = f"rw-{rng.randrange(n):012x}"
            dataset_pages += [
                timed(client, f"/api/version/{v}/samples?limit=50&offset={offset}&label=False"),
                timed(client, f"/api/version/{v}/samples?limit=50&q=flood+storm&category=Health"),
                timed(client, f"/api/sample/{sample}", f"/api/image/{v}/{sample}"),
            ]
            ids = client.get(
                f"/api/run/{r}/samples?limit=50&offset={rng.randrange(max(1, n_run - 50))}"
            ).json()
            run_pages += [
                timed(
                    client, f"/api/run/{r}/samples?limit=50&outcome=wrong&offset={rng.randrange(n_run // 3)}"
                ),
                timed(client, f"/api/run/{r}/samples?limit=50&gold=True"),
                timed(client, f"/api/run/{r}/sample/{ids['rows'][0]['id']}"),
                timed(client, f"/api/compare/{r}/{o}?limit=50&only=all&offset={rng.randrange(n_run // 2)}"),
            ]
    for name, values in (("dataset_page", dataset_pages), ("run_page", run_pages)):
        result[f"{name}_median_s"] = statistics.median(values)
        result[f"{name}_max_s"] = max(values)
    return result


def baseline(version: Path, run: Path) -> dict[str, float]:
    started = time.perf_counter()
    for file in sorted(version.glob("*/*.parquet")):
        read_parquet(file)
    whole_dataset = time.perf_counter() - started
    started = time.perf_counter()
    [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {"load_whole_dataset_s": whole_dataset, "parse_every_answer_s": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--run-samples", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args(argv)
    if args.smoke:
        args.samples, args.run_samples, args.pages = 3000, 500, 3
    before = load()
    with tempfile.TemporaryDirectory(prefix="rwpost-view-bench-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        version = make_version(work / "version", args.samples)
        n_run = min(args.run_samples, len(read_parquet(version / "main" / "test.parquet")))
        run = make_run(version, work / "runs" / "majority", n_run, args.calls)
        other = make_run(version, work / "runs" / "majority-again", n_run, 0)
        generated = time.perf_counter() - started
        figures = measure(version, run, other, args.pages, args.samples, n_run)
        base = baseline(version, run)
    result = {
        "samples": args.samples,
        "run_samples": n_run,
        "calls_per_answer": args.calls,
        "pages": args.pages,
        "generate_s": generated,
        **figures,
        **base,
        "load": before,
    }
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}, indent=1))
    worst_page = max(figures["dataset_page_max_s"], figures["run_page_max_s"])
    goal(
        f"open {figures['open_dataset_s']:.2f} s (dataset of {args.samples}) and "
        f"{figures['open_run_s']:.2f} s "
        f"(run of {n_run}) < 2 s; pages median {figures['dataset_page_median_s'] * 1000:.0f} / "
        f"{figures['run_page_median_s'] * 1000:.0f} ms, worst {worst_page * 1000:.0f} ms < 300 ms "
        f"(loading the whole dataset instead: {base['load_whole_dataset_s']:.1f} s)",
        before,
    )
    save(RESULTS / "view.json", result, args.smoke)
    opened = max(figures["open_dataset_s"], figures["open_run_s"], figures["open_second_run_s"])
    ok = opened < 2 and worst_page < 0.3
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
