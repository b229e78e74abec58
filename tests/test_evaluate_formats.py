"""Other systems' files as they are: AgentFact main workflow and baselines trees, DEFAME CSV, generic files.

Every tree here is generated, with failures and odd label spellings; each run's scores must equal a direct
scikit-learn computation where a failure counts as wrong (the default policy).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rwpost.cli import main
from rwpost.evaluate.formats import detect_format, read_sets
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.evaluate_helpers import make_sample, sklearn_scores

GOLD = [Label.TRUE, Label.FALSE, Label.UNPROVEN, Label.FALSE, Label.FALSE, Label.TRUE] * 2
CLASSES = ["True", "False", "Unproven"]


@pytest.fixture
def samples():
    return [make_sample(i, g) for i, g in enumerate(GOLD)]


def expected(predicted: dict[int, str | None]) -> dict[str, float]:
    """Scores by scikit-learn under the default policy: a sample with no usable answer, or with a label
    outside the task's classes (Mixture in the 3-class task), is wrong."""
    answers = [predicted.get(i) for i in range(len(GOLD))]
    return sklearn_scores(GOLD, [a if a in CLASSES else None for a in answers], "wrong")


def assert_scores(metrics_path: Path, predicted: dict[int, str | None]) -> dict:
    metrics = json.loads(metrics_path.read_text())
    for key, value in expected(predicted).items():
        assert metrics[key] == pytest.approx(value), key
    return metrics


def agentfact_record(sample, label: str | None) -> dict:
    answer = {"validation_result": {"2-class_authenticity_label": "FALSE", "reasoning_logic": "because"}}
    if label is not None:
        answer["validation_result"]["3-class_authenticity_label"] = label
    return {
        "claim_id": sample.id,
        "post_info": {"claim": sample.claim, "news_url": sample.news_url, "merged_label": "FALSE"},
        "final_answer": {"updated_answer": answer},
    }


def test_agentfact_main_workflow_tree(tmp_path, data, samples, evaluate_cli):
    # output/<dataset>/<split>/<mode>/<start_id>/<model>/output.jsonl; labels lower case, one odd spelling
    labels = ["true", "false", "unproven", "true", "false", "false", "True ", "mostly false", "false"]
    root = tmp_path / "output"
    first = root / "rwpost" / "test" / "full" / "0" / "gpt-4o"
    second = root / "rwpost" / "test" / "full" / "6" / "gpt-4o"
    write_jsonl(first / "output.jsonl", [agentfact_record(samples[i], labels[i]) for i in range(6)])
    write_jsonl(second / "output.jsonl", [agentfact_record(samples[i], labels[i]) for i in range(6, 9)])
    # failures (bare input records): 2 failed in a first try and later succeeded -> the success wins
    failed = [{"news_url": samples[i].news_url, "claim": samples[i].claim} for i in (2, 9, 10)]
    write_jsonl(second / "output_failed.jsonl", failed)
    # sample 11 is in neither file: missing
    assert detect_format(root) == "agentfact"
    (found,) = read_sets(root)
    assert found.name == "rwpost/test/full/gpt-4o"
    assert sorted(found.failures) == sorted([samples[9].id, samples[10].id])
    assert dict(found.unknown_labels) == {"mostly false": 1}
    out = tmp_path / "run"
    evaluate_cli("--data", str(data), "--predictions", str(root), "--out", str(out))
    (run_dir,) = [p.parent for p in out.rglob("metrics.json")]
    predicted = {
        0: "True",
        1: "False",
        2: "Unproven",
        3: "True",
        4: "False",
        5: "False",
        6: "True",
        8: "False",
    }
    metrics = assert_scores(run_dir / "metrics.json", predicted)
    assert metrics["coverage"]["no_label"] == 4  # unknown spelling, two failures, one missing
    report = json.loads((run_dir / "input_report.json").read_text())
    assert report["format"] == "agentfact" and report["unknown_label_counts"] == {"mostly false": 1}
    assert [f["id"] for f in report["failures"]] == sorted([samples[9].id, samples[10].id])
    assert report["missing_ids"] == [samples[11].id]


