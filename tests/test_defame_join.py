"""DEFAME predictions without an id map are joined by position only where the claims say it is right
(issue 27, hostile H3): the same perfect ``predictions.csv`` scored macro F1 0.331 when the data's order
changed and accuracy 0.435 with ``--train-fraction 0.5``, with the claim text mismatched in every row and
no warning. A folder holding two formats' predictions was read as one of them, silently.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.dataset import read_samples
from rwpost.evaluate.formats import detect_format
from rwpost.io import write_jsonl

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"
DEFAME = {"True": "SUPPORTED", "False": "REFUTED", "Unproven": "NEI", "Mixture": "CONFLICTING"}


@pytest.fixture
def samples():
    return list(read_samples(RELEASED))


@pytest.fixture
def perfect(tmp_path, samples) -> Path:
    """A DEFAME predictions.csv right on every sample of RELEASED, in its order."""
    path = tmp_path / "defame" / "predictions.csv"
    path.parent.mkdir()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sample_index", "claim", "target", "predicted", "justification", "correct"])
        for i, sample in enumerate(samples):
            verdict = DEFAME[sample.label]
            writer.writerow([i, sample.claim, verdict, verdict, "because", "True"])
    return path


def _evaluate(capsys, data: Path, predictions: Path, out: Path, *options: str) -> tuple[int, str]:
    capsys.readouterr()
    args = ["evaluate", "--data", data, "--predictions", predictions, "--out", out, *options]
    code = main([str(a) for a in [*args, "--bootstrap", "0", "--no-progress", "--no-key-points"]])
    return code, capsys.readouterr().err


def test_the_data_in_the_files_order_is_joined_by_position(capsys, tmp_path, perfect):
    code, err = _evaluate(capsys, RELEASED, perfect, tmp_path / "run")
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["macro_f1"] == 1.0


@pytest.mark.parametrize("how", ["reversed", "train-fraction"])
def test_a_positional_join_onto_other_samples_is_refused_in_one_line(capsys, tmp_path, samples, perfect, how):
    data, options = RELEASED, []
    if how == "reversed":
        data = tmp_path / "reversed.jsonl"
        write_jsonl(data, list(reversed(samples)))
    else:
        options = ["--train-fraction", "0.5"]
    code, err = _evaluate(capsys, data, perfect, tmp_path / "run", *options)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {perfect}: the claim of ") and "is not the claim of the sample" in err
    assert lines[0].endswith("or --id-map position to join by position anyway")
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_id_map_position_joins_by_position_when_asked(capsys, tmp_path, samples, perfect):
    data = tmp_path / "reversed.jsonl"
    write_jsonl(data, list(reversed(samples)))
    code, err = _evaluate(capsys, data, perfect, tmp_path / "run", "--id-map", "position")
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["macro_f1"] < 1.0  # as asked


def test_an_id_map_joins_any_order(capsys, tmp_path, samples, perfect):
    data = tmp_path / "reversed.jsonl"
    write_jsonl(data, list(reversed(samples)))
    id_map = tmp_path / "ids.json"
    id_map.write_text(json.dumps({str(i): s.news_url for i, s in enumerate(samples)}), encoding="utf-8")
    code, err = _evaluate(capsys, data, perfect, tmp_path / "run", "--id-map", str(id_map))
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["macro_f1"] == 1.0


def test_a_folder_holding_two_formats_is_refused_naming_both(capsys, tmp_path, samples, perfect):
    folder = perfect.parent
    write_jsonl(folder / "output" / "rwpost" / "output.jsonl", [{"post_info": {"claim": samples[0].claim}}])
    write_jsonl(folder / "flat.jsonl", [{"id": samples[0].id, "label": "False"}])
    code, err = _evaluate(capsys, RELEASED, folder, tmp_path / "run")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{folder}: holds predictions of 2 formats: defame (predictions.csv), agentfact (" in err
    assert err.strip().endswith("; give --format")
    code, err = _evaluate(capsys, RELEASED, folder, tmp_path / "run", "--format", "defame")
    assert code == 0, err
    with pytest.raises(Exception, match="holds predictions of 2 formats"):
        detect_format(folder)
