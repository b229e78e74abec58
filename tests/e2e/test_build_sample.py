"""Building the bundled sample step by step from the command line, with the defaults `--help` shows, gives
what `dvc repro` gives: the same records at every stage, the same published bytes and dataset card.

The commands are the ones a user types (crawl, reformat, extract, filter run); assemble, the human-verdict
merge and the split have no command of their own and run as their stage entry points (`python -m
pipelines.<stage>`), as dvc does. The DVC build is the one tests/e2e/test_dvc_pipeline.py checks further.
"""

import json
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def _version_dir(root: Path) -> Path:
    dataset = yaml.safe_load((root / "params.yaml").read_text())["dataset"]
    return root / dataset["root"] / dataset["version"]


@pytest.fixture(scope="module")
def by_cli(cli_built_sample) -> Path:
    """A clean checkout built from the command line (conftest's ``cli_built_sample``)."""
    return cli_built_sample


@pytest.fixture(scope="module")
def by_dvc(checkout, run_command) -> Path:
    run_command([sys.executable, "-m", "dvc", "repro", "split"], checkout)
    return checkout


def test_the_cli_builds_what_dvc_repro_builds(by_cli, by_dvc, sample_counts, published):
    for output, count in sample_counts.items():
        cli, dvc = _ids(by_cli / "data" / "work" / output), _ids(by_dvc / "data" / "work" / output)
        assert len(cli) == count and cli == dvc, output
    for name in ("decisions.jsonl", "verdicts.jsonl"):
        cli = (by_cli / "data" / "work" / "filter" / name).read_bytes()
        assert cli == (by_dvc / "data" / "work" / "filter" / name).read_bytes(), name
    for stage in ("tagged", "extract", "filter", "assemble"):
        cli = json.loads((by_cli / "data" / "work" / stage / "funnel.json").read_text())
        assert cli == json.loads((by_dvc / "data" / "work" / stage / "funnel.json").read_text()), stage
    cli, dvc = _version_dir(by_cli), _version_dir(by_dvc)
    for name in ("SHA256SUMS", "README.md"):
        assert (cli / name).read_bytes() == (dvc / name).read_bytes(), name
    manifest = json.loads((cli / "manifest.json").read_text())
    rows = {
        subset: {split: sum(labels.values()) for split, labels in splits.items()}
        for subset, splits in manifest["counts"].items()
    }
    assert rows == published
