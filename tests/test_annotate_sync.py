"""Human validation against a real Label Studio on 127.0.0.1, started once by ``rwpost annotate serve``.

Label Studio is installed on first use into ``state/label-studio/venv`` (shared by later runs); these
tests are skipped, with the reason, only when that install fails. Annotations are posted through the
API by two (and a third, adjudicating) annotator accounts, each with its own token, exactly as the
labeling UI would post them; the agreement they produce is checked against values computed by hand in
``annotate_data.py``. The headless Chromium test needs Debian's ``chromium`` and ``chromium-driver``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import httpx
import pytest
from annotate_data import (
    ALPHA_POST,
    ALPHA_ROLE,
    DISPUTED_POSITIONS,
    KAPPA_POST,
    KAPPA_ROLE,
    POST_A,
    POST_B,
    ROLE_A,
    ROLE_B,
    explanation_result,
    validation_result,
)

from rwpost.annotate import sync, workflow
from rwpost.annotate.agreement import validation_agreement
from rwpost.annotate.merge import merge_verdicts, resolve_verdicts
from rwpost.annotate.sources import read_annotation_samples
from rwpost.annotate.tasks import PROJECTS
from rwpost.cli import main as rwpost_main
from rwpost.records import ExplanationItem, ExplanationOutput, Sample
from tests.annotate_live import (
    ANNOTATORS,
    CONFIGS,
    GUIDELINES,
    RELEASED,
    ROOT,
    Live,
    annotator_clients,
    login_token,
)

pytestmark = pytest.mark.slow


def _push(live: Live) -> sync.PushResult:
    return workflow.push_validation(
        live.client,
        live.samples,
        configs_dir=CONFIGS,
        files_root=live.state / "files",
        guidelines_dir=GUIDELINES,
    )


def _tasks_by_record(live: Live, key: str) -> dict[str, int]:
    project = sync.find_project(live.client, PROJECTS[key].title)
    return sync.task_ids_by_record(live.client, project.id)


def test_serve_prints_url_and_login_but_never_the_token(live):
    assert f"Label Studio is running at http://127.0.0.1:{live.port}" in live.serve_output
    assert f"log in as: {live.creds.email}" in live.serve_output
    assert live.creds.generated and live.creds.password in live.serve_output
    assert live.creds.token not in live.serve_output
    assert stat.S_IMODE((live.state / "credentials.json").stat().st_mode) == 0o600
    assert httpx.get(f"{live.url}/health").json()["status"] == "UP"


def test_server_listens_on_loopback_only(live):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent; this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        address = ""
    finally:
        probe.close()
    if not address or address.startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address to probe")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        assert sock.connect_ex((address, live.port)) != 0, f"Label Studio answers on {address}"


def test_push_creates_project_and_tasks_once_with_images_served(live):
    first, again = _push(live), _push(live)
    assert (first.project_created, first.imported, first.already_there) == (True, 10, 0)
    assert (again.project_created, again.imported, again.already_there) == (False, 0, 10)
    titles = [p.title for p in live.client.projects.list()]
    assert titles.count(PROJECTS["validation"].title) == 1
    tasks = list(live.client.tasks.list(project=first.project_id))
    assert sorted(t.data["record_id"] for t in tasks) == sorted(s.id for s in live.samples)
    task = tasks[0]
    assert task.data["image"].startswith("/data/local-files/?d=images/")
    image = httpx.get(live.url + task.data["image"], headers={"Authorization": f"Token {live.creds.token}"})
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


def test_labeling_ui_shows_the_claim_and_the_choices(live, tmp_path):
    from tests.screenshot import capture_task

    sample = live.samples[0]
    project = sync.find_project(live.client, PROJECTS["validation"].title)
    task_id = _tasks_by_record(live, "validation")[sample.id]
    folder = ROOT / "annotation" / "screenshots" if os.environ.get("RWPOST_UPDATE_SCREENSHOTS") else tmp_path
    capture = capture_task(
        live.url,
        live.creds.email,
        live.creds.password,
        project.id,
        task_id,
        folder / "validation-task.png",
        wait_for="Image role",
    )
    assert sample.claim in capture.text
    for choice in (
        "Correct",
        "Missing",
        "Incorrect",
        "False positive",
        "Necessary",
        "Relevant",
        "Irrelevant",
    ):
        assert choice in capture.text
    assert capture.png.stat().st_size > 10_000


def test_two_annotators_agreement_adjudication_and_merge(live):
    annotators = annotator_clients(live)
    a, b, judge = (annotators[e] for e in ANNOTATORS)
    tasks = _tasks_by_record(live, "validation")
    for i, sample in enumerate(live.samples):  # A answers every task before B: A is Cohen's first rater
        a.annotations.create(tasks[sample.id], result=validation_result(POST_A[i], ROLE_A[i], note=f"A{i}"))
    for i, sample in enumerate(live.samples):
        b.annotations.create(tasks[sample.id], result=validation_result(POST_B[i], ROLE_B[i]))

    verdicts = workflow.pull_validation(live.client)
    assert len(verdicts) == 20
    assert {v.annotator for v in verdicts} == {ANNOTATORS[0], ANNOTATORS[1]}
    agreement = validation_agreement(verdicts)
    assert agreement["post_extraction"]["cohen_kappa"] == pytest.approx(KAPPA_POST, abs=1e-6)
    assert agreement["post_extraction"]["krippendorff_alpha"] == pytest.approx(ALPHA_POST, abs=1e-6)
    assert agreement["image_role"]["cohen_kappa"] == pytest.approx(KAPPA_ROLE, abs=1e-6)
    assert agreement["image_role"]["krippendorff_alpha"] == pytest.approx(ALPHA_ROLE, abs=1e-6)

    adjudication = dict(configs_dir=CONFIGS, files_root=live.state / "files", guidelines_dir=GUIDELINES)
    pushed = workflow.push_adjudication(live.client, verdicts, **adjudication)
    assert pushed.imported == len(DISPUTED_POSITIONS)
    assert workflow.push_adjudication(live.client, verdicts, **adjudication).imported == 0
    disputed = _tasks_by_record(live, "adjudication")
    assert sorted(disputed) == sorted(live.samples[i].id for i in DISPUTED_POSITIONS)
    for task_id in disputed.values():
        judge.annotations.create(task_id, result=validation_result("correct", "necessary"))

    verdicts = workflow.pull_validation(live.client)
    human = {v.id: v for v in resolve_verdicts(verdicts)}
    assert sum(v.status == "adjudicated" for v in human.values()) == 4
    assert sum(v.status == "agreed" for v in human.values()) == 6
    result = merge_verdicts(read_annotation_samples(RELEASED), list(human.values()))
    assert result.counts == {"adjudicated": 4, "agreed": 6, "dropped": 2, "kept": 8, "not_annotated": 36}
    merged = {s.id: s for s in result.samples}
    assert merged[live.samples[3].id].image_required == "yes"  # adjudicated necessary
    assert merged[live.samples[3].id].extra["human_validation"]["status"] == "adjudicated"


def _detector_output(sample: Sample, system: str, name: str) -> ExplanationOutput:
    """A generated stand-in for a detector's output (no detector ran in this test)."""
    return ExplanationOutput(
        system=system,
        label="Unproven",
        explanation=f"[generated test output of {name}] No source confirms: {sample.claim[:60]}\n"
        f"- generated key point by {name}",
        evidence_urls=["https://example.org/"],
    )


