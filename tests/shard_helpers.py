"""The extract stage's sharded-run helpers the shard and executor tests share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwpost.io import write_jsonl
from rwpost.stages import extract as stage

SITE = Path(__file__).resolve().parents[1] / "data" / "sample" / "site"
COMPARED = ("extractions.jsonl", "rejects.jsonl", "summary.json", "funnel.json")
"""The stage's outputs that must not depend on who ran it (cost.json is the run's bill)."""


def write_tagged_sample(path: Path) -> Path:
    """The bundled sample's tagged articles, plus two lines the stage sets aside (no JSON; no record)."""
    from benchmarks.extract_quality import load_sample

    _, articles = load_sample(SITE)
    write_jsonl(path, articles)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"id": "rw-0000000000000000", "url": "x"}) + "\n")
    return path


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in COMPARED if (folder / name).exists()}


def params(tagged: Path, out: Path, **executor) -> stage.Params:
    return stage.Params.of(input=tagged, out=out, backend="offline", executor=executor or None)


def plain_run(tagged: Path, out: Path) -> dict[str, bytes]:
    """The outputs of one plain local run (no shards, no markers)."""
    stage.run(params(tagged, out))
    assert not out.with_name(f"{out.name}.shards").exists()
    return outputs(out)


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray (2 CPUs, bound to 127.0.0.1, as the executor starts it) for a module's Ray tests;
    shut down after them. Ray is in the dev extra, so CI runs these."""
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'rwpost[dev]')")
    from rwpost.executors.ray_executor import init_local

    init_local(ray, num_cpus=2)
    yield ray
    ray.shutdown()
