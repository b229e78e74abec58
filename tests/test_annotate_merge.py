"""Human verdicts resolved and merged over the model's decisions (annotate/merge.py)."""

from __future__ import annotations

from annotate_data import DISPUTED_POSITIONS, USERS, validation_result
from annotate_data import export_task as _export_task
from annotate_data import ten_tasks as _ten_tasks

from rwpost.annotate.merge import merge_verdicts, resolve_verdicts
from rwpost.annotate.sources import read_annotation_samples
from rwpost.annotate.verdicts import validation_verdicts
from tests.conftest import DEV as RELEASED


def test_two_agreeing_annotators_decide_and_disagreements_wait_for_adjudication():
    verdicts = validation_verdicts(_ten_tasks(), USERS, project="validation")
    human = {v.id: v for v in resolve_verdicts(verdicts)}
    disputed = sorted(rid for rid, v in human.items() if v.status == "disputed")
    assert disputed == [f"rw-{i:016x}" for i in DISPUTED_POSITIONS]
    judge = _export_task(99, "rw-0000000000000003", [(500, 13, validation_result("correct", "relevant"))])
    verdicts += validation_verdicts([judge], USERS, project="adjudication", adjudicated=True)
    human = {v.id: v for v in resolve_verdicts(verdicts)}
    assert human["rw-0000000000000003"].status == "adjudicated"
    assert human["rw-0000000000000003"].image_role == "relevant"
    assert human["rw-0000000000000000"].status == "agreed"


def test_merge_lets_humans_override_the_model_and_keeps_every_sample():
    samples = list(read_annotation_samples(RELEASED))[:10]
    # Rebind the ten test verdicts to real record ids.
    tasks = _ten_tasks()
    for task, sample in zip(tasks, samples, strict=True):
        task["data"]["record_id"] = sample.id
    samples[7] = samples[7].model_copy(
        update={"post_url": "https://wrong.example/post", "image_required": "no"}
    )
    human = resolve_verdicts(validation_verdicts(tasks, USERS, project="validation"))
    result = merge_verdicts(samples, human)
    assert len(result.samples) == 10
    merged = {s.id: s for s in result.samples}
    # Record 7: both say the post link is incorrect and the image necessary -> link removed, image kept.
    assert merged[samples[7].id].post_url is None
    assert merged[samples[7].id].image_required == "yes"
    # Record 5: both say the image is only relevant -> the human decision drops it.
    decisions = {d.id: d for d in result.decisions}
    assert decisions[samples[5].id].keep is False
    assert decisions[samples[5].id].details["overrides"] == "necessity"
    assert sorted(result.disputed) == sorted(samples[i].id for i in DISPUTED_POSITIONS)
    assert merged[samples[3].id] == samples[3]  # disputed: untouched until adjudicated
    assert result.counts == {"agreed": 6, "disputed": 4, "dropped": 2, "kept": 4}
