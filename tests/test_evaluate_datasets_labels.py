"""``--data labels:FILE``: a hand-made labelled file (JSON lines or CSV) scores a predictions file in the
file's own labels, over every row; the RW-Post views hold only the rows whose label is an RW-Post one."""

from __future__ import annotations

import csv
import json

import pytest

from tests.conftest import one_line, run_cli

SCORING = ["--bootstrap", "0", "--no-progress", "--no-key-points"]

GOLD = [
    {"id": "c1", "label": "Supported", "claim": "The bridge opened in 1932.", "source": "desk A"},
    {"id": "c2", "label": "Refuted", "claim": "The moon is made of cheese."},
    {"id": "c3", "label": "Refuted", "claim": "Water boils at 50 C at sea level."},
    {"id": "c4", "label": "Not Enough Evidence", "claim": "A secret meeting took place."},
]
ANSWERS = {"c1": "Supported", "c2": "Refuted", "c3": "Supported", "c4": "Refuted"}
# c1, c2 right (accuracy 1/2). Supported: tp 1, fp 1 (c3): F1 2/3. Refuted: tp 1, fp 1 (c4), fn 1 (c3):
# F1 1/2. Not Enough Evidence: fn 1: F1 0. Macro F1 over the file's three labels: (2/3 + 1/2 + 0) / 3 = 7/18.


def write(path, rows):
    if path.suffix == ".csv":
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=sorted({k for r in rows for k in r}))
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_predictions_file_is_scored_in_the_files_own_labels(tmp_path, capsys, suffix):
    gold = write(tmp_path / f"gold{suffix}", GOLD)
    predictions = write(tmp_path / "answers.jsonl", [{"id": k, "label": v} for k, v in ANSWERS.items()])
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"labels:{gold}", "--predictions", predictions,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["primary_view"] == "labels" and metrics["n_samples"] == 4
    assert metrics["coverage"]["answered"] == 4
    assert metrics["accuracy"] == 0.5 and metrics["macro_f1"] == pytest.approx(7 / 18)
    view = metrics["views"]["labels"]
    assert view["macro_classes"] == ["Not Enough Evidence", "Refuted", "Supported"]
    assert metrics["views"]["main"]["n"] == 0  # none of these labels is an RW-Post one


def test_a_bad_labels_file_is_one_line_naming_its_line(tmp_path, capsys):
    gold = write(tmp_path / "gold.jsonl", [*GOLD[:2], {"id": "c1", "label": "Refuted"}])
    code, err = run_cli(capsys, "evaluate", "--data", f"labels:{gold}", "--detector", "majority",
                        "--out", tmp_path / "run", *SCORING)  # fmt: skip
    assert code != 0 and "gold.jsonl:3" in one_line(err) and "also on line 1" in one_line(err)
    outside = write(tmp_path / "outside.jsonl", [{"id": "c1", "label": "x", "image": "../../etc/passwd"}])
    code, err = run_cli(capsys, "evaluate", "--data", f"labels:{outside}", "--detector", "majority",
                        "--out", tmp_path / "run2", *SCORING)  # fmt: skip
    assert code != 0 and "outside the file's folder" in one_line(err)
    assert not (tmp_path / "run").exists() and not (tmp_path / "run2").exists()
