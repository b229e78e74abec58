"""``rwpost evaluate`` is one front door (issue 35): the command builds the stage's settings model and
makes one library call; ``--detector NAME --help-options`` lists a detector's options from its ``Config``,
and an unknown option's refusal lists the valid ones."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rwpost.evaluate.contract import Detector, option_docs, options_text
from rwpost.evaluate.shards import EvaluateCommand, EvaluateSettings, command_settings
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.conftest import one_line, run_cli, run_cli_out
from tests.evaluate_helpers import make_sample


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")

    words: list[str] = Field(default_factory=lambda: ["hoax"])
    """Words that make a claim False."""
    mode: Literal["any", "all"] = "any"
    threshold: float = Field(0.5, description="The share of words needed.")
    required_name: str


class _Plugin(Detector):
    name = "documented"
    Config = _Options


def test_option_docs_read_name_type_default_and_description():
    docs = {d.name: d for d in option_docs(_Options)}
    assert list(docs) == ["words", "mode", "threshold", "required_name"]
    assert (docs["words"].type, docs["words"].default) == ("list[str]", "['hoax']")
    assert docs["words"].description == "Words that make a claim False."  # the docstring under it
    assert docs["mode"].type == "'any' | 'all'"
    assert docs["threshold"].description == "The share of words needed."  # Field(description=...)
    assert docs["required_name"].default == "required"
    assert "required_name" in options_text("documented", _Options)


def test_help_options_lists_a_builtin_detectors_options(capsys):
    code, out, err = run_cli_out(capsys, "evaluate", "--detector", "embedding", "--help-options")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "options of detector 'embedding' (--set NAME=VALUE):"
    assert any(
        line.split() == ["batch_size", "int", "=", "32"] for line in lines
    )  # name, type, default (no description)
    assert any(
        "model_path" in line and "str | None = None" in line and "sentence-transformers" in line
        for line in lines
    )


def test_help_options_of_a_model_detector_lists_its_connection_flat(capsys):
    code, out, _ = run_cli_out(capsys, "evaluate", "--detector", "vlm", "--help-options")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert {"model", "base_url", "backend", "prompt", "temperature"} <= set(names)
    assert "llm" not in names  # --set takes the connection's keys flat
    assert any(line.split()[:4] == ["model", "str", "=", "required"] for line in out.splitlines())


def test_help_options_needs_one_known_detector(capsys):
    code, err = run_cli(capsys, "evaluate", "--help-options")
    assert code != 0
    assert "give one --detector NAME" in one_line(err)
    code, err = run_cli(capsys, "evaluate", "--detector", "no-such-detector", "--help-options")
    assert code != 0
    assert "no-such-detector" in one_line(err)


def test_an_unknown_option_is_refused_listing_the_valid_ones(capsys, tmp_path):
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, [make_sample(i, Label.TRUE if i % 2 else Label.FALSE) for i in range(6)])
    out = tmp_path / "run"
    code, err = run_cli(
        capsys, "evaluate", "--data", data, "--detector", "embedding", "--set", "batchsize=4",
        "--train-fraction", "0.5", "--out", out, "--no-progress", "--no-key-points",
    )  # fmt: skip
    assert code != 0
    line = one_line(err)
    assert "batchsize" in line
    assert line.endswith("valid options: model_path, device, batch_size, C, class_weight, use_ocr, precision")
    assert not out.exists()  # a refused run writes nothing


def test_the_command_builds_the_stages_settings_at_the_stages_defaults(tmp_path):
    command = command_settings(data=tmp_path / "d.jsonl", out=tmp_path / "o", detectors=["majority"])
    assert isinstance(command, EvaluateSettings) and isinstance(command, EvaluateCommand)
    stage = EvaluateSettings()
    shared = set(EvaluateSettings.model_fields) - {"out", "detectors", "executor"}
    assert {k: getattr(command, k) for k in shared} == {k: getattr(stage, k) for k in shared}
    assert [e.name for e in command.entries] == ["majority"]
    given = command_settings(
        data=Path("d.jsonl"), out=Path("o"), detectors=["majority"], seed=3, failures="exclude", k=[2]
    )
    assert (given.seed, given.failures, given.k) == (3, "exclude", [2])