def _check_explanation_ui(live: Live, task_id: int, claim: str, tmp_path: Path) -> None:
    from tests.screenshot import capture_task

    project = sync.find_project(live.client, PROJECTS["explanation"].title)
    folder = ROOT / "annotation" / "screenshots" if os.environ.get("RWPOST_UPDATE_SCREENSHOTS") else tmp_path
    capture = capture_task(
        live.url,
        live.creds.email,
        live.creds.password,
        project.id,
        task_id,
        folder / "explanation-task.png",
        wait_for="Label justification",
    )
    assert claim in capture.text
    for text in ("Output 1", "Output 2", "Output 3", "0 none", "1 mild", "2 severe", "1 partial", "2 full"):
        assert text in capture.text
    assert "2 hallucinated" in capture.text
    assert "agentfact" not in capture.text.lower() and "lemma" not in capture.text.lower()


def test_explanation_scores_are_unblinded_and_reported(live, tmp_path):
    annotators = annotator_clients(live)
    items = [
        ExplanationItem(
            id=s.id,
            claim=s.claim,
            post_text=s.post_text,
            outputs=[
                ExplanationOutput.gold(s),
                _detector_output(s, "agentfact", "A"),
                _detector_output(s, "lemma", "B"),
            ],
        )
        for s in live.samples[:4]
    ]
    items_path, keys_path = tmp_path / "items.jsonl", live.state / "explanation_keys.json"
    items_path.write_text("".join(item.model_dump_json() + "\n" for item in items))
    args = ["annotate", "push-explanations", str(items_path), "--keys", str(keys_path), "--seed", "13"]
    args += ["--state", str(live.state), "--port", str(live.port), "--configs", str(CONFIGS)]
    assert rwpost_main(args) == 0
    keys = {
        rid: {int(k): v for k, v in key.items()} for rid, key in json.loads(keys_path.read_text()).items()
    }
    tasks = _tasks_by_record(live, "explanation")
    _check_explanation_ui(live, tasks[items[0].id], items[0].claim, tmp_path)
    # What each annotator means to give each source; the annotator only sees slots 1-3.
    intended = {"gold": (0, 0, 0), "agentfact": (1, 0, 1), "lemma": (2, 1, 2)}
    for email in ANNOTATORS[:2]:
        for rid, task_id in tasks.items():
            scores = {slot: intended[source] for slot, source in keys[rid].items()}
            annotators[email].annotations.create(task_id, result=explanation_result(scores))
    scores = workflow.pull_explanations(live.client, keys)
    assert len(scores) == 4 * 3 * 2
    for score in scores:
        assert (
            score.reasoning_hallucination,
            score.evidence_hallucination,
            score.label_justification,
        ) == intended[score.source]
    orders = {tuple(keys[rid][slot] for slot in (1, 2, 3)) for rid in keys}
    assert len(orders) > 1, "the three outputs should not appear in the same order on every task"


