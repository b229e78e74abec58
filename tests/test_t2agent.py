"""T2Agent end to end: the runner, the loopback LLM server (a scripted backbone), the loopback search
server (Google through Serper's format, Wikipedia through MediaWiki's); and Algorithm 1 by hand."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rwpost.evaluate import RunSpec, evaluate
from rwpost.evaluate.detectors.t2agent import T2AgentDetector
from rwpost.evaluate.detectors.t2agent.labels import decide
from rwpost.evaluate.runner import read_predictions, run
from rwpost.evaluate.search import make_backend
from rwpost.evaluate.task import EvalTask
from rwpost.evaluate.toolkit.tools import run_context
from rwpost.labels import Label
from rwpost.llm import Price
from rwpost.testing.llm import FakeLLMServer, message_text
from rwpost.testing.search import SearchServer, result, wiki_page
from tests.evaluate_helpers import MMFAKEBENCH as MMFB
from tests.evaluate_helpers import make_sample, mmfakebench_folder, news, schema_of
from tests.t2agent_helpers import TASKS, Backbone, with_image

SECRET = "sk-t2agent-secret-never-written"


def config(llm, search, tmp_path: Path, **extra) -> dict:
    return {
        "model": "test-model",
        "base_url": llm.base_url,
        "cache_path": str(tmp_path / "llm.sqlite"),
        "search": "loopback",
        "search_options": {"base_url": search.base_url},
        "wikipedia": "loopback-wikipedia",
        "wikipedia_options": {"base_url": search.base_url},
        "concurrency": 2,
        "timeout_s": 10.0,
        **extra,
    }


def spec(llm, search, tmp_path, setting="T+I+W", detector="t2agent", **extra) -> RunSpec:
    return RunSpec(
        detector,
        config=config(llm, search, tmp_path, **extra),
        secrets={"api_key": SECRET},
        setting=setting,
        n_resamples=10,
        batch_size=1,
        prices={"test-model": Price(input_per_mtok=1.0, output_per_mtok=2.0)},
    )


def steps_of(llm) -> list[str]:
    """Which step of T2Agent each request to the model was (the ledger's agent names)."""
    out = []
    for body in llm.requests:
        schema, system = schema_of(body), message_text(body, "system")
        if schema == "t2agent_step":
            out.append(f"expand:{TASKS[system.split(':')[0]]}")
        elif schema == "t2agent_score":
            out.append("score:trajectory" if system.startswith("Task: Analyze") else "score:confidence")
        else:
            out.append(schema.removeprefix("t2agent_"))
    return out


def test_a_confident_refutation_ends_the_search_early(tmp_path):
    # the cross-modal node weighs most; its first expansion finds MISMATCH with confidence 9 >= 8: stop
    script = Backbone(
        weights=(0.2, 0.1, 0.7),
        steps={("match", ""): [("Finish", "MISMATCH"), ("VQA", "What is shown?")]},
        st={"Finish[MISMATCH]": 8, "VQA[What is shown?]": 5},
        sc={"MISMATCH": 9},
    )
    with FakeLLMServer(script) as llm, SearchServer(news) as search:
        metrics = evaluate([with_image(0, Label.FALSE)], spec(llm, search, tmp_path), tmp_path / "run").dump()
        assert steps_of(llm) == [
            "init", "expand:match", "score:trajectory", "score:confidence", "observation", "score:trajectory",
        ]  # fmt: skip
        assert search.queries == [] and search.wiki_queries == []
    assert metrics["accuracy"] == 1.0
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert row["label"] == "False"
    assert row["explanation"].splitlines()[:2] == [
        "T2Agent answer: mismatch (RW-Post view, adapted: False)",
        "Search: early-stop after 1 simulations; p(fake match) 0.90.",
    ]
    agents = [c["agent"] for c in row["calls"]]
    assert agents == [
        "init", "expand:match", "score:trajectory", "score:confidence", "tool:VQA", "score:trajectory",
    ]  # fmt: skip
    assert all(c["name"] == "test-model" and c["tokens_in"] > 0 for c in row["calls"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    config_ = manifest["detector_config"]
    assert (config_["simulations"], config_["depth"], config_["children"]) == (12, 4, 2)
    assert (config_["exploration"], config_["alpha"], config_["confidence"], config_["early_stop"]) == (
        2.0, 0.5, 0.8, True,
    )  # fmt: skip
    assert config_["absent_tools"]["Detect"].startswith("no forgery_model folder given")
    assert config_["labels"].startswith("RW-Post 3-class (adapted")
    assert "t2agent_match.v1" in manifest["prompt_hashes"] and len(manifest["prompt_hashes"]) == 9
    # issue 39: per sample (init, the cross-modal expansion and VQA carried it; it was counted 3 times
    # and reported as "3 sent of 1 expected")
    assert manifest["images"]["sent"] == 1 and manifest["images"]["expected"] == 1
    ledger = metrics["ledger"]
    assert ledger["by_agent"]["tool:VQA"]["calls"] == 1 and ledger["cost_usd"] > 0
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            assert SECRET not in path.read_text()


def test_a_search_without_a_verdict_exhausts_k_and_is_unproven(tmp_path):
    # every path searches Wikipedia, then Google, then gives up: K=3 simulations, no verified sub-task
    script = Backbone(
        steps={
            ("text", ""): [("Wikipedia", "Generated claim")],
            ("text", "Wikipedia[Generated claim]"): [("Google", "generated claim 1")],
            ("text", "Google[generated claim 1]"): [("Finish", "NOT ENOUGH EVIDENCE")],
        },
    )
    wiki = {"Generated claim": [wiki_page("Generated claim", "A generated claim is a placeholder.\nMore.")]}
    text = {"generated claim 1": news("generated claim 1", 2)}
    with FakeLLMServer(script) as llm, SearchServer(text, wiki=wiki) as search:
        evaluate(
            [make_sample(1, Label.UNPROVEN)],
            spec(llm, search, tmp_path, "T+W", simulations=3),
            tmp_path / "r",
        )
        # each tool ran once: the second and third simulations walk the tree already built
        assert search.wiki_queries == ["Generated claim"] and search.queries == ["generated claim 1"]
        assert steps_of(llm).count("expand:text") == 3
    row = json.loads((tmp_path / "r" / "predictions.jsonl").read_text())
    assert row["label"] == "Unproven"
    assert row["explanation"].splitlines()[:3] == [
        "T2Agent answer: no sub-task verified (RW-Post view, adapted: Unproven)",
        "Search: exhausted after 3 simulations.",
        "- text: no verdict (3 visits)",
    ]
    names = [c["name"] for c in row["calls"] if c["kind"] == "tool"]
    assert names == ["search:loopback-wikipedia", "search:loopback"]


def test_a_failing_tool_fails_its_sample_and_the_run_goes_on(tmp_path):
    script = Backbone(steps={("text", ""): [("Google", "q1")]}, st={"Google[q1]": 9}, sc={"TEXT SUPPORT": 9})
    samples = [make_sample(2, Label.FALSE), make_sample(3, Label.TRUE)]
    with FakeLLMServer(script) as llm, SearchServer({"q1": news("q1", 1)}) as search:
        search.failures = 2  # the first sample's Google call and its one retry
        metrics = evaluate(samples, spec(llm, search, tmp_path, "T+W"), tmp_path / "run").dump()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").open())}
    failed, answered = rows[samples[0].id], rows[samples[1].id]
    assert failed["label"] is None
    assert re.fullmatch(r"tool Google \(loopback\) failed: .*HTTP 503 after 2 attempt\(s\)", failed["error"])
    assert [c["agent"] for c in failed["calls"]] == ["expand:text", "tool:Google"]
    # the second sample searched (the failure was not cached), then finished TEXT SUPPORT
    assert answered["label"] == "True" and answered["error"] is None
    assert metrics["coverage"]["no_label"] == 1


def test_fact_check_results_never_reach_the_model_and_are_audited(tmp_path):
    def fact_checks(query):
        return [
            result(
                "https://www.snopes.com/fact-check/generated-4/", "Fact check", "Rating: False", "Dec 1, 2019"
            ),
            result("https://www.politifact.com/factchecks/x", "PolitiFact", "Pants on fire"),
        ]

    script = Backbone(steps={("text", ""): [("Google", "generated claim 4")]})
    with FakeLLMServer(script) as llm, SearchServer(fact_checks) as search:
        metrics = evaluate(
            [make_sample(4, Label.FALSE)], spec(llm, search, tmp_path, "T+W"), tmp_path / "run"
        ).dump()
        assert search.queries == ["generated claim 4"]
        assert not any(
            word in json.dumps(b["messages"]).lower()
            for b in llm.requests
            for word in ("snopes", "politifact")
        )
        observed = [message_text(b, "user") for b in llm.requests if schema_of(b) == "t2agent_step"][-1]
        assert "Observation 1: No results." in observed
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    dropped = sorted(c["name"] for c in row["calls"] if c["name"].startswith("leakage-guard"))
    assert dropped == [
        "leakage-guard:dropped:blocked:politifact.com",
        "leakage-guard:dropped:blocked:snopes.com",
    ]
    assert row["evidence_urls"] == [] and metrics["audit"]["flagged"] == 0
    leakage = json.loads((tmp_path / "run" / "manifest.json").read_text())["leakage"]
    assert leakage["by_reason"] == {"blocked:politifact.com": 1, "blocked:snopes.com": 1}
    assert "leakage guard: 2 retrieved results dropped" in (tmp_path / "run" / "report.md").read_text()


class KillingT2Agent(T2AgentDetector):
    """T2Agent that kills its own process (SIGKILL) once it has answered batch 2, before the runner can
    write that answer, while ``arm_file`` exists (removed first)."""

    class Config(T2AgentDetector.Config):
        arm_file: str

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.arm_file, self.batches = config.arm_file, 0

    def predict(self, samples, task, ctx):
        out = super().predict(samples, task, ctx)
        self.batches += 1
        if self.batches == 2 and Path(self.arm_file).exists():
            Path(self.arm_file).unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        return out


def kill_script() -> Backbone:
    return Backbone(
        steps={
            ("text", ""): [("Wikipedia", "Generated claim"), ("Google", "generated claim")],
            ("match", ""): [("VQA", "What is shown?")],
            ("match", "VQA[What is shown?]"): [("Finish", "MISMATCH")],
        },
        sc={"MISMATCH": 9},
    )


def test_a_killed_run_resumes_without_one_model_or_tool_call(tmp_path):
    samples = [with_image(5, Label.FALSE), with_image(6, Label.FALSE)]
    arm = tmp_path / "arm"
    arm.write_text("kill")
    wiki = {"Generated claim": [wiki_page("Generated claim", "A placeholder.")]}
    with FakeLLMServer(kill_script()) as llm, SearchServer(news, wiki=wiki) as search:
        run_spec = spec(
            llm, search, tmp_path, detector="tests.test_t2agent:KillingT2Agent", arm_file=str(arm)
        )
        script = f"""
import json, sys
from rwpost.evaluate import RunSpec, evaluate
from rwpost.labels import Label
from tests.t2agent_helpers import with_image
spec = RunSpec(**json.loads(sys.argv[1]))
evaluate([with_image(5, Label.FALSE), with_image(6, Label.FALSE)], spec, {str(tmp_path / "run")!r})
"""
        fields = {k: getattr(run_spec, k) for k in ("detector", "config", "secrets", "batch_size")}
        fields["setting"] = str(run_spec.setting)
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        done = subprocess.run([sys.executable, "-c", script, json.dumps(fields)], env=env, timeout=120)
        assert done.returncode == -signal.SIGKILL and not arm.exists()
        assert len(read_predictions(tmp_path / "run" / "predictions.jsonl")) == 1
        asked, searched = llm.chat_requests, (list(search.queries), list(search.wiki_queries))
        assert asked > 0 and searched[0] and searched[1]

        metrics = evaluate(samples, run_spec, tmp_path / "run").dump()
        assert llm.chat_requests == asked  # zero model calls: the LLM cache answers
        assert (search.queries, search.wiki_queries) == searched  # zero searches: the tool cache answers
    assert metrics["n_samples"] == 2 and metrics["accuracy"] == 1.0
    rows = read_predictions(tmp_path / "run" / "predictions.jsonl")
    resumed = rows[(0, samples[1].id)]["calls"]
    assert all(c["cached"] for c in resumed if not c["name"].startswith("leakage-guard"))


def test_visits_and_values_follow_algorithm_1_by_hand(tmp_path):
    """K=4, d=2, n=2, C=2, alpha=0.5, no pruning or early stop, one sub-task (a text cell):

    text -> A Wikipedia[Paul Ryan] (S^T .6), B Google[Romney Ryan] (.4)
    A -> A1 Finish[TEXT SUPPORT] (S^T .8, S^C .9: V .85), A2 Google[Ryan Norfolk] (.3)
    B -> B1 Finish[TEXT REFUTE] (S^T .5, S^C .4: V .45), B2 Wikipedia[USS Wisconsin] (.2)

    1. text; N(text)=0, so UCT = V: A (.6 > .4); N(A)=0: A1 (.85 > .3), an answer: back up .85.
    2. UCT(A) = .85/2 + 2 sqrt(ln 2 / 2) = 1.602 < UCT(B) = .4 + 2 sqrt(ln 2) = 2.065: B, then B1 (.45 > .2):
       back up .45.
    3. N(text)=2: UCT(A) = .85/2 + 2 sqrt(ln 3 / 2) = 1.907 > UCT(B) = .45/2 + ... = 1.707: A;
       N(A)=1: UCT(A1) = .85/2 + 2 sqrt(ln 2 / 2) = 1.602 < UCT(A2) = .3 + 2 sqrt(ln 2) = 1.965: A2 at
       depth d, no answer: back up S^T .3.
    4. N(text)=3: UCT(A) = .575/3 + 2 sqrt(ln 4 / 3) = 1.551 < UCT(B) = .45/2 + 2 sqrt(ln 4 / 2) = 1.890:
       B; N(B)=1: UCT(B1) = 1.402 < UCT(B2) = 1.865: B2, back up .2.
    """
    script = Backbone(
        steps={
            ("text", ""): [("Wikipedia", "Paul Ryan"), ("Google", "Romney Ryan")],
            ("text", "Wikipedia[Paul Ryan]"): [("Finish", "TEXT SUPPORT"), ("Google", "Ryan Norfolk")],
            ("text", "Google[Romney Ryan]"): [("Finish", "TEXT REFUTE"), ("Wikipedia", "USS Wisconsin")],
        },
        st={
            "Wikipedia[Paul Ryan]": 6, "Google[Romney Ryan]": 4, "Finish[TEXT SUPPORT]": 8,
            "Google[Ryan Norfolk]": 3, "Finish[TEXT REFUTE]": 5, "Wikipedia[USS Wisconsin]": 2,
        },
        sc={"TEXT SUPPORT": 9, "TEXT REFUTE": 4},
    )  # fmt: skip
    sample = make_sample(7, Label.TRUE)
    with FakeLLMServer(script) as llm, SearchServer(news) as search:
        options = config(llm, search, tmp_path, simulations=4, depth=2, prune=False, early_stop=False)
        detector = T2AgentDetector.build(options)
        task = EvalTask.of("T+W", [sample])
        ctx = run_context(detector.options, secrets={"api_key": "k"})  # the run's tools, as the runner's
        [prediction] = detector.predict([task.blind(sample)], task, ctx)
    outcome = detector.results[sample.id].outcome
    text = outcome.subtask("text")
    a, b = text.children
    (a1, a2), (b1, b2) = a.children, b.children
    assert [s.path for s in outcome.simulations] == [
        ["Wikipedia", "Finish"], ["Google", "Finish"], ["Wikipedia", "Google"], ["Google", "Wikipedia"],
    ]  # fmt: skip
    visits = [n.visits for n in (outcome.root, text, a, b, a1, a2, b1, b2)]
    assert visits == [4, 4, 2, 2, 1, 1, 1, 1]
    values = [n.value for n in (outcome.root, text, a, b, a1, a2, b1, b2)]
    by_hand = [
        (0.85 + 0.45 + 0.3 + 0.2) / 4,  # the root and the sub-task node: the mean of the four leaf values
        (0.85 + 0.45 + 0.3 + 0.2) / 4,
        (0.85 + 0.3) / 2,  # A: its first visit replaces its own score .6 by the leaf's .85
        (0.45 + 0.2) / 2,
        0.85, 0.3, 0.45, 0.2,
    ]  # fmt: skip
    assert values == pytest.approx(by_hand)
    assert outcome.stopped == "exhausted"
    # the decision: the most confident answer is A1's support, S^C .9: p(fake text) .1, p(real) .9
    assert prediction.label == Label.TRUE
    assert prediction.explanation.splitlines()[1] == (
        "Search: exhausted after 4 simulations; p(real) 0.90, p(fake text) 0.10."
    )
    assert steps_of(llm).count("expand:text") == 3  # A2 and B2 lie at depth d: never expanded


def test_the_decision_follows_equations_4_to_6():
    # eq. 4: p(fake text) = 1 - .8 = .2, p(fake match) = .7; eq. 5: p(real) = sqrt(.8 * .3) = .49
    decision = decide({"text": ("support", 0.8), "match": ("refute", 0.7)}, view="native")
    assert decision.p_real == pytest.approx(math.sqrt(0.8 * 0.3))
    assert (decision.native, decision.label) == ("mismatch", Label.FALSE)
    # the RW-Post view: a winner at .5 or below is Unproven; no verified sub-task is Unproven
    weak = decide({"text": ("support", 0.5)}, view="rw-post")
    assert (weak.native, weak.label) == ("original", Label.UNPROVEN)
    assert decide({}, view="rw-post").label == Label.UNPROVEN and decide({}, view="native").label is None
    early = decide({}, view="rw-post", early=("image", 0.9))
    assert (early.native, early.label, early.early_stop) == ("visual_veracity_distortion", Label.FALSE, True)


def test_wikipedia_plugin_reads_the_mediawiki_answer_and_fails_on_an_outage():
    wiki = {"Paul Ryan": [wiki_page("Paul Ryan", "Paul Davis Ryan is an American politician.\nMore.")]}
    with SearchServer(wiki=wiki) as server:
        backend = make_backend("loopback-wikipedia", {"base_url": server.base_url})

        async def run():
            found = await backend.search("Paul Ryan", limit=3)
            none = await backend.search("Nobody", limit=3)
            server.failures = 2
            with pytest.raises(Exception, match="HTTP 503"):
                await backend.search("Paul Ryan")
            await backend.aclose()
            return found, none

        found, none = asyncio.run(run())
    assert [(r.title, r.snippet, r.url) for r in found] == [
        ("Paul Ryan", "Paul Davis Ryan is an American politician.", f"{server.base_url}/wiki/Paul_Ryan")
    ]
    assert none == [] and found[0].published is None


def test_unknown_tools_and_challenging_labels_are_refused(tmp_path):
    from rwpost.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown tools \\['TinEye'\\]"):
        T2AgentDetector.build({"model": "m", "base_url": "http://127.0.0.1:9/v1", "tools": ["TinEye"]})
    sample = make_sample(8, Label.MIXTURE)
    config = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}
    mixture = RunSpec("t2agent", config=config, setting="T", n_resamples=0, secrets={"api_key": "k"})
    with pytest.raises(ConfigError, match="not Mixture, Outdated"):  # by the runner, from its declared labels
        run([sample], mixture, tmp_path / "run")
    assert not (tmp_path / "run").exists()


# --- MMFakeBench -------------------------------------------------------------------------------------


def test_mmfakebench_reads_the_released_layout_with_both_views(tmp_path):
    from rwpost.evaluate.datasets.mmfakebench import read_mmfakebench

    root = mmfakebench_folder(tmp_path, MMFB)
    real, fake = read_mmfakebench(root, "test")
    assert (real.label, real.extra["fake_cls"], real.image.path) == (
        Label.TRUE, "original", "real/bbc_test_50/BBC_0001.jpg",
    )  # fmt: skip
    assert (fake.label, fake.extra["fake_cls"], fake.category) == (
        Label.FALSE,
        "mismatch",
        "Newsclipings_person_test_50",
    )
    assert (
        real.provenance.source == "MMFakeBench_test.json:2"
        and fake.provenance.source == "MMFakeBench_test.json:10"
    )
    blind = EvalTask.of("T+I", [real]).blind(fake)
    assert blind.extra == {} and blind.label is None and blind.label_original is None


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"gt_answers": ["Maybe"]},
            r":10, field 'gt_answers': expected \['True'\] or \['Fake'\], found \['Maybe'\]",
        ),
        ({"fake_cls": "satire"}, r":10, field 'fake_cls': expected one of original, .*found 'satire'"),
        (
            {"fake_cls": "original"},
            r":10, field 'gt_answers': gt_answers 'Fake' contradicts fake_cls 'original'",
        ),
        ({"text": ""}, r":10, field 'text': expected text, found ''"),
    ],
)
def test_a_broken_mmfakebench_record_is_one_line_naming_file_line_and_field(tmp_path, change, problem):
    from rwpost.errors import RecordError
    from rwpost.evaluate.datasets.mmfakebench import read_mmfakebench

    root = mmfakebench_folder(tmp_path, [MMFB[0], {**MMFB[1], **change}])
    with pytest.raises(RecordError, match=r"MMFakeBench_test\.json" + problem) as caught:
        read_mmfakebench(root, "test")
    assert "\n" not in str(caught.value)


