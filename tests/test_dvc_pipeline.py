"""The README's main job: `dvc repro` on a clean copy builds the splits, reruns nothing the second time,
and reruns only downstream stages when a parameter changes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path) -> str:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(cwd)
    env["HF_DATASETS_OFFLINE"] = "1"
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A clean checkout: the repository's committed and new (not ignored) files, with no build outputs."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    dest = tmp_path_factory.mktemp("checkout")
    for rel in files:
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    (dest / "dvc.lock").unlink(missing_ok=True)
    _run(["git", "init", "-q"], dest)
    return dest


def _version_dir(checkout: Path) -> Path:
    params = yaml.safe_load((checkout / "params.yaml").read_text())
    return checkout / params["dataset"]["root"] / params["dataset"]["version"]


def test_repro_builds_loadable_verified_splits_then_does_nothing(checkout):
    _run([sys.executable, "-m", "dvc", "repro"], checkout)
    version = _version_dir(checkout)
    for subset in ("main", "challenging"):
        for split in ("dev", "test"):
            assert (version / subset / f"{split}.parquet").stat().st_size > 0
    out = _run([sys.executable, "-m", "rwpost", "verify", str(version)], checkout)
    assert "all checksums verify" in out

    import datasets

    ds = datasets.load_dataset(str(version), "main", split="test")
    assert len(ds) > 0 and set(ds.unique("label")) <= {"True", "False", "Unproven"}
    assert (checkout / "reports" / "stats" / "stats.json").exists()

    again = _run([sys.executable, "-m", "dvc", "repro"], checkout)
    assert "Running stage" not in again and "up to date" in again


def test_changing_the_split_seed_reruns_only_downstream_stages(checkout):
    params_path = checkout / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["split"]["seed"] = int(params["split"]["seed"]) + 1
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    out = _run([sys.executable, "-m", "dvc", "repro"], checkout)
    assert "Running stage 'split'" in out
    assert "Running stage 'import'" not in out
