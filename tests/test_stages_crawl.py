"""The crawl stage (rwpost.stages.crawl): its params."""

from __future__ import annotations

import pytest

from rwpost.errors import ConfigError
from rwpost.stages import split
from tests.conftest import params_with


@pytest.mark.hostile
class TestHostile:
    """A hostile user and a demanding researcher on the pipeline side: params.yaml values that cannot mean
    what was intended are one line naming the key before any work; a stage stopped by SIGTERM or Ctrl-C leaves
    only complete files and its rerun finishes; ``rwpost.load`` refuses a damaged split in one line naming the
    file instead of a pyarrow traceback or a silently short table.

    Every input is built from the authors' released records in data/sample/released/ and real Parquet files
    written by rwpost's own publish step; the stages run as DVC runs them (``python -m pipelines.<stage>``).
    """

    def test_a_date_window_that_ends_before_it_starts_is_refused(self):
        with pytest.raises(
            ConfigError, match=r"^params.yaml: dataset: .*since 2020-01-01 is after until 2019"
        ):
            split.Params.from_params(params_with("dataset", since="2020-01-01", until="2019-01-01"))
        split.Params.from_params(params_with("dataset", since="2019-01-01", until="2019-01-01"))
