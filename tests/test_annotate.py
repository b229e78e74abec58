"""Annotation tools without a server: configs, tasks, verdict conversion, agreement, statistics, merge."""

from __future__ import annotations

import itertools
import json
import math
import stat
from pathlib import Path
from typing import get_args
from xml.etree import ElementTree

import numpy as np
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

from rwpost.annotate.agreement import cohen_kappa, krippendorff_alpha, validation_agreement
from rwpost.annotate.explanations import bootstrap_ci, explanation_report, normalise, wilcoxon_p
from rwpost.annotate.merge import merge_verdicts, resolve_verdicts
from rwpost.annotate.server import LOOPBACK, StatePaths, resolve_credentials, server_env
from rwpost.annotate.sources import read_annotation_samples, read_articles
from rwpost.annotate.tasks import PROJECTS, article_html, blind_order, explanation_task, load_config
from rwpost.annotate.verdicts import explanation_scores, validation_verdicts
from rwpost.errors import RecordError
from rwpost.records import ExplanationItem, ExplanationOutput, ImageRole, PostCheck, Reject, TaggedArticle

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "annotation" / "configs"
RELEASED = ROOT / "data" / "sample" / "released" / "rwpost_dev_main.head.jsonl"


def _choices(xml: str, name: str) -> list[str]:
    tree = ElementTree.fromstring(xml)
    control = next(el for el in tree.iter("Choices") if el.get("name") == name)
    return [choice.get("alias") or choice.get("value") for choice in control.iter("Choice")]


def _export_task(task_id: int, record_id: str, annotations: list[tuple[int, int, list[dict]]]) -> dict:
    """A task in Label Studio's JSON export shape: (annotation id, user id, result) per annotation."""
    return {
        "id": task_id,
        "data": {"record_id": record_id},
        "annotations": [
            {"id": aid, "completed_by": uid, "result": result, "was_cancelled": False}
            for aid, uid, result in annotations
        ],
    }


