"""The predictions formats of issue 25, built here in their authors' layouts: MMFakeBench's output files
(MMD-Agent, ``eval/utils/vqa.py``), scored on MMFakeBench through ``--data mmfakebench:FOLDER``, and the
MIT T2Agent port's ``details/<index>_<id>.json`` files, scored on RW-Post samples; odd and broken rows are
reported naming file and line, a file that cannot be read is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwpost.evaluate.formats import detect_format, read_sets
from rwpost.evaluate.formats.mmdagent import answer_class
from rwpost.io import write_jsonl
from rwpost.labels import Label
from tests.conftest import one_line, run_cli
from tests.evaluate_helpers import MMFAKEBENCH as MMFB
from tests.evaluate_helpers import make_sample, mmfakebench_folder

SCORING = ["--bootstrap", "0", "--no-progress", "--no-key-points"]


def mmd_record(row: dict, answers: list[str], root: str = "./data/MMFakeBench_test") -> dict:
    """One record as ``evaluate_VQA_MMD_Agent`` writes it (the caption inside each stage's question)."""
    caption = row["text"] if row["text"].endswith(".") else row["text"] + "."
    return {
        "gt_answers": row["gt_answers"][0],
        "image_path": f"{root}/{row['image_path']}",
        "model_name": "llava-1.6-34b",
        "multiple_gt_answers": row["fake_cls"],
        "binary_fake_type": "Fake",
        "fake_type": "mismatch",
        "question": [f"Given the news caption: {caption} ... Thought 1: ..." for _ in answers],
        "answer": answers,
    }


def write_mmd(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=4))
    return path


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("TEXT SUPPORTS.\nThought 2: ...\nFinish[TEXT REFUTES].", "textual_veracity_distortion"),
        ("Finish [IMAGE REFUTES]", "visual_veracity_distortion"),
        ("the caption and image: Finish[MISMATCH]", "mismatch"),
        ("Finish[MATCH]. The image shows the event.", "original"),
        ("finish[original]", "original"),
        ("The image matches the caption.", None),  # main_eval_only's X
    ],
)
def test_the_answer_is_read_as_main_eval_only_reads_it(answer, expected):
    assert answer_class(answer) == expected


def test_mmd_agent_output_scored_on_mmfakebench(tmp_path, capsys):
    root = mmfakebench_folder(tmp_path, MMFB)
    run = tmp_path / "answers" / "llava-1.6-34b" / "20250101000000_MMD_Agent"
    # the real one is answered original (right); the mismatch one is refuted by its text check (fake: right)
    path = write_mmd(
        run / "MMFakeBench_test.json",
        [
            mmd_record(MMFB[0], ["TEXT SUPPORTS", "IMAGE SUPPORTS", "Finish[MATCH]"]),
            mmd_record(MMFB[1], ["Thought: the entity is wrong. Finish[TEXT REFUTES]."]),
        ],
    )
    assert detect_format(path) == "mmdagent" and detect_format(tmp_path / "answers") == "mmdagent"
    [found] = read_sets(tmp_path / "answers")
    assert found.name == "llava-1.6-34b/20250101000000_MMD_Agent/MMFakeBench_test"
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--predictions", path,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    assert json.loads((out / "metrics.json").read_text())["accuracy"] == 1.0
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["label"] for r in rows] == ["True", "False"]
    assert [r["explanation"].splitlines()[0] for r in rows] == [
        "MMD-Agent answer: original",
        "MMD-Agent answer: textual_veracity_distortion",
    ]


def test_mmd_agent_rows_in_another_order_than_the_split_are_refused(tmp_path, capsys):
    root = mmfakebench_folder(tmp_path, MMFB)
    path = write_mmd(
        tmp_path / "MMFakeBench_test.json",
        [mmd_record(MMFB[1], ["Finish[MISMATCH]"]), mmd_record(MMFB[0], ["Finish[MATCH]"])],
    )
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--predictions", path,
                        "--out", tmp_path / "run", *SCORING)  # fmt: skip
    assert code == 1 and "MMFakeBench_test.json: the claim of 2 of 2 rows is not the claim" in one_line(err)
    # --id-map position joins them anyway: both answers are then scored against the other sample's label
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--predictions", path,
                        "--id-map", "position", "--out", tmp_path / "anyway", *SCORING)  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "anyway" / "metrics.json").read_text())["accuracy"] == 0.0


def test_odd_and_broken_mmd_agent_rows_name_file_and_line(tmp_path, capsys):
    path = write_mmd(
        tmp_path / "MMFakeBench_test.json",
        [
            mmd_record(MMFB[0], ["Finish[MATCH]"]),
            ["not", "a", "record"],
            {**mmd_record(MMFB[1], []), "answer": 7},
            mmd_record(MMFB[1], ["I cannot tell."]),
        ],
    )
    [found] = read_sets(path, "mmdagent")
    text = path.read_text().splitlines()
    starts = [i + 1 for i, line in enumerate(text) if line in ("    {", "    [")]
    assert [b["reason"] for b in found.bad_rows] == [
        f"{path}:{starts[1]}: expected an object with answer and multiple_gt_answers",
        f"{path}:{starts[2]}: answer is not text or a list of texts (7)",
    ]
    assert found.rows["3"].label is None and found.unknown_labels == {"X": 1}
    # a cut file cannot be read on: one line naming where
    cut = tmp_path / "cut" / "MMFakeBench_test.json"
    cut.parent.mkdir()
    cut.write_text(path.read_text()[:-60])
    root = mmfakebench_folder(tmp_path, MMFB)
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--predictions", cut,
                        "--format", "mmdagent", "--out", tmp_path / "run", *SCORING)  # fmt: skip
    assert code == 1 and f"{cut}:" in one_line(err) and "not valid JSON" in err
    # bytes that are not UTF-8: one line naming the file and line
    latin = tmp_path / "latin" / "MMFakeBench_test.json"
    latin.parent.mkdir()
    latin.write_bytes(path.read_bytes().replace(b"A real caption", b"A r\xe9al caption"))
    code, err = run_cli(capsys, "evaluate", "--data", f"mmfakebench:{root}", "--predictions", latin,
                        "--format", "mmdagent", "--out", tmp_path / "run2", *SCORING)  # fmt: skip
    assert code == 1 and f"{latin}:" in one_line(err) and "UTF-8" in err


