"""DVC stage `filter`: size, image necessity, watermark and near-duplicate filters (paper III-A, III-C).

Reads the tagged articles, the extractions and the crawl store; writes data/work/filter/
{decisions,verdicts,rejects}.jsonl, funnel.json and the measurement cache. Thresholds come from the
`filter:` section of params.yaml and nothing else.

    python pipelines/filter.py --params params.yaml
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rwpost.commands.filter import print_funnel, read_params
from rwpost.filters.stage import run_stage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--tagged", type=Path, default=Path("data/work/tagged/articles.jsonl"))
    parser.add_argument("--extractions", type=Path, default=Path("data/work/extract/extractions.jsonl"))
    parser.add_argument("--crawl", type=Path, default=Path("data/work/crawl/articles.jsonl"))
    parser.add_argument("--crawl-root", type=Path, default=Path("data/work/crawl"))
    parser.add_argument("--out", type=Path, default=Path("data/work/filter"))
    args = parser.parse_args(argv)
    params = read_params(args.params if args.params.exists() else None)
    result = run_stage(
        args.tagged, args.extractions, args.crawl, args.out, params, crawl_root=args.crawl_root
    )
    print_funnel(result.funnel())
    return 0


if __name__ == "__main__":
    sys.exit(main())
