"""The evaluate commands (rwpost.commands.evaluate): options and files checked before a run starts."""

from __future__ import annotations

import json

import pytest

from rwpost.io import write_jsonl
from tests.evaluate_helpers import HOSTILE_GOLD, evaluate_quietly, make_sample


@pytest.mark.hostile
class TestHostile:
    """Hostile and careless input to the evaluation commands: every case here was a defect found by trying
    them (an internal error, an input deleted, a ranking shown without its caveat); each test runs the real
    CLI on real files."""

    @pytest.fixture
    def samples(self):
        return [make_sample(i, g) for i, g in enumerate(HOSTILE_GOLD)]

    def test_a_json_price_table_indented_with_tabs_is_read(self, tmp_path, data, samples):
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        prices = tmp_path / "prices.json"
        prices.write_text(
            json.dumps({"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}, indent="\t")
        )
        assert (
            evaluate_quietly(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices))
            == 0
        )

    def test_a_broken_json_price_file_names_the_file_and_line(self, tmp_path, data, samples, capsys):
        preds = tmp_path / "system.jsonl"
        write_jsonl(preds, [{"id": s.id, "label": "False"} for s in samples])
        prices = tmp_path / "prices.json"
        prices.write_text('{"gpt-4o-mini":\n\t{"input_per_mtok": 0.15,}}\n')
        assert (
            evaluate_quietly(data, tmp_path / "run", "--predictions", str(preds), "--prices", str(prices))
            == 2
        )
        err = " ".join(capsys.readouterr().err.split())
        assert f"{prices}: not a readable YAML or JSON price table" in err and "at line 2" in err