def test_a_cut_mmfakebench_file_and_a_missing_split_are_named(tmp_path):
    from rwpost.errors import ConfigError, RecordError
    from rwpost.evaluate.datasets.mmfakebench import read_mmfakebench

    root = mmfakebench_folder(tmp_path, MMFB, raw=json.dumps(MMFB, indent=4)[:-40])
    with pytest.raises(RecordError, match=r"MMFakeBench_test\.json:\d+: not valid JSON"):
        read_mmfakebench(root, "test")
    with pytest.raises(ConfigError, match=r"MMFakeBench_val\.json: not found"):
        read_mmfakebench(root, "val")


def test_mmfakebench_scores_follow_its_main_eval_only():
    from rwpost.evaluate.datasets.mmfakebench import mmfakebench_scores

    gold = ["original", "mismatch", "mismatch", "textual_veracity_distortion"]
    predicted = ["original", "mismatch", "original", "X"]
    scores = mmfakebench_scores(gold, predicted)
    # 4-class: classes seen original, mismatch, textual, X; precision (1/2 + 1 + 0 + 0) / 4, recall
    # (1 + 1/2 + 0 + 0) / 4, F1 (2/3 + 2/3) / 4; accuracy 2/4
    assert scores["multiclass"] == pytest.approx(
        {"accuracy": 0.5, "precision": 1.5 / 4, "recall": 1.5 / 4, "f1": (4 / 3) / 4}
    )
    # binary: True/Fake/X; gold T F F F, predicted T F T X: precision (1/2 + 1 + 0) / 2, recall (1 + 1/3) / 2
    assert scores["binary"]["accuracy"] == 0.5
    assert scores["binary"]["precision"] == pytest.approx(0.75)
    assert scores["binary"]["recall"] == pytest.approx((1 + 1 / 3) / 2)