def test_cli_pull_agreement_and_merge_write_their_files(live, tmp_path):
    common = ["--state", str(live.state), "--port", str(live.port)]
    export = tmp_path / "export"
    keys = live.state / "explanation_keys.json"
    assert rwpost_main(["annotate", "pull", "--out", str(export), "--keys", str(keys), *common]) == 0
    verdicts = [json.loads(line) for line in (export / "validation_verdicts.jsonl").read_text().splitlines()]
    assert len(verdicts) == 24  # 10 tasks x 2 annotators + 4 adjudications
    report_dir = tmp_path / "report"
    args = ["annotate", "agreement", "--verdicts", str(export / "validation_verdicts.jsonl")]
    args += ["--scores", str(export / "explanation_scores.jsonl"), "--compare", "agentfact,lemma"]
    args += ["--out", str(report_dir), "--resamples", "500"]
    assert rwpost_main(args) == 0
    report = json.loads((report_dir / "agreement.json").read_text())
    assert report["validation"]["agreement"]["image_role"]["cohen_kappa"] == pytest.approx(
        KAPPA_ROLE, abs=1e-6
    )
    assert report["explanations"]["criteria"]["reasoning_hallucination"]["normalised"]["gold"] == 1.0
    assert "| Reasoning |" in (report_dir / "agreement.md").read_text()
    merged_dir = tmp_path / "merged"
    args = ["annotate", "merge", str(RELEASED), "--verdicts", str(export / "validation_verdicts.jsonl")]
    assert rwpost_main([*args, "--out", str(merged_dir)]) == 0
    assert len((merged_dir / "samples.jsonl").read_text().splitlines()) == 46
    assert len((merged_dir / "decisions.jsonl").read_text().splitlines()) == 10
    # push through the CLI: only the two new records are imported, a new annotator is signed up.
    args = ["annotate", "push", str(RELEASED), "--limit", "12", "--annotators", "ann-c@rwpost.test", *common]
    assert rwpost_main([*args, "--configs", str(CONFIGS), "--guidelines", str(GUIDELINES)]) == 0
    assert len(_tasks_by_record(live, "validation")) == 12
    saved = json.loads((live.state / "annotators.json").read_text())
    assert list(saved) == ["ann-c@rwpost.test"]
    assert stat.S_IMODE((live.state / "annotators.json").stat().st_mode) == 0o600
    assert login_token(live.url, "ann-c@rwpost.test", saved["ann-c@rwpost.test"])
