"""The README's main job: `dvc repro` on a clean copy builds the splits, reruns nothing the second time,
and reruns only downstream stages when a parameter changes."""

import json
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow


def _version_dir(checkout: Path) -> Path:
    params = yaml.safe_load((checkout / "params.yaml").read_text())
    return checkout / params["dataset"]["root"] / params["dataset"]["version"]


def test_repro_builds_loadable_verified_splits_then_does_nothing(checkout, run_command, published):
    run_command([sys.executable, "-m", "dvc", "repro"], checkout)
    version = _version_dir(checkout)
    for subset in ("main", "challenging"):
        for split in ("dev", "test"):
            assert (version / subset / f"{split}.parquet").stat().st_size > 0
    out = run_command([sys.executable, "-m", "rwpost", "verify", str(version)], checkout)
    assert "all checksums verify" in out

    import datasets

    ds = datasets.load_dataset(str(version), "main", split="test", cache_dir=str(checkout / ".hf-cache"))
    assert len(ds) == published["main"]["test"] and set(ds.unique("label")) <= {"True", "False", "Unproven"}
    import rwpost

    hard = rwpost.load(str(version), subset="challenging", split="test")
    assert len(hard) == published["challenging"]["test"] and set(hard.unique("label")) <= {
        "Mixture",
        "Outdated",
    }
    with_images = [row for row in ds if row["image"] is not None]
    assert with_images and all(min(row["image"].size) >= 200 for row in with_images)  # size filter held
    assert (checkout / "reports" / "stats" / "stats.json").exists()

    again = run_command([sys.executable, "-m", "dvc", "repro"], checkout)
    assert "Running stage" not in again and "up to date" in again


def test_changing_a_filter_threshold_reruns_only_downstream_stages_from_cache(checkout, run_command):
    run_command([sys.executable, "-m", "dvc", "repro"], checkout)  # built: nothing to do after the test above
    params_path = checkout / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["filter"]["neardup"]["text_jaccard"] = 0.9
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    out = run_command([sys.executable, "-m", "dvc", "repro"], checkout)
    assert "Running stage 'filter'" in out  # later stages rerun only if the filter's outputs changed
    for stage in ("crawl", "reformat", "extract"):  # no crawl, no LLM call: extraction is not rerun
        assert f"Running stage '{stage}'" not in out
    cache_use = json.loads((checkout / "data" / "work" / "filter" / "cache" / "last_run.json").read_text())
    assert sum(step["measured"] for step in cache_use) == 0, "a threshold change must re-measure nothing"
    assert sum(step["from_cache"] for step in cache_use) > 0
    card = (_version_dir(checkout) / "README.md").read_text()
    assert "| filter: size |" in card and "| filter: watermark |" in card  # the funnel reaches the card
    # and starts at the crawl store: every stored article is a line of the funnel (in, or set aside by why)
    stored = len((checkout / "data" / "work" / "crawl" / "articles.jsonl").read_text().splitlines())
    assert f"| reformat (crawl store -> tagged articles) | {stored} |" in card
    assert "| extract (post, rationale, evidence) |" in card


def test_a_changed_min_words_changes_the_published_version(checkout, run_command):
    """Issue 27: DVC's run cache leaves keys named ``size`` out of a stage's key, so with the size filter's
    thresholds under ``filter.size`` a changed ``min_words`` found the old run ("Stage 'filter' is cached")
    and published the old samples (tests/test_params_cache_keys.py checks every leaf of params.yaml)."""
    run_command([sys.executable, "-m", "dvc", "repro"], checkout)
    before = _published(_version_dir(checkout))
    params_path = checkout / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    assert params["filter"]["size_limits"]["min_words"] == 90
    params["filter"]["size_limits"]["min_words"] = 300
    params["dataset"]["version"] = "v0.2.0"
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    log = run_command([sys.executable, "-m", "dvc", "repro"], checkout)
    assert "Stage 'filter' is cached" not in log and "Running stage 'filter'" in log
    assert _version_dir(checkout).name == "v0.2.0"
    assert _published(_version_dir(checkout)) < before


def _published(version: Path) -> int:
    """How many samples a published version holds (its manifest's categories)."""
    manifest = json.loads((version / "manifest.json").read_text(encoding="utf-8"))
    return sum(manifest["categories"].values())