def test_t2agent_native_view_on_mmfakebench_scores_both_views(tmp_path):
    from rwpost.evaluate.contract import Prediction
    from rwpost.evaluate.datasets.mmfakebench import mmfakebench_scores, native_class, read_mmfakebench

    root = mmfakebench_folder(tmp_path, MMFB)
    samples = read_mmfakebench(root, "test")
    script = Backbone(
        weights=(0.2, 0.1, 0.7),
        steps={("match", ""): [("Finish", "MISMATCH")]},
        sc={"MISMATCH": 9},
    )
    with FakeLLMServer(script) as llm, SearchServer(news) as search:
        run_spec = spec(llm, search, tmp_path, "T+I", view="native")
        run_spec.image_root = root
        metrics = evaluate(samples, run_spec, tmp_path / "run").dump()
    rows = [Prediction.from_row(r) for r in read_predictions(tmp_path / "run" / "predictions.jsonl").values()]
    # the script refutes every match: both are answered mismatch (fake); the real one is wrong
    assert [native_class(p) for p in rows] == ["mismatch", "mismatch"]
    assert [p.label for p in rows] == [Label.FALSE, Label.FALSE] and metrics["accuracy"] == 0.5
    by_id = {p.id: native_class(p) for p in rows}
    scores = mmfakebench_scores([s.extra["fake_cls"] for s in samples], [by_id[s.id] for s in samples])
    assert scores["multiclass"]["accuracy"] == 0.5 and scores["binary"]["accuracy"] == 0.5


