"""The AgentFact authors' files both ways (issue 24, section 4): ``rwpost export-run --format agentfact``
writes their layout with the fields their analysis reads, and the reader files their main-workflow folders
under the cell their mode names."""

from __future__ import annotations

import json

from rwpost.cli import main
from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.formats.agentfact import read_main
from rwpost.io import write_jsonl
from rwpost.labels import Label
from rwpost.testing.llm import FakeLLMServer, Reply, message_text
from tests.evaluate_helpers import evidence, make_sample

BASELINE_FIELDS = {"claim_id", "post_info", "setting", "model", "context", "final_answer", "evidence_meta"}
POST_FIELDS = {"claim", "post_text", "post_image", "claim_time", "news_url", "merged_label", "fake_type"}


def verdict(body):
    number = int(message_text(body, "user").split("Generated claim number ")[1].split(".")[0])
    if number == 2:
        return Reply.text("not JSON")
    return Reply.answer(
        {"label": "False", "confidence": 0.8, "explanation": "Older photo.", "evidence_urls": []}
    )


def _authors_rows(path):
    """What their analyze_evidence_ratio.py keeps of an output.jsonl: gold and predicted 3-class labels and
    the evidence ratio (rows without merged_label or evidence_meta.total_count are skipped)."""
    kept = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        gt = str(obj.get("post_info", {}).get("merged_label", "")).strip().lower()
        pred = str(
            obj["final_answer"]["updated_answer"]["validation_result"]["3-class_authenticity_label"]
        ).lower()
        meta = obj.get("evidence_meta") or {}
        if (
            gt in ("true", "false", "unproven")
            and pred in ("true", "false", "unproven")
            and meta.get("total_count")
        ):
            kept.append((gt, pred, meta["shown_count"] / meta["total_count"]))
    return kept


def test_a_grid_exports_in_the_authors_baseline_layout_that_their_analysis_reads(tmp_path):
    samples = [make_sample(i, Label.FALSE, evidence=evidence(4)) for i in range(4)]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    with FakeLLMServer(verdict) as llm:
        config = {"model": "test-model", "base_url": llm.base_url}
        for setting, folder in (("T+E", "TE"), ("T+E k=1", "TE_k1")):
            spec = RunSpec("vlm", config=config, secrets={"api_key": "k"}, setting=setting, n_resamples=0)
            evaluate(samples, spec, tmp_path / "grid" / folder, encode=None)
    code = main(
        ["export-run", str(tmp_path / "grid"), "--format", "agentfact", "--out", str(tmp_path / "results"),
         "--data", str(data)]
    )  # fmt: skip
    assert code == 0
    for slug, shown in (("TE", 4), ("TE_k1", 1)):
        folder = tmp_path / "results" / "test-model" / slug
        rows = [json.loads(x) for x in (folder / "output.jsonl").read_text().splitlines()]
        assert [r["claim_id"] for r in rows] == [0, 1, 3]
        assert set(rows[0]) == BASELINE_FIELDS and set(rows[0]["post_info"]) == POST_FIELDS
        assert rows[0]["post_info"]["merged_label"] == "FALSE" and rows[0]["setting"] == "T+E"
        assert rows[0]["model"] == "test-model"
        assert rows[0]["evidence_meta"] == {"total_count": 4, "shown_count": shown}
        answer = rows[0]["final_answer"]["updated_answer"]
        assert answer["validation_result"]["3-class_authenticity_label"] == "FALSE"
        assert answer["confidence_level"] == "4"
        [failed] = [json.loads(x) for x in (folder / "output_failed.jsonl").read_text().splitlines()]
        assert failed["claim_id"] == 2 and failed["news_url"] == samples[2].news_url and failed["error"]
        assert [(g, p) for g, p, _ in _authors_rows(folder / "output.jsonl")] == [("false", "false")] * 3
    ratios = sorted(
        r for _, _, r in _authors_rows(tmp_path / "results" / "test-model" / "TE_k1" / "output.jsonl")
    )
    assert ratios == [0.25] * 3


def test_key_points_are_written_once_with_their_ids_and_gold_contents():
    from rwpost.evaluate.contract import Prediction
    from rwpost.evaluate.export import agentfact_row

    sample = make_sample(5, Label.TRUE, evidence=evidence(3))
    prediction = Prediction(
        id=sample.id,
        label=Label.TRUE,
        probabilities={Label.TRUE: 1.0},
        explanation="Confirmed.\n- 1. The record shows it. [G1, G3]",
        evidence_urls=["https://example.org/e1", "https://example.org/e3"],
    )
    row = agentfact_row(0, sample, prediction, setting="T+E", model="m", baseline=False, k=None)
    result = row["final_answer"]["updated_answer"]["validation_result"]
    assert result["key_points"] == ["1. The record shows it."] and result["evidence_ids"] == ["G1", "G3"]
    assert result["3-class_authenticity_label"] == "true" and "setting" not in row  # the main workflow
    assert row["context"]["information list with link"] == [
        {"id": "G1", "content": "evidence 1", "link": "https://example.org/e1"},
        {"id": "G3", "content": "evidence 3", "link": "https://example.org/e3"},
    ]


def test_the_reader_files_main_workflow_folders_under_the_cell_their_mode_names(tmp_path):
    row = {
        "claim_id": 0,
        "post_info": {"news_url": "https://www.snopes.com/fact-check/x/", "merged_label": "FALSE"},
        "final_answer": {"updated_answer": {"validation_result": {"3-class_authenticity_label": "false"}}},
    }
    for mode in ("open_book", "open_web", "close_book"):
        write_jsonl(
            tmp_path / "output" / "rwpost" / "dev" / mode / "0" / "gpt-4o-mini" / "output.jsonl", [row]
        )
    sets = {s.name: s.setting for s in read_main(tmp_path / "output")}
    assert sets == {
        "rwpost/dev/close_book/gpt-4o-mini": "T",
        "rwpost/dev/open_book/gpt-4o-mini": "T+E",
        "rwpost/dev/open_web/gpt-4o-mini": "T+W",
    }


def test_runs_of_one_model_in_one_cell_export_to_their_own_folders(tmp_path):
    # issue 39 §2 (new-user D2): Table V's five runs (one model, one cell) went into one folder, 4 lost
    samples = [make_sample(i, Label.FALSE, evidence=evidence(2)) for i in range(3)]
    data = tmp_path / "samples.jsonl"
    write_jsonl(data, samples)
    with FakeLLMServer(verdict) as llm:
        config = {"model": "test-model", "base_url": llm.base_url}
        for folder in ("full", "wo-sp"):
            spec = RunSpec("vlm", config=config, secrets={"api_key": "k"}, setting="T+E", n_resamples=0)
            evaluate(samples, spec, tmp_path / "grid" / folder, encode=None)
    code = main(
        ["export-run", str(tmp_path / "grid"), "--format", "agentfact", "--out", str(tmp_path / "results"),
         "--data", str(data)]
    )  # fmt: skip
    assert code == 0
    written = sorted(
        p.parent.relative_to(tmp_path / "results") for p in tmp_path.glob("results/**/output.jsonl")
    )
    assert [str(p) for p in written] == ["test-model/full/TE", "test-model/wo-sp/TE"]
