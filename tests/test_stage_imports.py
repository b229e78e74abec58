"""A stage's process imports the heavy libraries its work uses and none it does not: each costs its import
time in every run and, on a fresh install, its compile time too (`make demo`'s stages are one process each).
Checked in a fresh interpreter through ``sys.modules``, as ``tests/test_cli_start.py`` checks the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rwpost.dataset import read_parquet, write_parquet
from rwpost.rwpost_format import read_released

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released"


def _libraries_after(code: str) -> set[str]:
    """The top-level packages in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_reading_a_split_imports_neither_pandas_nor_the_hub(tmp_path):
    """The stats stage reads the published splits: pyarrow alone (pq.read_table's pyarrow.dataset imports
    pandas), and no card classes (huggingface_hub)."""
    path = tmp_path / "test.parquet"
    samples = read_released(RELEASED / "rwpost_dev_main.head.jsonl")[:3]
    write_parquet(path, samples)
    assert [s.id for s in read_parquet(path)] == [s.id for s in samples]
    loaded = _libraries_after(
        f"import rwpost.stages.stats\nfrom rwpost.dataset import read_parquet\nread_parquet({str(path)!r})"
    )
    assert not loaded & {"pandas", "huggingface_hub", "datasets", "matplotlib"}


def test_the_annotate_merge_stage_imports_no_numpy():
    assert "numpy" not in _libraries_after("import rwpost.stages.annotate_merge")


def test_the_crawler_s_retry_after_reader_imports_no_httpx():
    assert "httpx" not in _libraries_after("from rwpost.http import retry_after_seconds")
