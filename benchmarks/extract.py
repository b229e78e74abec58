"""Extraction throughput of the LLM backend against the loopback test server at fixed 200 ms latency.

Each article is three chat calls (post and rationale together, then evidence), answered by the
scripted responder after 200 ms. Measured at 1, 8 and 32 requests in flight, without a cache (every
call goes over HTTP), then once more at 32 with a warm cache (zero calls).

    python -m benchmarks.extract
"""

from __future__ import annotations

import platform
import tempfile
import time
from pathlib import Path

from benchmarks import no_options
from rwpost.io import write_json

ROOT = Path(__file__).resolve().parents[1]
LATENCY_S = 0.2
ARTICLES = {1: 20, 8: 102, 32: 102}


def main(argv: list[str] | None = None) -> dict:
    no_options(__doc__, argv)
    from benchmarks.extract_quality import load_sample
    from rwpost.extract import LLMExtractor
    from rwpost.extract.scripted import scripted_reply
    from rwpost.llm import LLMCache, LLMClient
    from rwpost.testing.llm import FakeLLMServer

    _, articles = load_sample(ROOT / "data" / "sample" / "site")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(scripted_reply, latency_s=LATENCY_S) as server:
        for concurrency, count in ARTICLES.items():
            batch = articles[:count]
            client = LLMClient(
                model="bench", base_url=server.base_url, api_key="bench", concurrency=concurrency
            )
            before = server.chat_requests
            server.max_in_flight = 0
            started = time.perf_counter()
            outcomes = LLMExtractor(client).run(batch)
            elapsed = time.perf_counter() - started
            calls = server.chat_requests - before
            rows.append(
                {
                    "in_flight": concurrency,
                    "articles": len(batch),
                    "calls": calls,
                    "seconds": round(elapsed, 2),
                    "articles_per_s": round(len(batch) / elapsed, 2),
                    "calls_per_s": round(calls / elapsed, 2),
                    "server_max_in_flight": server.max_in_flight,
                    "ideal_calls_per_s": round(concurrency / LATENCY_S, 1),
                    "ok": sum(1 for o in outcomes if not hasattr(o, "task")),
                }
            )
        cache = LLMCache(Path(tmp) / "cache.sqlite")
        warm = LLMClient(
            model="bench", base_url=server.base_url, api_key="bench", concurrency=32, cache=cache
        )
        LLMExtractor(warm).run(articles)
        before = server.chat_requests
        started = time.perf_counter()
        LLMExtractor(LLMClient(model="bench", base_url=server.base_url, api_key="b", cache=cache)).run(
            articles
        )
        elapsed = time.perf_counter() - started
        cached = {
            "articles": len(articles),
            "calls": server.chat_requests - before,
            "seconds": round(elapsed, 3),
            "articles_per_s": round(len(articles) / elapsed, 1),
        }
    result = {
        "latency_s": LATENCY_S,
        "runs": rows,
        "cached_rerun": cached,
        "machine": f"{platform.machine()} {platform.python_version()}, shared 2-core VM",
    }
    write_json(ROOT / "benchmarks" / "results" / "extract.json", result)
    for row in rows:
        print(
            f"in flight {row['in_flight']:2d}: {row['articles_per_s']:6.2f} articles/s, "
            f"{row['calls_per_s']:6.1f} calls/s (ideal {row['ideal_calls_per_s']}), "
            f"server max in flight {row['server_max_in_flight']}"
        )
    print(f"cached rerun: {cached['articles_per_s']} articles/s, {cached['calls']} HTTP calls")
    return result


if __name__ == "__main__":
    main()