def test_tool_selection_keeps_a_tool_only_when_it_raises_accuracy(tmp_path):
    from rwpost.evaluate.toolkit.toolsets import read_toolset, select_tools, write_toolset

    gains = {"Google": 0.1, "Entity": 0.05, "Counterfactual": -0.02, "ReverseImage": 0.0}
    asked = []

    def accuracy(tools):
        asked.append(tools)
        return 0.5 + sum(gains.get(t, 0.0) for t in tools)

    chosen, steps = select_tools(
        accuracy, ["Wikipedia", "Google", "Counterfactual", "Entity", "ReverseImage"]
    )
    assert chosen == ["Wikipedia", "VQA", "Google", "Entity"]
    assert asked[-1] == ["Wikipedia", "VQA", "Google", "Entity", "ReverseImage"]  # combined, greedily
    assert [s["kept"] for s in steps] == [True, True, False, True, False]
    write_toolset(tmp_path / "toolset.json", chosen, steps)
    assert read_toolset(tmp_path / "toolset.json", list(gains) + ["Wikipedia", "VQA"]) == chosen


AMG_LIKE = [
    {"name": "time", "source": "time_inconsistency", "task": "Check whether the time the text gives fits "
     "the event.", "support": "time consistent", "refute": "TIME INCONSISTENT", "needs_image": False,
     "tools_of": "text"},
    {"name": "fabrication", "source": "image_fabrication", "task": "Check whether the image was fabricated.",
     "support": "IMAGE REAL", "refute": "IMAGE FABRICATED"},
]  # fmt: skip