def _ten_tasks() -> list[dict]:
    return [
        _export_task(
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


# --- configs ---------------------------------------------------------------------------------------


def test_validation_config_choices_are_exactly_the_record_values():
    for key in ("validation", "adjudication"):
        xml = load_config(CONFIGS, PROJECTS[key])
        assert _choices(xml, "post_extraction") == list(get_args(PostCheck))
        assert _choices(xml, "image_role") == list(get_args(ImageRole))


def test_explanation_config_scores_every_output_on_three_criteria_zero_to_two():
    xml = load_config(CONFIGS, PROJECTS["explanation"])
    for slot in (1, 2, 3):
        for criterion in ("reasoning", "evidence", "label"):
            assert _choices(xml, f"{criterion}_{slot}") == ["0", "1", "2"]


# --- credentials and server environment ------------------------------------------------------------


def test_generated_credentials_are_saved_owner_only_and_reused(tmp_path):
    path = tmp_path / "credentials.json"
    first = resolve_credentials(path)
    assert first.generated and len(first.password) >= 12 and len(first.token) == 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = resolve_credentials(path)
    assert (again.password, again.token) == (first.password, first.token)
    assert first.token not in repr(first) and first.password not in repr(first)


def test_given_credentials_win_and_are_not_marked_generated(tmp_path):
    creds = resolve_credentials(
        tmp_path / "c.json", email="me@x.org", password="pw-given-123", token="t" * 40
    )
    assert (creds.email, creds.password, creds.token, creds.generated) == (
        "me@x.org",
        "pw-given-123",
        "t" * 40,
        False,
    )


def test_server_environment_serves_local_files_and_turns_telemetry_off(tmp_path):
    paths = StatePaths(tmp_path)
    env = server_env(paths, resolve_credentials(paths.credentials), base_env={})
    assert env["LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED"] == "true"
    assert env["LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT"] == str(paths.files.resolve())
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert env["LABEL_STUDIO_COLLECT_ANALYTICS"] == "false"
    assert env["LABEL_STUDIO_LATEST_VERSION_CHECK"] == "false"
    assert env["LABEL_STUDIO_SENTRY_DSN"] == "" and env["LABEL_STUDIO_FRONTEND_SENTRY_DSN"] == ""
    assert LOOPBACK == "127.0.0.1"


# --- tasks -----------------------------------------------------------------------------------------


def test_released_records_become_samples_with_stable_ids():
    rejects: list[Reject] = []
    samples = list(read_annotation_samples(RELEASED, rejects))
    assert len(samples) == 46 and not rejects
    assert samples[0].id.startswith("rw-") and samples[0].provenance.backend == "released"
    assert samples[0].claim.startswith("Flooding caused by Hurricane Harvey")


def test_annotation_samples_mix_sample_and_released_lines_and_set_bad_ones_aside(tmp_path):
    released = RELEASED.read_text(encoding="utf-8").splitlines()[1]  # another record than ``sample``
    sample, other = list(itertools.islice(read_annotation_samples(RELEASED), 2))
    broken = sample.model_dump(mode="json")
    del broken["claim"]
    path = tmp_path / "mixed.jsonl"
    lines = [sample.model_dump_json(), json.dumps(broken), released, json.dumps({"claim": "no url"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejects: list[Reject] = []
    got = list(read_annotation_samples(path, rejects))
    assert [s.id for s in got] == [sample.id, other.id]
    assert [(r.line, r.stage) for r in rejects] == [(2, "annotate"), (4, "annotate")]
    assert "not a Sample" in rejects[0].reason and "'claim'" in rejects[0].reason
    with pytest.raises(RecordError, match=r"mixed\.jsonl:2, field 'claim': not a Sample"):
        list(read_annotation_samples(path))


def test_articles_are_read_by_id_and_a_bad_one_names_its_line(tmp_path):
    path = tmp_path / "articles.jsonl"
    good = {"id": "rw-1", "news_url": "https://www.snopes.com/fact-check/x/", "text": "t", "word_count": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "rw-2"}) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"articles\.jsonl:2, record rw-2, field .*not a TaggedArticle"):
        read_articles(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert list(read_articles(path)) == ["rw-1"]


def test_article_html_links_every_tag_by_its_link_table_id_and_escapes_text():
    article = TaggedArticle(
        id="rw-1",
        news_url="https://www.snopes.com/fact-check/x/",
        text="A <b>post</b> [IMAGE 1] and a page [LINK 2: https://wrong.example/].",
        links=[
            {"id": 1, "kind": "image", "url": "https://img.example/a.jpg"},
            {"id": 2, "kind": "webpage", "url": "https://page.example/"},
        ],
        word_count=7,
    )
    out = article_html(article)
    assert '<a href="https://img.example/a.jpg" target="_blank"' in out
    assert '<a href="https://page.example/"' in out and "wrong.example" not in out
    assert "&lt;b&gt;post&lt;/b&gt;" in out


def test_real_snopes_article_shows_every_link_of_its_table_as_a_clickable_link():
    import html as html_lib
    import re

    from rwpost.tagged import tag_article

    page = (ROOT / "tests" / "fixtures" / "snopes_html" / "robert-de-niro-trump-oscars.html").read_text()
    article = tag_article(page, "https://www.snopes.com/fact-check/robert-de-niro-trump-oscars/")
    out = article_html(article)
    hrefs = {html_lib.unescape(h) for h in re.findall(r'<a href="([^"]+)" target="_blank"', out)}
    assert article.links and {link.url for link in article.links} <= hrefs
    assert "[IMAGE 1: https://" in html_lib.unescape(out)


def test_blind_order_is_a_reproducible_permutation_that_varies_across_records():
    sources = ["agentfact", "gold", "lemma"]
    orders = {rid: tuple(blind_order(rid, sources, seed=13)) for rid in (f"rw-{i}" for i in range(30))}
    assert all(sorted(o) == sources for o in orders.values())
    assert blind_order("rw-5", sources, 13) == list(orders["rw-5"])
    assert len(set(orders.values())) > 1


def test_explanation_task_hides_sources_and_needs_three_outputs():
    sample = next(read_annotation_samples(RELEASED))
    gold = ExplanationOutput.gold(sample)
    item = ExplanationItem(
        id=sample.id,
        claim=sample.claim,
        outputs=[gold, *(gold.model_copy(update={"system": name}) for name in ("agentfact", "lemma"))],
    )
    task, key = explanation_task(item, image_url="/data/local-files/?d=images/x.png", seed=1)
    assert sorted(key.values()) == ["agentfact", "gold", "lemma"]
    text = json.dumps(task)
    assert "agentfact" not in text and "lemma" not in text and '"gold"' not in text
    item.outputs.pop()  # lemma's
    with pytest.raises(RecordError, match="expected 3 outputs"):
        explanation_task(item, image_url="x", seed=1)


# --- verdicts and agreement ------------------------------------------------------------------------


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


def test_agreement_matches_hand_computed_kappa_and_alpha():
    report = validation_agreement(validation_verdicts(_ten_tasks(), USERS, project="validation"))
    assert report["post_extraction"]["paired_units"] == 10
    assert report["post_extraction"]["percent_agreement"] == pytest.approx(80.0)
    assert report["post_extraction"]["cohen_kappa"] == pytest.approx(KAPPA_POST, abs=1e-6)
    assert report["post_extraction"]["krippendorff_alpha"] == pytest.approx(ALPHA_POST, abs=1e-6)
    assert report["image_role"]["cohen_kappa"] == pytest.approx(KAPPA_ROLE, abs=1e-6)
    assert report["image_role"]["krippendorff_alpha"] == pytest.approx(ALPHA_ROLE, abs=1e-6)


def test_krippendorff_alpha_reproduces_the_published_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units, missing
    # values; published alphas: nominal 0.743, ordinal 0.815, interval 0.849.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    units = list(zip(a, b, c, d, strict=True))
    assert krippendorff_alpha(units, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(units, "interval") == pytest.approx(0.849, abs=5e-4)


def test_agreement_is_undefined_not_perfect_when_nobody_varies():
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))
    assert math.isnan(krippendorff_alpha([["a", "a"], ["a", "a"]]))


# --- explanation statistics ------------------------------------------------------------------------


def _scores(a_scores: list[int], b_scores: list[int], gold: list[int]):
    tasks = []
    keys = {}
    for i, (sa, sb, sg) in enumerate(zip(a_scores, b_scores, gold, strict=True)):
        rid = f"rw-{i:016x}"
        keys[rid] = {1: "agentfact", 2: "lemma", 3: "gold"}
        anns = [
            (10 * i + k, uid, explanation_result({1: (sa,) * 3, 2: (sb,) * 3, 3: (sg,) * 3}))
            for k, uid in enumerate((11, 12))
        ]
        tasks.append(_export_task(i + 1, rid, anns))
    return explanation_scores(tasks, USERS, keys)


def test_normalised_scores_and_paired_statistics_follow_paper_table_iv():
    # Six instances; AgentFact scores 0 where LEMMA scores 1 or 2: every paired difference is negative,
    # so the exact two-sided Wilcoxon p-value is 2 / 2**6 = 0.03125.
    scores = _scores([0, 0, 0, 0, 0, 1], [1, 2, 1, 2, 1, 2], [0, 0, 0, 0, 0, 0])
    report = explanation_report(scores, compare=("agentfact", "lemma"), resamples=2000)
    row = report["criteria"]["reasoning_hallucination"]
    assert row["normalised"]["gold"] == pytest.approx(1.0)
    assert row["normalised"]["agentfact"] == pytest.approx(
        np.mean([normalise(x) for x in [0, 0, 0, 0, 0, 1]])
    )
    assert row["normalised"]["lemma"] == pytest.approx(1 - 9 / 12)
    comparison = row["comparison"]
    assert comparison["instances"] == 6
    assert comparison["mean_delta"] == pytest.approx((1 - 9) / 6)
    assert comparison["wilcoxon_p"] == pytest.approx(0.03125)
    low, high = comparison["ci95"]
    assert low <= comparison["mean_delta"] <= high < 0
    assert report["agreement"]["reasoning_hallucination"]["krippendorff_alpha"] == pytest.approx(1.0)


def test_bootstrap_of_identical_differences_is_a_point_and_wilcoxon_of_zeros_is_one():
    assert bootstrap_ci(np.full(5, -1.0), resamples=100) == (-1.0, -1.0)
    assert bootstrap_ci(np.array([0.5])) == (0.5, 0.5), "one difference: every resample is that difference"
    assert wilcoxon_p(np.zeros(4)) == 1.0


# --- merge -----------------------------------------------------------------------------------------


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


# --- the evaluation's explanations, pushed for human evaluation ----------------------------------------


def test_the_explanations_an_evaluation_writes_are_what_push_explanations_reads(
    tmp_path, capsys, monkeypatch
):
    """``rwpost evaluate`` + ``rwpost leaderboard`` write explanations.jsonl; ``rwpost annotate
    push-explanations`` reads that very file (before: four validation errors on every line)."""
    from rwpost.annotate import workflow
    from rwpost.cli import main

    common = ["--data", str(RELEASED), "--train-fraction", "0.5", "--bootstrap", "0", "--no-progress"]
    for detector in ("majority", "stratified"):
        out = tmp_path / "runs" / detector
        assert main(["evaluate", *common, "--no-key-points", "--detector", detector, "--out", str(out)]) == 0
    assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(tmp_path / "board")]) == 0
    explanations = tmp_path / "board" / "explanations.jsonl"

    # the command reads and validates every line before it needs the server: here it stops at the token
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    capsys.readouterr()
    args = ["annotate", "push-explanations", str(explanations), "--state", str(tmp_path / "state")]
    assert main(args) == 2
    assert "no Label Studio token" in capsys.readouterr().err

    items = workflow.read_explanation_items(explanations)
    assert len(items) == 23
    systems = [o.system for o in items[0].outputs]
    assert systems[0] == "gold" and len(systems) == 3
    tasks, keys = workflow.explanation_tasks(items, files_root=tmp_path / "files", seed=13)
    assert len(tasks) == 23 and all(sorted(key.values()) == sorted(systems) for key in keys.values())
    shown = json.dumps(tasks)
    assert not any(name in shown for name in systems[1:]), "the task names a system: not blind"
    majority = next(o for o in items[0].outputs if o.system.startswith("majority"))
    assert majority.label == "False"
    assert f"<b>Authenticity:</b> {majority.label}</p>" in shown
