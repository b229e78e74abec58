"""The crawl stage (rwpost.stages.crawl): its params."""

from __future__ import annotations

import pytest

from rwpost.errors import ConfigError
from rwpost.stages import split
from tests.conftest import params_with


@pytest.mark.hostile
class TestHostile:
    """The hostile pass (tests/README.md) on the crawl stage: inputs from the authors' released records and
    real Parquet, the stages run as DVC runs them."""

    def test_a_date_window_that_ends_before_it_starts_is_refused(self):
        with pytest.raises(
            ConfigError, match=r"^params.yaml: dataset: .*since 2020-01-01 is after until 2019"
        ):
            split.Params.from_params(params_with("dataset", since="2020-01-01", until="2019-01-01"))
        split.Params.from_params(params_with("dataset", since="2019-01-01", until="2019-01-01"))