def amg_like(body):
    """A backbone for :data:`AMG_LIKE`: weights favour ``time``, which refutes with confidence 9."""
    from rwpost.testing.llm import Reply

    schema, user = schema_of(body), message_text(body, "user")
    if schema == "t2agent_init":
        return Reply.answer({"probabilities": [0.8, 0.3]})
    if schema == "t2agent_step":
        answer = "TIME INCONSISTENT" if "time the text gives" in user else "IMAGE REAL"
        return Reply.answer({"candidates": [{"thought": "t", "tool": "Finish", "input": answer}]})
    if schema == "t2agent_score":
        return Reply.answer({"analysis": "ok", "score": 9})
    return Reply(status=500, error=f"unscripted schema {schema}")


def test_a_user_defined_subtask_set_runs_its_sources_and_answers_their_classes(tmp_path):
    """The paper's sub-task nodes are "adaptively pre-defined by the user" (AMG has five sources): a
    configured set is initialised with its own sources, each expansion states its task and answers, the
    winning source is the native answer, and the set enters the run identity."""
    with FakeLLMServer(amg_like) as llm, SearchServer(news) as search:
        run_spec = spec(llm, search, tmp_path, view="native", subtasks=AMG_LIKE)
        evaluate([with_image(5, Label.FALSE)], run_spec, tmp_path / "run")
        init = next(b for b in llm.requests if schema_of(b) == "t2agent_init")
        steps = [message_text(b, "user") for b in llm.requests if schema_of(b) == "t2agent_step"]
    assert init["response_format"]["json_schema"]["schema"]["properties"]["probabilities"]["maxItems"] == 2
    assert "(1) time_inconsistency: Check whether the time" in message_text(init, "user")
    assert "(2) image_fabrication: Check whether the image" in message_text(init, "user")
    [time_step] = steps  # the time sub-task weighs most and refutes at once: early stop
    assert "Task: Check whether the time the text gives fits the event." in time_step
    assert "Finish[TIME CONSISTENT]" in time_step and "Finish[TIME INCONSISTENT]" in time_step
    assert "The news image is attached." not in time_step  # a text sub-task
    row = json.loads((tmp_path / "run" / "predictions.jsonl").read_text())
    assert row["label"] == "False", row["error"]
    assert row["explanation"].splitlines()[0] == "T2Agent answer: time_inconsistency"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "t2agent_subtask.v1" in manifest["prompt_hashes"]
    assert [s["name"] for s in manifest["detector_config"]["subtasks"]] == ["time", "fabrication"]


@pytest.mark.parametrize(
    ("subtasks", "problem"),
    [(["text", "layout"], "unknown sub-tasks ['layout']"), ([], "at least one sub-task"),
     (["text", "text"], "sub-task names repeat")],
)  # fmt: skip
def test_an_unknown_or_repeated_subtask_is_refused(subtasks, problem):
    from rwpost.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(problem)):
        T2AgentDetector.build({"model": "m", "subtasks": subtasks})
