"""Exported Label Studio annotations become verdicts (annotate/verdicts.py)."""

from __future__ import annotations

import pytest
from annotate_data import USERS, validation_result
from annotate_data import export_task as _export_task
from annotate_data import ten_tasks as _ten_tasks

from rwpost.annotate.verdicts import validation_verdicts
from rwpost.errors import RecordError
from rwpost.records import Reject


def test_exported_annotations_become_one_verdict_per_task_and_annotator():
    verdicts = validation_verdicts(_ten_tasks(), USERS, project="validation")
    assert len(verdicts) == 20
    assert {v.annotator for v in verdicts} == {"a@rwpost.test", "b@rwpost.test"}
    assert verdicts[0].post_extraction == "correct" and verdicts[0].image_role == "necessary"


def test_unknown_choice_is_set_aside_with_its_reason():
    task = _export_task(1, "rw-x", [(1, 11, validation_result("maybe", "necessary"))])
    rejects: list[Reject] = []
    assert validation_verdicts([task], USERS, project="validation", rejects=rejects) == []
    assert "post_extraction 'maybe'" in rejects[0].reason and rejects[0].id == "rw-x"
    with pytest.raises(RecordError, match=r"validation task 1, record rw-x: post_extraction 'maybe'"):
        validation_verdicts([task], USERS, project="validation")