def test_agentfact_baselines_results_tree_gives_one_run_per_model_setting_and_k(
    tmp_path, data, samples, evaluate_cli
):
    root = tmp_path / "baseline_lvlms" / "results"
    folders = ["T", "TI", "TE", "TIE", "TE_k1", "TE_k3", "TIE_k1", "TIE_k3"]
    wanted = {}
    for n, folder in enumerate(folders):
        # the model's own case; one odd spelling per folder; one failure per folder; a different miss each
        spell = ["TRUE", "False", "UNPROVEN", "false", "Not Enough Info", "FALSE"]
        rows, predicted = [], {}
        for i, sample in enumerate(samples):
            if i == n % len(samples):
                continue  # absent: missing
            if i == 11:
                continue  # failed: in the failures file
            label = spell[(i + n) % len(spell)]
            rows.append(agentfact_record(sample, label))
            canonical = {"true": "True", "false": "False", "unproven": "Unproven"}.get(label.lower())
            predicted[i] = canonical
        write_jsonl(root / "qwen2-vl" / folder / "output.jsonl", rows)
        error = {
            "claim_id": samples[11].id,
            "news_url": samples[11].news_url,
            "raw_output": "{",
            "error": "x",
        }
        write_jsonl(root / "qwen2-vl" / folder / "output_failed.jsonl", [error])
        wanted[folder] = predicted
    assert detect_format(root) == "agentfact-baselines"
    sets = read_sets(root)
    assert [s.name for s in sets] == sorted(f"qwen2-vl/{f}" for f in folders)
    assert {s.setting for s in sets} >= {"T", "T+I", "T+E", "T+I+E", "T+E k=1", "T+I+E k=3"}
    out = tmp_path / "runs"
    evaluate_cli("--data", str(data), "--predictions", str(root), "--out", str(out))
    for folder, predicted in wanted.items():
        run_dir = out / f"qwen2-vl_{folder}-{folder}"
        metrics = assert_scores(run_dir / "metrics.json", predicted)
        assert metrics["setting"] == {"T": "T", "TI": "T+I", "TE": "T+E", "TIE": "T+I+E"}.get(
            folder, folder.replace("_k", " k=").replace("TIE", "T+I+E").replace("TE", "T+E")
        )
    board = json.loads((out / "leaderboard" / "leaderboard.json").read_text())
    rows = board if isinstance(board, list) else board["rows"]
    assert len(rows) == 8


def test_defame_predictions_csv_with_an_id_map(tmp_path, data, samples, evaluate_cli):
    verdicts = {
        0: "SUPPORTED",
        1: "REFUTED",
        2: "NEI",
        3: "refuted",
        4: "CONFLICTING",
        5: "REFUSED_TO_ANSWER",
        6: "Supported ",
        7: "maybe",
        9: "REFUTED",
        10: "NEI",
        11: "REFUTED",
    }  # 8 absent: a crashed worker
    path = tmp_path / "defame" / "predictions.csv"
    path.parent.mkdir()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sample_index", "claim", "target", "predicted", "justification", "correct"])
        for i, verdict in verdicts.items():
            writer.writerow([100 + i, samples[i].claim, "x", verdict, f"because {i}", ""])
    id_map = tmp_path / "ids.json"
    id_map.write_text(json.dumps({str(100 + i): s.news_url for i, s in enumerate(samples)}))
    assert detect_format(path) == "defame"
    out = tmp_path / "run"
    evaluate_cli("--data", str(data), "--predictions", str(path), "--id-map", str(id_map), "--out", str(out))
    names = {"SUPPORTED": "True", "REFUTED": "False", "NEI": "Unproven", "CONFLICTING": "Mixture"}
    predicted = {i: names.get(v.strip().upper()) for i, v in verdicts.items()}
    assert_scores(out / "metrics.json", predicted)
    report = json.loads((out / "input_report.json").read_text())
    assert report["missing_ids"] == [samples[8].id]
    assert [f["id"] for f in report["failures"]] == [samples[5].id]
    assert report["unknown_label_counts"] == {"maybe": 1}


def test_generic_file_with_dotted_fields_and_a_label_map(tmp_path, data, samples, evaluate_cli):
    spellings = ["Real", "Fake", "unclear", "FAKE", "Satire", "Fake", "Real", "Satire", None, "Fake", "Real"]
    rows = [
        {"meta": {"url": samples[i].news_url}, "out": {"verdict": v}} for i, v in enumerate(spellings)
    ]  # 11 absent; 8 has no label (a failure)
    path = tmp_path / "system.jsonl"
    write_jsonl(path, rows)
    out = tmp_path / "run"
    label_map = "fake=False,real=True,unclear=Unproven"
    evaluate_cli(
        "--data", str(data), "--predictions", str(path), "--format", "generic", "--id-field", "meta.url",
        "--label-field", "out.verdict", "--label-map", label_map, "--out", str(out),
    )  # fmt: skip
    names = {"real": "True", "fake": "False", "unclear": "Unproven"}
    predicted = {i: names.get(str(v).lower()) for i, v in enumerate(spellings)}
    assert_scores(out / "metrics.json", predicted)
    report = json.loads((out / "input_report.json").read_text())
    assert report["unknown_label_counts"] == {"Satire": 2}
    assert report["missing_ids"] == [samples[11].id] and [f["id"] for f in report["failures"]] == [
        samples[8].id
    ]


def test_a_file_with_no_readable_row_is_an_error(tmp_path, data):
    path = tmp_path / "broken.jsonl"
    path.write_text("not json\n{also not\n")
    code = main(["evaluate", "--data", str(data), "--predictions", str(path), "--format", "generic",
                 "--label-field", "x", "--out", str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    assert code != 0