def detail(index: int, sample, verdict: str, error: str | None = None) -> dict:
    """One ``details/<index>_<id>.json`` as ``run_remmdbench.py`` writes it (trimmed)."""
    prediction = None
    if error is None:
        step = {
            "thought": "search",
            "action": "Google[claim]",
            "observation": "A page: snippet (https://news.example.com/a)\nAnother (https://news.example.org/b)",
            "st_score": 0.0,
            "sc_score": 0.0,
        }
        prediction = {
            "predicted_verdict": verdict,
            "subtask_results": {
                "text": {"visits": 3, "best_answer": "TEXT_REFUTE", "best_trajectory": [step]}
            },
            "final_scores": {"p_real": 0.25, "p_fake_text": 0.9},
            "taxonomy_rationale": "The text fabricates a quote.",
        }
    return {
        "index": index,
        "sample_id": sample.id,
        "ground_truth_verdict": "False",
        "ground_truth_taxonomy": [],
        "predicted_verdict": verdict,
        "predicted_taxonomy": ["T1 Fabrication"] if error is None else "ERROR",
        "verdict_match": False,
        "elapsed_seconds": 12.5,
        "prediction": prediction,
        "error": error,
    }


def write_details(run: Path, files: dict[str, dict | str | bytes]) -> Path:
    folder = run / "details"
    folder.mkdir(parents=True)
    for name, record in files.items():
        if isinstance(record, dict):
            record = json.dumps(record, ensure_ascii=False, indent=2)
        (folder / name).write_bytes(record if isinstance(record, bytes) else record.encode())
    return folder


def test_t2agent_port_details_scored_on_rw_post_samples(tmp_path, capsys):
    samples = [make_sample(i, label) for i, label in enumerate([Label.FALSE, Label.TRUE, Label.FALSE])]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    run = tmp_path / "runs" / "gpt-4o-mini"
    broken = json.dumps(detail(3, samples[0], "False"), indent=2)[:-30]
    folder = write_details(
        run,
        {
            "000_a.json": detail(0, samples[0], "False"),
            "001_b.json": detail(1, samples[1], "Mostly True"),  # Table II: Mixture
            "002_c.json": detail(2, samples[2], "ERROR", error="Traceback...\nTimeoutError: read timed out"),
            "003_d.json": broken,
            "004_f.json": b'{\n"sample_id": "caf\xe9"}',  # not UTF-8
            "007_e.json": detail(4, samples[0], "True"),
            "notes.json": "{}",  # not a detail file: not read
        },
    )
    assert detect_format(tmp_path / "runs") == "t2agent-port" and detect_format(folder) == "t2agent-port"
    [found] = read_sets(tmp_path / "runs")
    assert found.name == "gpt-4o-mini" and len(found.files) == 6
    reasons = [b["reason"] for b in found.bad_rows]
    assert reasons[0].startswith(f"{folder / '003_d.json'}:") and "not valid JSON" in reasons[0]
    assert reasons[1].startswith(f"{folder / '004_f.json'}:2: ") and "UTF-8" in reasons[1]
    assert reasons[2] == f"{folder / '007_e.json'}:2: index 4, but the file name says 7"
    assert found.failures == {samples[2].id: f"TimeoutError: read timed out ({folder / '002_c.json'})"}
    assert found.rows[samples[1].id].label == Label.MIXTURE
    row = found.rows[samples[0].id]
    assert row.label == Label.FALSE and row.line == 6  # its predicted_verdict
    assert row.evidence_urls == ["https://news.example.com/a", "https://news.example.org/b"]
    assert row.explanation.splitlines() == [
        "T2Agent port verdict: False; taxonomy: ['T1 Fabrication']",
        "p(real) 0.25",
        "- text: TEXT_REFUTE (visits 3)",
        "The text fabricates a quote.",
    ]

    out = tmp_path / "scored"
    code, err = run_cli(capsys, "evaluate", "--data", data, "--predictions", run, "--out", out, *SCORING)
    assert code == 0, err
    rows = {r["id"]: r for r in map(json.loads, (out / "predictions.jsonl").read_text().splitlines())}
    assert rows[samples[0].id]["label"] == "False" and rows[samples[1].id]["label"] == "Mixture"
    assert rows[samples[2].id]["error"].startswith("system failure: TimeoutError")
    report = json.loads((out / "input_report.json").read_text())
    assert len(report["bad_rows"]) == 3
    code, err = run_cli(capsys, "evaluate", "--data", data, "--predictions", run, "--strict",
                        "--out", tmp_path / "strict", *SCORING)  # fmt: skip
    assert code == 1 and "3 bad rows" in one_line(err)


def test_a_folder_without_port_files_is_one_line(tmp_path, capsys):
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, [make_sample(0, Label.TRUE)])
    (tmp_path / "empty" / "details").mkdir(parents=True)
    code, err = run_cli(capsys, "evaluate", "--data", data, "--predictions", tmp_path / "empty",
                        "--format", "t2agent-port", "--out", tmp_path / "r", *SCORING)  # fmt: skip
    assert code == 2 and "no details/<index>_<id>.json files of the T2Agent port" in one_line(err)
