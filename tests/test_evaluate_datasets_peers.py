"""The peers' releases from the user's copy: VeriTaS (a quarter's claims.json + media) and AVeriTeC /
AVerImaTeC (JSON arrays with QA evidence). Each file below is hand-made in the documented layout (DEFAME's
``defame/eval/veritas/benchmark.py`` and ``defame/eval/averitec/benchmark.py``, AVeriTeC's data README,
the AVerImaTeC baseline's reader); a predictions file is scored in the benchmark's own labels, the expected
figures computed by hand."""

from __future__ import annotations

import json

import pytest

from rwpost.evaluate.datasets import parse_data_spec
from tests.conftest import one_line, run_cli

SCORING = ["--bootstrap", "0", "--no-progress", "--no-key-points"]


def veritas_quarter(root, claims):
    quarter = root / "q4_2024"
    for kind in ("image", "video"):
        (quarter / "media" / kind).mkdir(parents=True, exist_ok=True)
    (quarter / "media" / "image" / "42.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    (quarter / "media" / "video" / "7.mp4").write_bytes(b"\x00")
    (quarter / "claims.json").write_text(
        json.dumps({"metadata": {"total_claims": len(claims)}, "claims": claims}, indent=2)
    )
    return root


CLAIMS = [
    {"id": 1, "data": "<image:42> This photo shows the Valencia flood.", "date": "2024-10-30T00:00:00Z",
     "verdict": {"veracity": 0.9, "context_coverage": 1.0, "integrity": 0.8, "media": []}},
    {"id": 2, "data": "The dam burst on 29 October. <video:7>", "date": "2024-10-31T00:00:00Z",
     "verdict": {"veracity": -0.6, "integrity": -0.33}},
    {"id": 3, "data": "A minister resigned over it.", "verdict": {"veracity": 0.1, "integrity": 0.2}},
    {"id": 4, "data": "Aid arrived within a day.", "verdict": {}},
]  # fmt: skip


def test_veritas_is_scored_in_its_integrity_classes(tmp_path, capsys):
    root = veritas_quarter(tmp_path / "VeriTaS", CLAIMS)
    spec = parse_data_spec(f"veritas/q4_2024:{root}")
    samples = spec.samples()
    # DEFAME's thresholds: >= 0.33 Intact, <= -0.33 Compromised, else (and a missing score) Unknown
    assert [s.label_original for s in samples] == ["Intact", "Compromised", "Unknown", "Unknown"]
    assert samples[0].image.path == "media/image/42.jpg" and samples[1].extra["media"] == [
        "media/video/7.mp4"
    ]
    assert samples[1].extra["veracity_class"] == "false" and samples[0].claim.startswith("[image 42]")
    answers = tmp_path / "answers.jsonl"
    # an RW-Post answer stands for its integrity class: True = Intact, False = Compromised, Unproven = Unknown
    answers.write_text("".join(json.dumps({"id": s.id, "label": label}) + "\n" for s, label in
                               zip(samples, ["True", "True", "Unproven", "False"], strict=True)))  # fmt: skip
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"veritas/q4_2024:{root}", "--predictions", answers,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    # right: 1 and 3 (1/2). Intact: tp 1, fp 1 (2): F1 2/3; Compromised: fn 1, fp 1 (4): 0; Unknown: tp 1,
    # fn 1 (4): F1 2/3. Macro over the three classes: 4/9.
    assert metrics["primary_view"] == "veritas_integrity"
    assert metrics["accuracy"] == 0.5 and metrics["macro_f1"] == pytest.approx(4 / 9)


def test_a_veritas_media_reference_without_its_file_is_one_line(tmp_path, capsys):
    root = veritas_quarter(tmp_path / "VeriTaS", [{"id": 9, "data": "<image:99> x", "verdict": {}}])
    code, err = run_cli(capsys, "evaluate", "--data", f"veritas/q4_2024:{root}", "--detector", "majority",
                        "--out", tmp_path / "run", *SCORING)  # fmt: skip
    assert code != 0 and "claims.json:6" in one_line(err) and "media/image/99.jpg" in one_line(err)


AVERITEC = [
    {"claim": "Sean Connery refused to appear in an Apple commercial.", "label": "Refuted",
     "justification": "A satire site made it up.", "claim_date": "31-10-2020", "speaker": None,
     "fact_checking_article": "https://example.org/fc/1", "reporting_source": "Facebook",
     "questions": [{"question": "Where was the claim first published?", "answers": [
         {"answer": "On a satire site.", "answer_type": "Abstractive",
          "source_url": "https://example.org/satire", "source_medium": "Web text"}]}]},
    {"claim": "The bridge opened in 1932.", "label": "Supported", "claim_date": "01-02-2021"},
    {"claim": "Crime fell by half.", "label": "Conflicting Evidence/Cherrypicking", "claim_date": ""},
    {"claim": "A secret meeting took place.", "label": "Not Enough Evidence", "claim_date": None},
]  # fmt: skip


def test_averitec_is_scored_in_its_four_labels_with_the_qa_evidence_as_gold_evidence(tmp_path, capsys):
    root = tmp_path / "AVeriTeC"
    root.mkdir()
    (root / "dev.json").write_text(json.dumps(AVERITEC, indent=2))
    samples = parse_data_spec(f"averitec:{root}").samples()
    assert [s.label_original for s in samples] == [r["label"] for r in AVERITEC]
    assert samples[0].evidence[0].content == "Q: Where was the claim first published? A: On a satire site."
    assert str(samples[0].claim_time) == "2020-10-31"
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": s.id, "label": label}) + "\n" for s, label in
                               zip(samples, ["False", "True", "Mixture", "False"], strict=True)))  # fmt: skip
    out = tmp_path / "run"
    code, err = run_cli(capsys, "evaluate", "--data", f"averitec:{root}", "--predictions", answers,
                        "--out", out, *SCORING)  # fmt: skip
    assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    # 3 of 4 right; Refuted: tp 1, fp 1: F1 2/3; Supported 1; Conflicting 1; NEE 0: macro (2/3 + 2) / 4
    assert metrics["primary_view"] == "averitec" and metrics["accuracy"] == 0.75
    assert metrics["macro_f1"] == pytest.approx((2 / 3 + 2) / 4)
    assert metrics["views"]["averitec"]["macro_classes"] == [
        "Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"
    ]  # fmt: skip


def test_averimatec_reads_claim_text_images_and_bad_labels_name_the_line(tmp_path, capsys):
    root = tmp_path / "AVerImaTeC"
    (root / "images").mkdir(parents=True)
    rows = [
        {"claim_text": "This image shows the 2023 parade.", "claim_images": ["./data/images/3.jpg"],
         "date": "2023-05-02", "location": "US", "label": "Refuted",
         "questions": [{"question": "When was the image first online?", "input_images": [],
                        "answers": [{"answer_type": "Text", "answer_text": "In 2019."}]}]},
        {"claim_text": "The mayor said so.", "claim_images": [], "date": "", "label": "Pants on Fire"},
    ]  # fmt: skip
    (root / "val.json").write_text(json.dumps(rows, indent=2))
    code, err = run_cli(capsys, "evaluate", "--data", f"averimatec:{root}", "--detector", "majority",
                        "--out", tmp_path / "run", *SCORING)  # fmt: skip
    assert code != 0 and "val.json:" in one_line(err) and "'Pants on Fire'" in one_line(err)
    (root / "val.json").write_text(json.dumps(rows[:1]))
    [sample] = parse_data_spec(f"averimatec:{root}").samples()
    assert sample.image.path == "images/3.jpg" and sample.evidence[0].content.endswith("A: In 2019.")
