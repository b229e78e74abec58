"""End-to-end runs of the bundled sample: a clean copy of the repository, built from the CLI or by
`dvc repro`."""

from pathlib import Path

import pytest

from tests.conftest import clean_checkout, run_command_as_user

SAMPLE_COUNTS = {
    "crawl/articles.jsonl": 111,
    "tagged/articles.jsonl": 105,
    "extract/extractions.jsonl": 105,
    "assemble/samples.jsonl": 58,
}
"""Lines of the bundled sample's stage outputs under data/work/: the crawl store, tagged articles,
extractions, and the samples the filters kept."""
PUBLISHED = {"main": {"dev": 6, "test": 26}, "challenging": {"dev": 5, "test": 20}}
"""Rows per subset and split of the published version (57: one sample's rating is not about facts)."""


@pytest.fixture(scope="session")
def checkout(tmp_path_factory) -> Path:
    """A clean checkout that `dvc repro` builds (shared by the tests of this folder)."""
    return clean_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="session")
def make_checkout():
    """``make_checkout(dest) -> dest``: a clean copy of the repository (:func:`clean_checkout`)."""
    return clean_checkout


@pytest.fixture(scope="session")
def run_command():
    """``run_command(cmd, cwd) -> output``: a command run as a user would, offline; it must succeed."""
    return run_command_as_user


@pytest.fixture(scope="session")
def sample_counts() -> dict[str, int]:
    return SAMPLE_COUNTS


@pytest.fixture(scope="session")
def published() -> dict[str, dict[str, int]]:
    return PUBLISHED
