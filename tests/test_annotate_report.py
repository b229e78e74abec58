"""The post-link rates of the annotation report (annotate/report.py)."""

from __future__ import annotations

import pytest
from annotate_data import USERS, validation_result
from annotate_data import export_task as _export_task
from annotate_data import ten_tasks as _ten_tasks

from rwpost.annotate.merge import resolve_verdicts
from rwpost.annotate.sources import read_annotation_samples
from rwpost.annotate.verdicts import validation_verdicts
from tests.conftest import DEV as RELEASED


def test_post_link_rates_count_link_containing_and_link_absent_articles_as_the_paper_does():
    from rwpost.annotate.report import post_link_rates

    samples = list(read_annotation_samples(RELEASED))[:10]
    samples = [
        s.model_copy(update={"post_url": None if i in (2, 8) else "https://x.example/p"})
        for i, s in enumerate(samples)
    ]
    tasks = _ten_tasks()
    for task, sample in zip(tasks, samples, strict=True):
        task["data"]["record_id"] = sample.id
    verdicts = validation_verdicts(tasks, USERS, project="validation")
    judge = _export_task(99, samples[8].id, [(500, 13, validation_result("false_positive", "necessary"))])
    verdicts += validation_verdicts([judge], USERS, project="adjudication", adjudicated=True)
    rates = post_link_rates(resolve_verdicts(verdicts), samples)
    # Final: 0,1 correct with a link; 2 correct without; 5,6 missing; 7 incorrect; 8 false positive.
    assert (rates["link_containing"], rates["link_absent"]) == (5, 2)
    assert rates["correct_rate"] == pytest.approx(2 / 5)
    assert rates["false_positive_rate"] == pytest.approx(1 / 2)
