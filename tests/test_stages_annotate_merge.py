"""The annotate-merge stage (stages/annotate_merge.py)."""

from __future__ import annotations

from annotate_data import USERS
from annotate_data import ten_tasks as _ten_tasks

from rwpost.annotate.sources import read_annotation_samples
from rwpost.annotate.verdicts import validation_verdicts
from tests.conftest import DEV as RELEASED


def test_merge_stage_passes_samples_through_until_verdicts_exist_then_applies_them(tmp_path):
    from rwpost.stages import annotate_merge as stage
    from rwpost.stages.base import run_stage

    params = {
        "annotate": {
            "samples": str(RELEASED),
            "verdicts": str(tmp_path / "v.jsonl"),
            "out": str(tmp_path / "o"),
        }
    }
    summary = run_stage(stage, params)
    assert summary["post_link"]["link_containing"] == 0
    del summary["post_link"]
    assert summary == {"samples": 46, "verdicts": 0, "rejected_lines": 0, "not_annotated": 46}
    tasks = _ten_tasks()
    for task, sample in zip(tasks, list(read_annotation_samples(RELEASED))[:10], strict=True):
        task["data"]["record_id"] = sample.id
    verdicts = validation_verdicts(tasks, USERS, project="validation")
    (tmp_path / "v.jsonl").write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    summary = run_stage(stage, params)
    assert summary["agreed"] == 6 and summary["disputed"] == 4 and summary["not_annotated"] == 36
    assert len((tmp_path / "o" / "decisions.jsonl").read_text().splitlines()) == 6
