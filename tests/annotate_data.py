"""Annotations shared by the fast and the live annotation tests, with agreement values computed by hand.

Ten records, two annotators (A answers first, so A is Cohen's first rater). The answers are made up
for the tests; the records they refer to are the first ten released RW-Post dev records.

post_extraction  A: c c c c c m m i f c     B: c c c c m m m i c c
  observed agreement 8/10 = 0.8; marginals A c6 m2 i1 f1, B c6 m3 i1
  chance agreement (6*6 + 2*3 + 1*1 + 1*0) / 100 = 0.43
  kappa = (0.8 - 0.43) / (1 - 0.43) = 0.37 / 0.57 = 0.649122807
  alpha (nominal, 2 coders, n = 20 values: c12 m5 i2 f1): disagreeing pairs (c,m), (f,c) give
  sum o*d = 4; expected sum n_c n_k over c != k = 400 - (144 + 25 + 4 + 1) = 226
  alpha = 1 - (n - 1) * 4 / 226 = 1 - 76/226 = 0.663716814

image_role       A: n n n n r r i n n n     B: n n n r r r i n n i
  observed 8/10; marginals A n7 r2 i1, B n5 r3 i2; chance (35 + 6 + 2) / 100 = 0.43 -> kappa 0.649122807
  alpha: values n12 r5 i3; expected 400 - (144 + 25 + 9) = 222; alpha = 1 - 76/222 = 0.657657658
"""

from __future__ import annotations

POST = {"c": "correct", "m": "missing", "i": "incorrect", "f": "false_positive"}
ROLE = {"n": "necessary", "r": "relevant", "i": "irrelevant"}

POST_A = [POST[x] for x in "cccccmmifc"]
POST_B = [POST[x] for x in "ccccmmmicc"]
ROLE_A = [ROLE[x] for x in "nnnnrrinnn"]
ROLE_B = [ROLE[x] for x in "nnnrrrinni"]

KAPPA_POST = 0.37 / 0.57
ALPHA_POST = 1 - 76 / 226
KAPPA_ROLE = 0.37 / 0.57
ALPHA_ROLE = 1 - 76 / 222

DISPUTED_POSITIONS = [3, 4, 8, 9]
"""Records where A and B differ on at least one question (0-based), sent to adjudication."""


def validation_result(post: str, role: str, note: str = "") -> list[dict]:
    """An annotation result exactly as the validation config's controls produce it."""
    result = [
        {
            "from_name": "post_extraction",
            "to_name": "post_text",
            "type": "choices",
            "value": {"choices": [post]},
        },
        {"from_name": "image_role", "to_name": "image", "type": "choices", "value": {"choices": [role]}},
    ]
    if note:
        result.append(
            {"from_name": "note", "to_name": "claim", "type": "textarea", "value": {"text": [note]}}
        )
    return result


def explanation_result(scores: dict[int, tuple[int, int, int]]) -> list[dict]:
    """An explanation annotation: slot -> (reasoning, evidence, label) scores 0-2."""
    result = []
    for slot, values in scores.items():
        for criterion, value in zip(("reasoning", "evidence", "label"), values, strict=True):
            result.append(
                {
                    "from_name": f"{criterion}_{slot}",
                    "to_name": f"output_{slot}",
                    "type": "choices",
                    "value": {"choices": [str(value)]},
                }
            )
    return result


def export_task(task_id: int, record_id: str, annotations: list[tuple[int, int, list[dict]]]) -> dict:
    """A task in Label Studio's JSON export shape: (annotation id, user id, result) per annotation."""
    return {
        "id": task_id,
        "data": {"record_id": record_id},
        "annotations": [
            {"id": aid, "completed_by": uid, "result": result, "was_cancelled": False}
            for aid, uid, result in annotations
        ],
    }


def ten_tasks() -> list[dict]:
    """The ten records' validation answers of A (user 11) and B (user 12), as exported tasks."""
    return [
        export_task(
            i + 1,
            f"rw-{i:016x}",
            [
                (2 * i + 1, 11, validation_result(POST_A[i], ROLE_A[i])),
                (2 * i + 2, 12, validation_result(POST_B[i], ROLE_B[i])),
            ],
        )
        for i in range(10)
    ]


USERS = {11: "a@rwpost.test", 12: "b@rwpost.test", 13: "judge@rwpost.test"}
"""Label Studio user ids of the two annotators and the judge, with their emails."""
