"""The stage contract: params validated once with one-line errors naming the key, defaults in the model,
funnel steps passed on from stage to stage into the dataset card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import DatasetCard

from rwpost.dataset import arrow_schema
from rwpost.errors import ConfigError
from rwpost.publish import BuildInfo, write_version
from rwpost.rwpost_format import read_released
from rwpost.splits import assign_splits
from rwpost.stages import STAGES, annotate_merge, assemble, split
from rwpost.stages import filter as filter_stage
from rwpost.stages.base import FunnelStep, StageReport, funnel_so_far, write_funnel
from tests.conftest import PARAMS, ROOT, params_with


def test_every_stage_of_dvc_yaml_has_a_module_whose_params_read_params_yaml():
    import importlib

    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    assert list(dvc["stages"]) == list(STAGES)
    for name in STAGES:
        stage = importlib.import_module(f"rwpost.stages.{name}")
        assert callable(stage.run)
        stage.Params.from_params(PARAMS)  # every key of params.yaml is known, every value has its type
        assert f"python -m pipelines.{name}" == dvc["stages"][name]["cmd"]


def test_a_wrong_type_is_one_line_naming_the_key():
    params = {**PARAMS, "filter": {**PARAMS["filter"], "size_limits": {"min_words": "ninety"}}}
    with pytest.raises(ConfigError) as err:
        filter_stage.Params.from_params(params)
    assert str(err.value).startswith(
        "params.yaml: filter.size_limits.min_words: Input should be a valid integer"
    )
    assert "\n" not in str(err.value)


def test_an_unknown_key_and_a_missing_section_are_errors():
    with pytest.raises(ConfigError, match=r"^params.yaml: split.sed: Extra inputs are not permitted$"):
        split.Params.from_params({**PARAMS, "split": {**PARAMS["split"], "sed": 1}})
    with pytest.raises(ConfigError, match=r"^params.yaml: dataset.version: Field required$"):
        split.Params.from_params({**PARAMS, "dataset": {"root": "x"}})
    with pytest.raises(ConfigError, match="has no 'annotate:' section"):
        annotate_merge.Params.from_params({})


def test_defaults_live_in_the_model_and_options_left_unset_keep_them():
    params = assemble.Params.of(out=Path("o"), tagged=None)
    assert params.out == Path("o") and params.tagged == assemble.Params().tagged
    with pytest.raises(ConfigError, match=r"^option: assemble.filter_order: "):
        assemble.Params.of(filter_order="size")


def test_filter_thresholds_are_typed_from_each_filter_and_only_those_set_are_passed_on():
    params = filter_stage.Params.from_params(
        {"filter": {"size_limits": {"min_words": 10}, "order": ["size", "neardup"]}}
    )
    assert params.size.min_words == 10 and params.size.max_words == 2000  # the size filter's own default
    assert params.thresholds() == {"size": {"min_words": 10}, "neardup": {}}


def test_funnel_steps_are_passed_on_and_reach_the_card(tmp_path):
    earlier = [FunnelStep.of("filter: size", 8, {"too_short": 2}).model_copy(update={"measured": 10})]
    write_funnel(tmp_path / "funnel.json", earlier)
    written = json.loads((tmp_path / "funnel.json").read_text())
    assert written == [
        {
            "step": "filter: size",
            "in": 10,
            "removed": 2,
            "out": 8,
            "reasons": {"too_short": 2},
            "measured": 10,
        }
    ]
    report = StageReport(
        stage="split", funnel=[FunnelStep.of("label mapping (Table II)", 7, {"excluded": 1})]
    )
    steps = funnel_so_far(tmp_path / "funnel.json", report)
    assert [s.row()["in"] for s in steps] == [10, 8] and steps[0].row()["measured"] == 10
    assert funnel_so_far(tmp_path / "none.json", report) == report.funnel

    samples = assign_splits(read_released(ROOT / "data/sample/released/rwpost_dev_main.head.jsonl"), seed=1)
    info = BuildInfo(
        version="v1", source="test", extractor_backend="released", funnel=[s.row() for s in steps]
    )
    write_version(samples, tmp_path / "v1", info)
    card = DatasetCard.load(tmp_path / "v1" / "README.md")
    assert card.data.pretty_name == "RW-Post" and card.data.license_name == "rw-post-research-noncommercial"
    assert [c["config_name"] for c in card.data.configs] == ["main", "challenging"]
    assert "| filter: size | 10 | 2 | 8 | too_short (2) |" in card.text
    assert "| label mapping (Table II) | 8 | 1 | 7 | excluded (1) |" in card.text
    # the card says which later Snopes wordings were read as which Table II rating (issue 17)
    assert '"incorrect attribution" is read as "misattributed"' in card.text and "`unrated`" in card.text


def test_published_columns_are_derived_from_sample_in_their_published_order():
    assert arrow_schema().names == [
        "id", "claim", "post_text", "post_url", "image", "image_path", "image_link", "image_sha256",
        "image_width", "image_height", "video_link", "label", "label_original", "category", "claim_time",
        "news_url", "reasoning_logic", "key_points", "evidence", "ocr", "image_required", "watermarked",
        "watermark_keywords", "cluster_id", "split", "subset", "provenance", "extra", "schema_version",
    ]  # fmt: skip


@pytest.mark.cli_errors
class TestCliErrors:
    """Every bad input through the real ``rwpost`` command line is one line naming the file, line, record or
    field, with exit 1 (bad input) or 2 (bad usage): never "internal error (exit 70)", never a traceback."""

    @pytest.mark.parametrize(
        ("section", "key", "value"),
        [("filter", "workers", 0), ("reformat", "min_words", -1), ("extract", "concurrency", 0)],
    )
    def test_params_yaml_counts_out_of_range_name_the_key(self, tmp_path, capsys, section, key, value):
        """params.yaml is checked like the options: a count out of range names the file and the key."""
        import yaml

        params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
        params[section][key] = value
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(params), encoding="utf-8")
        from rwpost.stages import extract, reformat
        from rwpost.stages import filter as filter_stage
        from rwpost.stages.base import load_params

        stage = {"filter": filter_stage, "reformat": reformat, "extract": extract}[section]
        with pytest.raises(Exception, match=rf"{section}\.{key}: Input should be greater than"):
            stage.Params.from_params(load_params(path), str(path))


@pytest.mark.hostile
class TestHostile:
    """The hostile pass (tests/README.md) on every stage (params.yaml, signals): inputs from the authors'
    released records and real Parquet, the stages run as DVC runs them."""

    @pytest.mark.parametrize(
        ("section", "values", "key"),
        [
            ("crawl", {"max_articles": -1}, "crawl.max_articles"),
            ("crawl", {"max_image_bytes": 0}, "crawl.max_image_bytes"),
            ("extract", {"prices": {"m": {"input_per_mtok": -1, "output_per_mtok": 1}}}, "extract.prices"),
        ],
    )
    def test_counts_sizes_and_prices_out_of_range_are_refused(self, section, values, key):
        from rwpost.stages import crawl, extract

        stage = {"crawl": crawl, "extract": extract}[section]
        with pytest.raises(ConfigError, match=rf"^params.yaml: {key}"):
            stage.Params.from_params(params_with(section, **values))
